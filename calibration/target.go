package calibration

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/servesim/servesim/internal/workpool"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/model/priors"
	"github.com/servesim/servesim/sim"
)

// Target is a measured source other than a benchmark matrix: a run the fit simulates for every
// candidate parameter set and compares with its measurements, metric by metric (a vllm bench
// serve result file is one: VLLMBenchRun).
type Target interface {
	// Name labels the target in reports.
	Name() string
	// Measured returns the target's metrics with Predicted NaN: the shape Observe returns.
	Measured() []Observation
	// Observe simulates the target on srv (engine randomness seeded with seed) and returns its
	// metrics, predicted and measured, in the order and number of Measured. It may be called
	// from several goroutines at once.
	Observe(srv *sim.Server, seed uint64) ([]Observation, error)
}

// Observation is one metric of a target.
type Observation struct {
	Metric string `json:"metric"`
	// Class picks the metric's weight: "throughput" (Weights.DecodeTotal), "ttft" (TTFT), "tpot"
	// (PerRequest), "itl" (TBT); any other class is reported, not fitted.
	Class string `json:"class"`
	// Weight is the metric's share of its class's weight (0: reported, not fitted).
	Weight    float64 `json:"weight"`
	Predicted float64 `json:"predicted"`
	Measured  float64 `json:"measured"`
}

// MarshalJSON writes NaN as null.
func (o Observation) MarshalJSON() ([]byte, error) {
	f := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		Metric    string   `json:"metric"`
		Class     string   `json:"class"`
		Weight    float64  `json:"weight"`
		Predicted *float64 `json:"predicted"`
		Measured  *float64 `json:"measured"`
	}{o.Metric, o.Class, o.Weight, f(o.Predicted), f(o.Measured)})
}

