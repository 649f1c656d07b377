package calibration

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/servesim/servesim/model/param"
)

// fitSetup is what a fit to one deployment (a measured matrix, Fit; vllm bench results,
// FitTargets) shares before its search: the settings with their defaults, the objective's
// weights, the coordinates of the free parameters and the priors in them.
type fitSetup struct {
	st     Settings
	w      Weights
	free   []param.ID
	vc     *vector
	prior  param.Values
	uPrior []float64
	start  time.Time
}

// newFitSetup applies the defaults (method lm, DefaultStarts starts, step 0.05, DefaultWeights)
// and checks the free parameters (1..MaxFree) and the starting values.
func newFitSetup(s *Settings, base param.Values, free []param.ID, priors param.Values) (*fitSetup, error) {
	f := &fitSetup{start: time.Now()}
	if s != nil {
		f.st = *s
	}
	if f.st.Method == "" {
		f.st.Method = "lm"
	}
	if f.st.Starts <= 0 {
		f.st.Starts = DefaultStarts
	}
	if f.st.Step <= 0 {
		f.st.Step = 0.05
	}
	f.w = DefaultWeights()
	if f.st.Weights != nil {
		f.w = *f.st.Weights
	}
	if len(free) == 0 || len(free) > MaxFree {
		return nil, fmt.Errorf("%d free parameters: want 1..%d", len(free), MaxFree)
	}
	if err := base.Validate(); err != nil {
		return nil, err
	}
	f.free = free
	f.vc = &vector{base: base, free: free}
	f.prior = priors
	f.uPrior = f.vc.toU(priors)
	return f, nil
}

// progress reports the best loss so far with the evaluations evals counts.
func (f *fitSetup) progress(evals func() int) func(stage string, loss float64) {
	best := math.Inf(1)
	return func(stage string, loss float64) {
		if loss < best {
			best = loss
		}
		if f.st.Progress != nil {
			f.st.Progress(Progress{Stage: stage, Evaluations: evals(), Best: best, Elapsed: time.Since(f.start)})
		}
	}
}

// residuals is the fit's residual function over batches of coordinate vectors: the data's
// residuals (data simulates the parameter sets) followed by a weak pull toward the physical
// priors (a MAP estimate), so that parameters the data cannot see stay near their priors instead
// of drifting to a bound.
func (f *fitSetup) residuals(data func(sets []param.Values) [][]float64) func([][]float64) [][]float64 {
	return func(us [][]float64) [][]float64 {
		sets := make([]param.Values, len(us))
		for i, u := range us {
			sets[i] = f.vc.params(u)
		}
		rs := data(sets)
		for i := range rs {
			for j := range us[i] {
				rs[i] = append(rs[i], f.w.Prior*(us[i][j]-f.uPrior[j]))
			}
		}
		return rs
	}
}

// fitEvaluator is a fit's simulations of one kind of measurement (O: what one simulation gives):
// a batch of parameter sets run on worker goroutines, one run's weighted residuals, and the
// simulations run so far.
type fitEvaluator[O any] interface {
	simulate(sets []param.Values) []O
	residuals(o *O) []float64
	evaluations() int
}

// searchWith runs the search on ev's residuals (with the pull toward the priors) from u0,
// reporting progress with ev's evaluation count.
func searchWith[O any](f *fitSetup, ev fitEvaluator[O], u0 []float64) (searchResult, error) {
	resid := f.residuals(func(sets []param.Values) [][]float64 {
		outs := ev.simulate(sets)
		rs := make([][]float64, len(outs))
		for i := range outs {
			rs[i] = ev.residuals(&outs[i])
		}
		return rs
	})
	return f.search(u0, resid, f.progress(ev.evaluations))
}

// searchResult is the optimum of a search.
type searchResult struct {
	u    []float64 // coordinates of the free parameters
	loss float64
	conv bool
	why  string
	// stderr is each free parameter's standard error in the fit's coordinates (NaN for a
	// scanned one).
	stderr []float64
	// bound is a scanned parameter's stated bound in the fit's coordinates (by index into free):
	// the grid points whose loss is within ScanTolerance of the best, widened by one grid step
	// on each side (the grid's resolution).
	bound map[int][2]float64
}

// ScanTolerance is the relative loss within which a scanned parameter's grid points count as
// equally good: its stated bound spans them.
const ScanTolerance = 0.01

