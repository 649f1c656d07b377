package calibration

import (
	"fmt"
	"math"
	"strings"

	"github.com/servesim/servesim/model/param"
)

// identifiable chooses, among free, at most n parameters the data can tell apart: a greedy
// column-pivoted Gram-Schmidt over the Jacobian of the data's residuals at the start u0 (the
// parameter whose effect on the residuals is largest after removing the effects of those already
// chosen, until n are chosen or the rest move the residuals by less than 1e-3 of the largest
// effect). The others are left at their starting values. data simulates a batch of parameter
// sets and returns each one's weighted data residuals (without the pull to the priors).
func identifiable(f *fitSetup, data func([]param.Values) [][]float64, u0 []float64, n int) (keep, drop []param.ID) {
	resid := func(us [][]float64) [][]float64 {
		sets := make([]param.Values, len(us))
		for i, u := range us {
			sets[i] = f.vc.params(u)
		}
		return data(sets)
	}
	J, _ := jacobian(u0, resid, f.st.Step)
	m, k := J.Dims()
	cols := make([][]float64, k)
	for j := range cols {
		cols[j] = make([]float64, m)
		for i := 0; i < m; i++ {
			if v := J.At(i, j); !math.IsNaN(v) && !math.IsInf(v, 0) {
				cols[j][i] = v
			}
		}
	}
	norm := func(v []float64) float64 { return math.Sqrt(sumSq(v)) }
	largest := 0.0
	for _, c := range cols {
		largest = math.Max(largest, norm(c))
	}
	chosen := make([]bool, k)
	var basis [][]float64
	for len(basis) < n {
		best, bestNorm := -1, 1e-3*largest
		for j, c := range cols {
			if chosen[j] {
				continue
			}
			if v := norm(c); v > bestNorm {
				best, bestNorm = j, v
			}
		}
		if best < 0 || bestNorm == 0 {
			break
		}
		chosen[best] = true
		q := make([]float64, m)
		for i := range q {
			q[i] = cols[best][i] / bestNorm
		}
		basis = append(basis, q)
		for j, c := range cols {
			if chosen[j] {
				continue
			}
			var dot float64
			for i := range c {
				dot += c[i] * q[i]
			}
			for i := range c {
				c[i] -= dot * q[i]
			}
		}
	}
	for j, id := range f.free {
		if chosen[j] {
			keep = append(keep, id)
		} else {
			drop = append(drop, id)
		}
	}
	return keep, drop
}

// FarFromPrior lists the fitted parameters that ended far from their priors (a scale parameter
// 3x or more above or below it, another by more than a third of its range and 40 % of its
// prior), each with the
// term it enters: such a value absorbs what the model leaves out of that term for these data
// (or what the data hold beyond it), and should not be read as a measurement of its meaning.
func FarFromPrior(ps map[string]ParamEstimate) []string {
	var out []string
	for _, d := range param.Defs() {
		p, ok := ps[d.Name]
		if !ok || !p.Fitted || p.Prior == 0 {
			continue
		}
		far, how := false, ""
		if d.Log {
			r := p.Value / p.Prior
			if r >= 3 || r <= 1.0/3 {
				far, how = true, fmt.Sprintf("%.3gx its prior %.4g %s", r, p.Prior, d.Unit)
			}
		} else if dv := math.Abs(p.Value - p.Prior); dv > (d.Hi-d.Lo)/3 && dv >= 0.4*math.Abs(p.Prior) {
			far, how = true, fmt.Sprintf("%+.3g from its prior %.4g", p.Value-p.Prior, p.Prior)
		}
		if far {
			out = append(out, fmt.Sprintf("%s = %.4g %s is %s: it absorbs what the model leaves out of the %s term (%s) for these measurements; read it as a fitted correction, not as a measured value",
				d.Name, p.Value, d.Unit, how, d.Term, strings.TrimSpace(d.Meaning)))
		}
	}
	return out
}