// UnmarshalJSON reads null as NaN (as MarshalJSON writes it).
func (o *Observation) UnmarshalJSON(b []byte) error {
	var v struct {
		Metric    string   `json:"metric"`
		Class     string   `json:"class"`
		Weight    float64  `json:"weight"`
		Predicted *float64 `json:"predicted"`
		Measured  *float64 `json:"measured"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	f := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	*o = Observation{Metric: v.Metric, Class: v.Class, Weight: v.Weight, Predicted: f(v.Predicted), Measured: f(v.Measured)}
	return nil
}

func (w *Weights) class(c string) float64 {
	switch c {
	case "throughput":
		return w.DecodeTotal
	case "ttft":
		return w.TTFT
	case "tpot":
		return w.PerRequest
	case "itl":
		return w.TBT
	}
	return 0
}

// TargetProblem is a fit to targets: a deployment, the targets, the starting parameters and the
// free ones.
type TargetProblem struct {
	Deployment *deploy.Deployment
	Targets    []Target
	// Base is the starting point; parameters not in Free keep these values.
	Base param.Values
	// Free lists the fitted parameters; nil means DefaultFreeTargets.
	Free []param.ID
	// KVTokens, when positive, is a measured kv_cache_size_tokens (as in Problem).
	KVTokens int
	// Seed for the simulations' engine randomness.
	Seed uint64
}

// DefaultFreeTargets is DefaultFree for a deployment without a matrix: the step-time
// efficiencies and overheads, the API server's times, acceptance with speculative decoding,
// all-reduce with TP > 1 (not the matrix benchmark's readiness timeout).
func DefaultFreeTargets(p *TargetProblem) []param.ID {
	return defaultFree(p.Deployment, p.KVTokens, false)
}

// TargetFit is one target at the start and at the optimum.
type TargetFit struct {
	Name string `json:"name"`
	// Before holds the observations with the starting parameters, After with the fitted ones.
	Before []Observation `json:"before"`
	After  []Observation `json:"after"`
}

// TargetReport is the machine-readable result of a fit to targets.
type TargetReport struct {
	NParameters int                      `json:"n_parameters"`
	Parameters  map[string]ParamEstimate `json:"parameters"`
	Targets     []TargetFit              `json:"targets"`
	Loss        float64                  `json:"loss"`
	Evaluations int                      `json:"evaluations"`
	Starts      int                      `json:"starts"`
	Seed        uint64                   `json:"seed"`
	Converged   bool                     `json:"converged"`
	Status      string                   `json:"status"`
	KVTokens    int                      `json:"kv_tokens,omitempty"`
	// WeightedTargets is the number of weighted observations the fit matched; when the free
	// parameters outnumbered them, Unidentifiable lists the ones left at their starting values.
	WeightedTargets int      `json:"weighted_targets"`
	Unidentifiable  []string `json:"unidentifiable,omitempty"`
	// Warnings: too many free parameters, values far from their priors (FarFromPrior).
	Warnings []string `json:"warnings,omitempty"`
}

// TargetResult is a finished fit to targets.
type TargetResult struct {
	Params  param.Values
	Free    []param.ID
	Report  TargetReport
	Elapsed time.Duration
}

// targetEval simulates every target for a batch of parameter sets, on the workers.
type targetEval struct {
	p       *TargetProblem
	w       Weights
	workers int
	evals   int
	slots   [][]int // per target: the indices of its fitted observations
	shapes  [][]Observation
}

func newTargetEval(p *TargetProblem, w Weights, workers int) *targetEval {
	e := &targetEval{p: p, w: w, workers: workers}
	for _, t := range p.Targets {
		m := t.Measured()
		e.shapes = append(e.shapes, m)
		var idx []int
		for i, o := range m {
			if o.Weight > 0 && w.class(o.Class) > 0 && o.Measured > 0 {
				idx = append(idx, i)
			}
		}
		e.slots = append(e.slots, idx)
	}
	return e
}

func (e *targetEval) nFitted() int {
	n := 0
	for _, s := range e.slots {
		n += len(s)
	}
	return n
}

type targetOut struct {
	srv  *sim.Server
	err  error
	obs  [][]Observation
	errs []error
}

func (e *targetEval) simulate(sets []param.Values) []targetOut {
	outs := make([]targetOut, len(sets))
	type task struct{ set, target int }
	var tasks []task
	for i := range sets {
		srv, err := sim.NewServer(e.p.Deployment, sets[i])
		outs[i] = targetOut{srv: srv, err: err, obs: make([][]Observation, len(e.p.Targets)), errs: make([]error, len(e.p.Targets))}
		if err != nil {
			continue
		}
		for j := range e.p.Targets {
			tasks = append(tasks, task{i, j})
		}
	}
	workpool.Run(len(tasks), e.workers, func(k int) {
		t := tasks[k]
		o := &outs[t.set]
		o.obs[t.target], o.errs[t.target] = e.p.Targets[t.target].Observe(o.srv, e.p.Seed)
	}, nil)
	for i := range outs {
		for _, err := range outs[i].errs {
			if err != nil && outs[i].err == nil {
				outs[i].err = err
			}
		}
	}
	e.evals += len(sets)
	return outs
}

// evaluations is the number of simulations run so far.
func (e *targetEval) evaluations() int { return e.evals }

func (e *targetEval) residuals(o *targetOut) []float64 {
	n := e.nFitted()
	if e.p.KVTokens > 0 {
		n++
	}
	r := make([]float64, n)
	if o.err != nil {
		for i := range r {
			r[i] = 3
		}
		return r
	}
	k := 0
	for j, idx := range e.slots {
		obs := o.obs[j]
		for _, i := range idx {
			x := obs[i]
			r[k] = e.w.class(x.Class) * x.Weight * robust(logErr(x.Predicted, x.Measured), e.w.RobustScale)
			k++
		}
	}
	if e.p.KVTokens > 0 {
		r[k] = 5 * logErr(float64(o.srv.Layout.KVCacheSizeTokens), float64(e.p.KVTokens))
	}
	return r
}

// FitTargets moves the free parameters to minimise the weighted soft-L1 log errors of the targets'
// fitted metrics, with the same transform, prior pull, optimisers, seeded starts and standard
// errors as Fit.
func FitTargets(p *TargetProblem, s *Settings) (*TargetResult, error) {
	if len(p.Targets) == 0 {
		return nil, fmt.Errorf("no targets to fit")
	}
	free := p.Free
	if free == nil {
		free = DefaultFreeTargets(p)
	}
	prior, _ := priors.Of(p.Deployment)
	f, err := newFitSetup(s, p.Base, free, prior)
	if err != nil {
		return nil, err
	}
	st, w := &f.st, f.w
	ev := newTargetEval(p, w, st.Workers)
	if ev.nFitted() == 0 {
		return nil, fmt.Errorf("the targets have no metric to fit (throughput, TTFT, TPOT or ITL with a positive measurement)")
	}
	// More free parameters than weighted targets: the data cannot fix them all. Keep those the
	// data tell apart (at most one per target) and leave the others at their starting values.
	var dropped []param.ID
	var warnings []string
	if n := ev.nFitted(); len(free) > n {
		data := func(sets []param.Values) [][]float64 {
			outs := ev.simulate(sets)
			rs := make([][]float64, len(outs))
			for i := range outs {
				rs[i] = ev.residuals(&outs[i])
			}
			return rs
		}
		keep, drop := identifiable(f, data, f.vc.toU(p.Base), n)
		if len(keep) == 0 {
			return nil, fmt.Errorf("%d free parameters and %d weighted targets: none of the parameters moves the targets", len(free), n)
		}
		var names []string
		for _, id := range drop {
			names = append(names, id.Def().Name)
		}
		warnings = append(warnings, fmt.Sprintf("%d free parameters against %d weighted targets: the data cannot determine them all; fitted the %d they tell apart, fixed at their starting values (%s): %s",
			len(free), n, len(keep), startOf(p), strings.Join(names, ", ")))
		free, dropped = keep, drop
		if f, err = newFitSetup(s, p.Base, free, prior); err != nil {
			return nil, err
		}
	}
	best, err := searchWith[targetOut](f, ev, f.vc.toU(p.Base))
	if err != nil {
		return nil, err
	}
	res := &TargetResult{Params: f.vc.params(best.u), Free: free}
	outs := ev.simulate([]param.Values{p.Base, res.Params})
	if outs[1].err != nil {
		return nil, fmt.Errorf("fitted parameters do not give a runnable server: %w", outs[1].err)
	}
	rep := &res.Report
	rep.NParameters = len(free)
	rep.Parameters = f.estimates(res.Params, &best)
	rep.WeightedTargets = ev.nFitted()
	for _, id := range dropped {
		pe := rep.Parameters[id.Def().Name]
		pe.Unidentifiable = true
		rep.Parameters[id.Def().Name] = pe
		rep.Unidentifiable = append(rep.Unidentifiable, id.Def().Name)
	}
	rep.Warnings = append(warnings, FarFromPrior(rep.Parameters)...)
	for j, t := range p.Targets {
		before := outs[0].obs[j]
		if outs[0].err != nil {
			before = ev.shapes[j]
		}
		rep.Targets = append(rep.Targets, TargetFit{Name: t.Name(), Before: before, After: outs[1].obs[j]})
	}
	rep.Loss = best.loss
	rep.Evaluations = ev.evals
	rep.Starts = st.Starts
	rep.Seed = st.Seed
	rep.Converged = best.conv
	rep.Status = best.why
	rep.KVTokens = p.KVTokens
	res.Elapsed = time.Since(f.start)
	return res, nil
}

// WriteJSON writes the report as indented JSON (servesim fit --report with result files).
func (r *TargetReport) WriteJSON(w io.Writer) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// Note is a one-line account of the fit for the parameter file it produces.
func (r *TargetReport) Note(measured string) string {
	return fmt.Sprintf("servesim fit on %s: %d vllm bench result(s), loss %.4f", measured, len(r.Targets), r.Loss)
}

// WriteTargetSummary prints a fit to targets: the parameters, then each target's metrics with the
// starting and fitted predictions beside the measurement.
func WriteTargetSummary(w io.Writer, r *TargetReport) error {
	fmt.Fprintf(w, "Fitted %d parameters to %d vllm bench result(s), %d weighted targets (%d evaluations, %d start(s), %s); loss %.4f\n",
		r.NParameters, len(r.Targets), r.WeightedTargets, r.Evaluations, r.Starts, r.Status, r.Loss)
	for _, m := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", m)
	}
	fmt.Fprintln(w)
	writeParamTable(w, r.Parameters)
	for _, t := range r.Targets {
		fmt.Fprintf(w, "\n%s\n", t.Name)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "metric\tmeasured\tstart\terror\tfitted\terror\tfit weight\t")
		for i, a := range t.After {
			b := t.Before[i]
			wt := "-"
			if a.Weight > 0 {
				wt = fmt.Sprintf("%g", a.Weight)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", a.Metric, g4(a.Measured), g4(b.Predicted), errPct(b), g4(a.Predicted), errPct(a), wt)
		}
		tw.Flush()
	}
	return nil
}

func g4(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 1000:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

func errPct(o Observation) string {
	if math.IsNaN(o.Predicted) || math.IsNaN(o.Measured) || o.Measured == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*(o.Predicted-o.Measured)/o.Measured)
}

// writeParamTable prints the parameter rows of a fit (as WriteSummary does).
func writeParamTable(w io.Writer, ps map[string]ParamEstimate) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "parameter\tvalue\t± stderr\tunit\tprior\tbounds\t")
	for _, d := range param.Defs() {
		p, ok := ps[d.Name]
		if !ok {
			continue
		}
		se := p.UncertaintyText()
		mark := ""
		if p.AtBound {
			mark = "  <- at bound"
		}
		fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\t%g\t[%g, %g]%s\t\n", d.Name, p.Value, se, d.Unit, p.Prior, p.Lo, p.Hi, mark)
	}
	tw.Flush()
}

// startOf says where a target fit starts from: the deployment's priors where the base equals
// them, else the starting parameter set (a calibration).
func startOf(p *TargetProblem) string {
	prior, _ := priors.Of(p.Deployment)
	if prior == p.Base {
		return "the priors"
	}
	return "the priors, or the calibration the fit starts from"
}