// search minimises the sum of squares of resid over the free parameters' coordinates from u0:
// scanned parameters (param.Def.Scan) on a grid, the others by st.Method from st.Starts seeded
// starting points (the first u0), each for a few iterations, the best then to convergence; then
// the scanned ones again at the optimum, and the standard errors from the Jacobian there.
func (f *fitSetup) search(u0 []float64, resid func([][]float64) [][]float64, progress func(string, float64)) (searchResult, error) {
	st, free := &f.st, f.free
	rng := rand.New(rand.NewPCG(st.Seed, 0x666974))
	// Scanned parameters set an integer, so the loss is piecewise constant in them and finite
	// differences cannot see across a step: they are chosen on a grid, and the gradient methods
	// move the others.
	var scanIdx, stepIdx []int
	for j, id := range free {
		if id.Def().Scan {
			scanIdx = append(scanIdx, j)
		} else {
			stepIdx = append(stepIdx, j)
		}
	}
	if len(stepIdx) == 0 {
		return searchResult{}, fmt.Errorf("every free parameter is scanned (%v): at least one must be continuous", free)
	}
	// sub keeps the stepped coordinates of a full vector; full puts them back into a copy of at.
	sub := func(u []float64) []float64 {
		out := make([]float64, len(stepIdx))
		for i, j := range stepIdx {
			out[i] = u[j]
		}
		return out
	}
	full := func(v, at []float64) []float64 {
		out := append([]float64(nil), at...)
		for i, j := range stepIdx {
			out[j] = v[i]
		}
		return out
	}
	residAt := func(at []float64) func([][]float64) [][]float64 {
		return func(vs [][]float64) [][]float64 {
			us := make([][]float64, len(vs))
			for i, v := range vs {
				us[i] = full(v, at)
			}
			return resid(us)
		}
	}
	bounds := map[int][2]float64{}
	scan := func(u []float64, stage string) ([]float64, float64) {
		u = append([]float64(nil), u...)
		loss := math.NaN()
		for _, j := range scanIdx {
			// The current value is the first candidate, so that the scan moves only to a strictly
			// better point: where the parameter has no effect (a switch position while its ratio
			// is 1) every point ties and the value stays.
			cand := make([][]float64, ScanPoints+1)
			cand[0] = append([]float64(nil), u...)
			for i := 1; i < len(cand); i++ {
				t := (float64(i-1) + 0.5) / ScanPoints
				cand[i] = append([]float64(nil), u...)
				cand[i][j] = math.Log(t / (1 - t))
			}
			rs := resid(cand)
			best := 0
			for i := range rs {
				if sumSq(rs[i]) < sumSq(rs[best]) {
					best = i
				}
			}
			u, loss = cand[best], sumSq(rs[best])
			// The stated bound: the grid points as good as the best, one grid step wider.
			lo, hi := math.Inf(1), math.Inf(-1)
			for i := 1; i < len(cand); i++ {
				if sumSq(rs[i]) <= loss*(1+ScanTolerance) {
					lo, hi = math.Min(lo, float64(i-1)), math.Max(hi, float64(i-1))
				}
			}
			t := func(k float64) float64 {
				k = math.Max(0, math.Min(ScanPoints-1, k))
				x := (k + 0.5) / ScanPoints
				return math.Log(x / (1 - x))
			}
			// The chosen value's own place on the grid counts too (it may lie between points).
			k := ScanPoints/(1+math.Exp(-u[j])) - 0.5
			lo, hi = math.Min(lo, math.Floor(k)), math.Max(hi, math.Ceil(k))
			bounds[j] = [2]float64{math.Min(u[j], t(lo-1)), math.Max(u[j], t(hi+1))}
			progress(stage, loss)
		}
		return u, loss
	}
	optimise := func(u []float64, iters int, stage string) (searchResult, error) {
		r := searchResult{u: u}
		var v []float64
		var err error
		switch st.Method {
		case "lm":
			v, r.loss, r.conv, r.why = levenbergMarquardt(sub(u), residAt(u), st.Step, iters, func(l float64) { progress(stage, l) })
		case "bfgs", "nelder-mead":
			v, r.loss, r.conv, r.why, err = gonumMinimize(st.Method, sub(u), residAt(u), st.Step, iters, func(l float64) { progress(stage, l) })
		default:
			err = fmt.Errorf("method %q: want lm, bfgs or nelder-mead", st.Method)
		}
		if err == nil {
			r.u = full(v, u)
		}
		return r, err
	}
	if len(scanIdx) > 0 {
		u0, _ = scan(u0, "scan")
	}
	maxIter := iterOr(st.MaxIter, 12)
	if st.Method == "nelder-mead" {
		maxIter = iterOr(st.MaxIter, 40*len(free))
	}
	scout := maxIter
	if st.Starts > 1 {
		scout = max(2, maxIter/4)
	}
	best := searchResult{loss: math.Inf(1)}
	for k := 0; k < st.Starts; k++ {
		u := append([]float64(nil), u0...)
		if k > 0 {
			for _, i := range stepIdx {
				u[i] += rng.NormFloat64() * 0.8
			}
			// A scanned parameter's grid value chosen at the start may not matter there (a
			// switch position while its ratio is 1): later starts draw it from the grid.
			for _, j := range scanIdx {
				t := (float64(rng.IntN(ScanPoints)) + 0.5) / ScanPoints
				u[j] = math.Log(t / (1 - t))
			}
		}
		r, err := optimise(u, scout, fmt.Sprintf("start %d/%d", k+1, st.Starts))
		if err != nil {
			return searchResult{}, err
		}
		if r.loss < best.loss {
			best = r
		}
	}
	if st.Starts > 1 && !best.conv {
		r, err := optimise(best.u, maxIter-scout, "refine best")
		if err != nil {
			return searchResult{}, err
		}
		if r.loss <= best.loss {
			best = r
		}
	}
	// The scanned parameters again, at the optimum of the others; if that helps, the others once
	// more.
	if len(scanIdx) > 0 {
		if u, loss := scan(best.u, "rescan"); loss < best.loss {
			best = searchResult{u: u, loss: loss}
			r, err := optimise(u, scout, "refine after rescan")
			if err != nil {
				return searchResult{}, err
			}
			if r.loss <= best.loss {
				best = r
			}
		}
	}
	// Uncertainty from the Jacobian at the optimum (delta method through the transform), over the
	// stepped parameters; a scanned one has no standard error.
	J, r0 := jacobian(sub(best.u), residAt(best.u), st.Step)
	progress("uncertainty", sumSq(r0))
	subErr := paramStdErr(J, r0, len(stepIdx))
	best.stderr = make([]float64, len(free))
	for j := range best.stderr {
		best.stderr[j] = math.NaN()
	}
	for i, j := range stepIdx {
		best.stderr[j] = subErr[i]
	}
	best.bound = bounds
	return best, nil
}

