package calibration

import (
	"fmt"
	"github.com/servesim/servesim/internal/stats"
	"math"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/sim"
)

// MatrixSource is a measured matrix (the seed) as a source of a multi-source fit: one job, the
// whole matrix on the problem's deployment, scored as Fit scores it (training cells of p, the
// exclusions left out), with the workload-level values of p.Base.
func MatrixSource(name string, p *Problem, w Weights) *MultiSource {
	ev := newEvaluator(p, w, 1)
	cost := 0.0
	for _, c := range p.Measured.Cells() {
		cost += float64(c.ContextTokens) * float64(max(c.Concurrency, 1))
	}
	src := &MultiSource{Name: name, NResid: ev.nResiduals()}
	src.Jobs = []MultiJob{{Label: name, Deployment: p.Deployment, Base: p.Base, SamePrompt: true, Cost: cost,
		Run: func(v param.Values) (any, error) {
			o := ev.run(v)
			return &o, o.err
		}}}
	src.Score = func(results []any, errs []error, r []float64) {
		o, _ := results[0].(*outcome)
		if o == nil {
			o = &outcome{err: errs[0]}
		}
		copy(r, ev.residuals(o))
	}
	src.Notes = append(src.Notes, fmt.Sprintf("%d training cells (train %q, %d exclusion filter(s))", len(ev.train), p.Train.String(), len(p.Exclude)))
	return src
}

// TargetSource is vllm bench result files (Targets) on one deployment as a source: one job per
// target, scored as FitTargets scores them.
func TargetSource(name string, d *deploy.Deployment, targets []Target, base param.Values, seed uint64, w Weights) *MultiSource {
	tp := &TargetProblem{Deployment: d, Targets: targets, Seed: seed}
	ev := newTargetEval(tp, w, 1)
	src := &MultiSource{Name: name, NResid: ev.nFitted()}
	for i := range targets {
		t := targets[i]
		src.Jobs = append(src.Jobs, MultiJob{Label: t.Name(), Deployment: d, Base: base, Cost: 1,
			Run: func(v param.Values) (any, error) {
				srv, err := sim.NewServer(d, v)
				if err != nil {
					return nil, err
				}
				return t.Observe(srv, seed)
			}})
	}
	src.Score = func(results []any, errs []error, r []float64) {
		k := 0
		for j, idx := range ev.slots {
			obs, _ := results[j].([]Observation)
			for _, i := range idx {
				if errs[j] != nil || obs == nil {
					r[k] = 3
				} else {
					x := obs[i]
					r[k] = w.class(x.Class) * x.Weight * robust(logErr(x.Predicted, x.Measured), w.RobustScale)
				}
				k++
			}
		}
	}
	return src
}

// HeldOut is the accuracy on data a fit did not see: output throughput and time per output
// token MAPE, TTFT median APE where the server keeps up, the overload calls, and (a
// ratio-scored source) the ratios' MAPE. Percent; NaN when there is nothing to score.
type HeldOut struct {
	Fold   string `json:"fold"`
	Source string `json:"source"`
	Rows   int    `json:"rows"`
	// OutputMAPE over NOutput rows, TPOTMAPE over NTPOT, TTFTMdAPE over NTTFT.
	OutputMAPE float64 `json:"output_tok_s_mape_pct"`
	NOutput    int     `json:"n_output"`
	TPOTMAPE   float64 `json:"tpot_mape_pct"`
	NTPOT      int     `json:"n_tpot"`
	TTFTMdAPE  float64 `json:"ttft_median_ape_pct"`
	NTTFT      int     `json:"n_ttft"`
	// OverloadRight of OverloadRows open-loop calls agree (predicted overloaded exactly where
	// measured overloaded).
	OverloadRight int     `json:"overload_right"`
	OverloadRows  int     `json:"overload_rows"`
	RatioMAPE     float64 `json:"ratio_mape_pct"`
	NRatio        int     `json:"n_ratio"`
	// Inside of NInterval measured values lie inside their 80 % prediction interval (the
	// shipped widths, the provenance a user of the fit would see; absolute-scored rows).
	Inside    int    `json:"interval_inside,omitempty"`
	NInterval int    `json:"interval_n,omitempty"`
	Params    string `json:"params"`
	// Factors are the families a source scores apart beside these (acceptance per verifier
	// step, verifier steps/s, prefill tok/s, KV capacity), those it has values of.
	Factors []FactorMAPE `json:"factors,omitempty"`
}

// FactorMAPE is one factor family's MAPE (percent) over N values.
type FactorMAPE struct {
	Family string  `json:"family"`
	MAPE   float64 `json:"mape_pct"`
	N      int     `json:"n"`
}

// MatrixHeldOut scores a predicted matrix against the measured one: decode cells' total tok/s
// (output throughput), time between tokens (TPOT), TTFT where both ran and are Valid (the server
// keeps up), and the status call (Valid against Requests queued / Over capacity) as the overload
// call. Cells the problem excludes are left out.
func MatrixHeldOut(p *Problem, pred *matrix.Matrix) HeldOut {
	h := HeldOut{Source: "seed matrix"}
	var out, tpot, ttft []float64
	pm := map[matrix.Key]matrix.Cell{}
	for _, c := range pred.Cells() {
		pm[c.Key()] = c
	}
	for _, m := range p.Measured.Cells() {
		if m.Phase != matrix.Decode || p.excluded(&m) {
			continue
		}
		h.Rows++
		c, ok := pm[m.Key()]
		if !ok {
			continue
		}
		if m.Status.Ran() {
			h.OverloadRows++
			if (c.Status == matrix.Valid) == (m.Status == matrix.Valid) {
				h.OverloadRight++
			}
		}
		if !c.Status.Ran() || !m.Status.Ran() {
			continue
		}
		ape := func(a, b float64) (float64, bool) {
			if !(a > 0) || !(b > 0) || math.IsNaN(a) || math.IsNaN(b) {
				return 0, false
			}
			return math.Abs(a-b) / b, true
		}
		if e, ok := ape(c.TotalTokS, m.TotalTokS); ok {
			out = append(out, e)
		}
		if e, ok := ape(c.TBTms, m.TBTms); ok {
			tpot = append(tpot, e)
		}
		if m.Status == matrix.Valid && c.Status == matrix.Valid {
			if e, ok := ape(c.TTFTms, m.TTFTms); ok {
				ttft = append(ttft, e)
			}
		}
	}
	h.OutputMAPE, h.NOutput = 100*stats.Mean(out), len(out)
	h.TPOTMAPE, h.NTPOT = 100*stats.Mean(tpot), len(tpot)
	h.TTFTMdAPE, h.NTTFT = 100*stats.Median(ttft), len(ttft)
	h.RatioMAPE = math.NaN()
	return h
}

// Predict runs the matrix of p with the parameters, for MatrixHeldOut.
func (p *Problem) Predict(v param.Values) (*matrix.Matrix, error) {
	ev := newEvaluator(p, DefaultWeights(), 1)
	o := ev.run(v)
	return o.matrix, o.err
}