// estimates reports every parameter at the optimum: value, bounds, prior and, for the free ones,
// the standard error (from the fit's coordinates through the transform) and whether the value
// sits within 1 % of the range from a bound, in the coordinates the fit moves it in (log for
// scale parameters).
func (f *fitSetup) estimates(params param.Values, r *searchResult) map[string]ParamEstimate {
	out := map[string]ParamEstimate{}
	for i, d := range param.Defs() {
		pe := ParamEstimate{Value: params[i], Unit: d.Unit, Lo: d.Lo, Hi: d.Hi, StdErr: -1, Prior: f.prior[i], Meaning: d.Meaning}
		for j, id := range f.free {
			if id != d.ID {
				continue
			}
			pe.Fitted = true
			if b, ok := r.bound[j]; ok {
				// A scanned parameter: no standard error, a stated bound.
				at := func(x float64) float64 {
					u := append([]float64(nil), r.u...)
					u[j] = x
					return f.vc.params(u)[i]
				}
				pe.BoundLo, pe.BoundHi = math.Min(at(b[0]), at(b[1])), math.Max(at(b[0]), at(b[1]))
			}
			se := r.stderr[j] * math.Abs(dvdu(&d, r.u[j]))
			if !math.IsNaN(se) && !math.IsInf(se, 0) {
				pe.StdErr = se
			}
			g := func(v float64) float64 { return v }
			if d.Log {
				g = math.Log
			}
			lo, hi, v := g(d.Lo), g(d.Hi), g(params[i])
			pe.AtBound = v <= lo+0.01*(hi-lo) || v >= hi-0.01*(hi-lo)
		}
		out[d.Name] = pe
	}
	return out
}
