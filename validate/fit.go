package validate

import (
	"fmt"
	"math"
	"sort"

	"github.com/servesim/servesim/calibration"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/model/priors"
	"github.com/servesim/servesim/workload"
)

// The corpus as sources of a multi-source fit (calibration.FitMulti): each source's rows become
// jobs (a case, or the stages of one constant-rate experiment), simulated for every candidate
// parameter set and scored as the report scores them: output tok/s, TPOT and TTFT on the
// primary statistic where the report summarises it (not the latencies of overloaded rows, nothing
// of rows with failed requests), the overload call of open-loop rows, and the ratios of a
// ratio-scored source. To keep a fit affordable a source can be capped to a number of jobs
// (evenly spaced in the source's order) and each job to a number of requests (FitOptions); the
// choices are the source's Notes.

// FitOptions control how rows become fit sources.
type FitOptions struct {
	// MaxJobs caps the simulations per source (0: every row): jobs evenly spaced in the file's
	// order are kept.
	MaxJobs int
	// MaxRequests caps each simulation's requests (0: as measured): a closed loop keeps
	// max(MaxRequests, 3 x concurrency) requests, a constant-rate experiment its stages scaled
	// alike (rates kept, stages shorter, but each at least minStageS seconds long), an offline
	// batch or a Poisson run its first MaxRequests prompts.
	MaxRequests int
	Weights     calibration.Weights
	Seed        uint64
	StepByStep  bool
}

// fitJob is one simulation of a fit source.
type fitJob struct {
	job
	stages []Stage        // the stages run (shortened), for constant-rate experiments
	spec   *workload.Spec // the workload run (shortened), for the others
}

// minStageS is the shortest a capped constant-rate stage runs, in seconds (at its rate): long
// enough for the server to reach its steady state (a request's end-to-end time is seconds at the
// rates that keep up) and for a cycled prompt set to be cached, as in the measured stage of
// thousands of requests. Scaled to the cap alone, inference-sim's 8 and 20 req/s stages ran 7 s
// each: 57 requests did not cycle its 100 prompts once, the prefix cache stayed cold, and a fit
// on them predicted the full runs worse than the priors (TPOT MAPE 6.3 % against 4.3 %; 3.3 %
// with 60 s stages).
const minStageS = 60

// shorten caps the job's requests; it returns a note when it did.
func (j *fitJob) shorten(max_ int) string {
	c := j.cases[0]
	j.stages, j.spec = c.Stages, c.Spec
	if max_ <= 0 {
		return ""
	}
	if c.Stages != nil {
		total := 0
		for _, s := range c.Stages {
			total += s.Requests
		}
		if total <= max_ {
			return ""
		}
		f := float64(max_) / float64(total)
		j.stages = make([]Stage, len(c.Stages))
		var parts []string
		for i, s := range c.Stages {
			n := math.Min(float64(s.Requests), math.Max(math.Max(20, math.Round(float64(s.Requests)*f)), math.Round(s.RatePerS*minStageS)))
			j.stages[i] = Stage{RatePerS: s.RatePerS, Requests: int(n)}
			parts = append(parts, fmt.Sprintf("%d", j.stages[i].Requests))
		}
		return fmt.Sprintf("%s: stages shortened to %v requests (of %d in all)", j.label, parts, total)
	}
	if c.Spec == nil {
		// Server facts: decode windows of fixed length.
		return ""
	}
	s := *c.Spec
	switch {
	case s.Kind == workload.KindClosed:
		n := min(s.Closed.Requests, max(max_, 3*s.Closed.Concurrency))
		if n == s.Closed.Requests {
			return ""
		}
		j.spec = &s
		s.Closed.Requests = n
		return fmt.Sprintf("%s: %d of %d requests", j.label, n, c.Spec.Closed.Requests)
	case s.VLLM != nil && len(s.VLLM.Prompts()) > max_:
		b := *s.VLLM
		all := s.VLLM.Prompts()
		b.SetPrompts(append([]workload.BenchPrompt(nil), all[:max_]...))
		b.NumPrompts = max_
		s.VLLM = &b
		j.spec = &s
		return fmt.Sprintf("%s: %d of %d requests", j.label, max_, len(all))
	}
	return ""
}

// predict simulates the job with p, without changing its cases.
func (j *fitJob) predict(p param.Values, o *FitOptions) ([]*Prediction, error) {
	c := j.cases[0]
	d, err := c.deployment()
	if err != nil {
		return nil, err
	}
	srv, err := c.server(d, p)
	if err != nil {
		return nil, err
	}
	srv.StepByStep = o.StepByStep
	out := make([]*Prediction, len(j.cases))
	if j.stages != nil {
		st, err := runStages(srv, j.stages, c.stageLengths, c.stageGroups, c.stagePerGroup, o.Seed)
		if err != nil {
			return nil, err
		}
		for i, x := range j.cases {
			out[i] = st[x.Stage].prediction(x.CountedOutput, x.DerivedTPOT)
		}
		return out, nil
	}
	pr, err := c.simulate(srv, j.spec, o.Seed)
	if err != nil {
		return nil, err
	}
	out[0] = pr
	return out, nil
}

// jobsOf groups expressed cases into simulations, for Run and the fit (a constant-rate experiment's
// stages are one simulation).
func jobsOf(cases []*Case) []job {
	var jobs []job
	groups := map[string]int{}
	for _, c := range cases {
		if !c.Expressed() {
			continue
		}
		if c.Stages != nil {
			if j, ok := groups[c.Group]; ok {
				jobs[j].cases = append(jobs[j].cases, c)
				continue
			}
			groups[c.Group] = len(jobs)
			jobs = append(jobs, job{cases: []*Case{c}, label: c.Group})
			continue
		}
		jobs = append(jobs, job{cases: []*Case{c}, label: c.ID})
	}
	return jobs
}

func ratioScored(jobs []job) bool {
	for _, j := range jobs {
		if j.cases[0].Scoring != Ratio {
			return false
		}
	}
	return len(jobs) > 0
}

// residual slots per absolute case: output tok/s, TPOT, TTFT, overload call, and the community
// rows' acceptance per verifier step, verifier steps/s, prefill tok/s and KV capacity.
const fitSlots = 8

// FitSources turns rows into the sources of a multi-source fit, one per corpus source in order of
// first appearance, keeping the cases keep accepts (nil: all). Rows that cannot be expressed, and
// deployments that do not start at their priors, are skipped with their reasons (in Notes).
func FitSources(rows []Row, keep func(*Case) bool, o FitOptions) []*calibration.MultiSource {
	var order []string
	bySource := map[string][]Row{}
	for _, r := range rows {
		if _, ok := bySource[r.Source]; !ok {
			order = append(order, r.Source)
		}
		bySource[r.Source] = append(bySource[r.Source], r)
	}
	var out []*calibration.MultiSource
	for _, name := range order {
		if s := fitSource(name, bySource[name], keep, o); s != nil {
			out = append(out, s)
		}
	}
	return out
}

func fitSource(name string, rows []Row, keep func(*Case) bool, o FitOptions) *calibration.MultiSource {
	src := &calibration.MultiSource{Name: name}
	all := Map(rows, nil)
	var cases []*Case
	for _, c := range all {
		if keep != nil && !keep(c) {
			continue
		}
		if !c.Expressed() {
			src.Notes = append(src.Notes, fmt.Sprintf("skipped %s: %s (%s)", c.ID, c.ReasonClass, c.Reason))
			continue
		}
		if c.Scoring == Ratio && c.otherServer() {
			// Another engine's server stands in as vLLM's current release: its ratios would
			// pull that release's engine-level values toward another engine's.
			src.Notes = append(src.Notes, fmt.Sprintf("skipped %s: another engine's server, scored by validate as ratios, not fitted", c.ID))
			continue
		}
		cases = append(cases, c)
	}
	jobs := jobsOf(cases)
	if o.MaxJobs > 0 && len(jobs) > o.MaxJobs && ratioScored(jobs) {
		// Ratios need both of their rows: keep evenly spaced ratios, each with its two rows.
		var outs []*Outcome
		for _, j := range jobs {
			outs = append(outs, &Outcome{Case: j.cases[0], Pred: &Prediction{OutputTokS: j.cases[0].Row.Measured.OutputTokS}})
		}
		rs := Ratios(outs)
		byID := map[string]int{}
		for i, j := range jobs {
			byID[j.cases[0].ID] = i
		}
		want := map[int]bool{}
		for k := 0; k < len(rs) && len(want) < o.MaxJobs-1; k++ {
			r := rs[k*len(rs)/max(o.MaxJobs/2, 1)%len(rs)]
			want[byID[r.Num]], want[byID[r.Den]] = true, true
		}
		var kept []job
		for i, j := range jobs {
			if want[i] {
				kept = append(kept, j)
			}
		}
		src.Notes = append(src.Notes, fmt.Sprintf("capped to %d of %d simulations: the rows of %d of %d ratios, evenly spaced", len(kept), len(jobs), min(o.MaxJobs/2, len(rs)), len(rs)))
		jobs = kept
	}
	if o.MaxJobs > 0 && len(jobs) > o.MaxJobs {
		// The rows that publish KV capacity are the only ones that pin the memory reserves, and
		// cost a layout rather than a run: all are kept, and the cap spaces the others evenly.
		var kv, rest []int
		for i, j := range jobs {
			if f := j.cases[0].facts; usable(f.KVTokens) || usable(f.KVLogicalTokens) {
				kv = append(kv, i)
			} else {
				rest = append(rest, i)
			}
		}
		n := max(o.MaxJobs-len(kv), 1)
		keep := map[int]bool{}
		for _, i := range kv {
			keep[i] = true
		}
		for k := 0; k < n && k < len(rest); k++ {
			keep[rest[k*len(rest)/n]] = true
		}
		kept := make([]job, 0, len(keep))
		for i, j := range jobs {
			if keep[i] {
				kept = append(kept, j)
			}
		}
		every := float64(len(rest)) / float64(min(n, len(rest)))
		note := fmt.Sprintf("capped to %d of %d simulations (every %.1fth in file order)", len(kept), len(jobs), every)
		switch {
		case len(kv) > 0 && len(rest) == 0:
			note = fmt.Sprintf("all %d simulations kept: every one publishes KV capacity", len(kept))
		case len(kv) > 0:
			note = fmt.Sprintf("capped to %d of %d simulations: the %d that publish KV capacity, and every %.1fth of the others in file order", len(kept), len(jobs), len(kv), every)
		}
		src.Notes = append(src.Notes, note)
		jobs = kept
	}
	var fjs []*fitJob
	for _, j := range jobs {
		fj := &fitJob{job: j}
		c := j.cases[0]
		d, err := c.deployment()
		if err == nil {
			p, _ := priors.Of(d)
			_, err = c.server(d, p)
		}
		if err != nil {
			for _, x := range j.cases {
				src.Notes = append(src.Notes, fmt.Sprintf("skipped %s: %s (%v)", x.ID, ReasonBuild, err))
			}
			continue
		}
		if n := fj.shorten(o.MaxRequests); n != "" {
			src.Notes = append(src.Notes, "shortened "+n)
		}
		fjs = append(fjs, fj)
		var base param.Values // workload level: different prompts (same_prompt 0)
		opt := o
		// Decode cells (the community client's windows and server facts) send one prompt to
		// every stream: their routing is routing_alpha_same_prompt's (the cell sets same_prompt).
		same := (c.Spec != nil && c.Spec.Kind == workload.KindLLMBenchCell) || len(c.factRuns) > 0
		src.Jobs = append(src.Jobs, calibration.MultiJob{Label: j.label, Deployment: d, Base: base, Cost: fj.cost(),
			SamePrompt: same, CodePrompt: c.codePrompt, RatioOnly: c.Scoring == Ratio,
			KVCapacity: usable(c.facts.KVTokens) || usable(c.facts.KVLogicalTokens),
			Run:        func(p param.Values) (any, error) { return fj.predict(p, &opt) }})
	}
	if len(src.Jobs) == 0 {
		return nil
	}
	// Residual slots: fitSlots per absolute case; one per ratio of a ratio-scored source (the
	// ratios the measured rows form).
	var slotCases []*Case
	ratioSlot := map[string]int{}
	n := 0
	var outs []*Outcome
	for _, fj := range fjs {
		for _, c := range fj.cases {
			if c.Scoring == Ratio {
				outs = append(outs, &Outcome{Case: c, Pred: &Prediction{OutputTokS: c.Row.Measured.OutputTokS}})
				continue
			}
			slotCases = append(slotCases, c)
			n += fitSlots
		}
	}
	var keys []string
	for _, r := range Ratios(outs) {
		keys = append(keys, ratioKey(r))
	}
	sort.Strings(keys)
	for _, k := range keys {
		ratioSlot[k] = n
		n++
	}
	if len(keys) > 0 {
		src.Notes = append(src.Notes, fmt.Sprintf("scored on %d ratios", len(keys)))
	}
	src.NResid = n
	w := o.Weights
	src.Score = func(results []any, errs []error, r []float64) {
		var ratioOuts []*Outcome
		abs := 0
		for ji, fj := range fjs {
			var preds []*Prediction
			if errs[ji] == nil {
				preds, _ = results[ji].([]*Prediction)
			}
			for ci, c := range fj.cases {
				var p *Prediction
				if preds != nil {
					p = preds[ci]
				}
				if c.Scoring == Ratio {
					if p != nil {
						ratioOuts = append(ratioOuts, &Outcome{Case: c, Pred: p})
					}
					continue
				}
				s := r[abs*fitSlots : (abs+1)*fitSlots]
				abs++
				if p == nil {
					for i := range s {
						s[i] = 3
					}
					continue
				}
				scoreCase(c, p, &w, s)
			}
		}
		got := map[int]bool{}
		for _, x := range Ratios(ratioOuts) {
			if i, ok := ratioSlot[ratioKey(x)]; ok {
				r[i] = w.DecodeTotal * robustLog(x.Predicted, x.Measured, w.RobustScale)
				got[i] = true
			}
		}
		for _, i := range ratioSlot {
			if !got[i] {
				r[i] = 3
			}
		}
	}
	return src
}

func ratioKey(r RatioScore) string { return r.Kind + "|" + r.Num + "|" + r.Den }

// scoreCase fills an absolute case's residual slots: output tok/s, TPOT and TTFT on the primary
// statistics the report summarises, and the overload call.
func scoreCase(c *Case, p *Prediction, w *calibration.Weights, s []float64) {
	m := &c.Row.Measured
	over, _, open := MeasuredOverloaded(c.Row)
	for _, cmp := range compare(m, p, over, c.Row.NumFailed > 0) {
		if !cmp.Primary || !cmp.Scored {
			continue
		}
		switch cmp.Family {
		case FamOutput:
			s[0] = w.DecodeTotal * robustLog(cmp.Predicted, cmp.Measured, w.RobustScale)
		case FamTPOT:
			s[1] = w.PerRequest * robustLog(cmp.Predicted, cmp.Measured, w.RobustScale)
		case FamTTFT:
			s[2] = w.TTFT * robustLog(cmp.Predicted, cmp.Measured, w.RobustScale)
		}
	}
	if open && p.Overloaded != nil && *p.Overloaded != over {
		s[3] = w.Status
	}
	// The community rows' factors, each in its own slot (a speculative prediction's acceptance
	// and verifier step rate apart), weighted as the decode throughput they make up.
	for _, cmp := range factComparisons(c, p, c.Row.NumFailed > 0) {
		if !cmp.Primary || !cmp.Scored {
			continue
		}
		i := 4
		switch cmp.Family {
		case FamAccept:
			i = 4
		case FamSteps:
			i = 5
		case FamPrefill:
			i = 6
		case FamKV:
			i = 7
		}
		wt := w.DecodeTotal
		if cmp.Family == FamPrefill {
			wt = w.TTFT
		}
		s[i] = wt * robustLog(cmp.Predicted, cmp.Measured, w.RobustScale)
	}
}

// robustLog is the soft-L1 log error of calibration's objective.
func robustLog(pred, meas, scale float64) float64 {
	if !(pred > 0) || !(meas > 0) || math.IsInf(pred, 0) {
		return 0
	}
	r := math.Log(pred / meas)
	if scale <= 0 {
		return r
	}
	return math.Copysign(scale*math.Sqrt(2*(math.Sqrt(1+(r/scale)*(r/scale))-1)), r)
}

// Predict maps the rows keep accepts, simulates them with the parameters choose gives and scores
// them: the report of a held-out part of the corpus.
func Predict(rows []Row, keep func(*Case) bool, o Options) *Report {
	cases := Map(rows, nil)
	var kept []*Case
	for _, c := range cases {
		if keep == nil || keep(c) {
			kept = append(kept, c)
		}
	}
	return NewReport(Run(kept, o))
}

// HeldOut summarises one source of the report as held-out figures: output tok/s and TPOT MAPE,
// TTFT median APE (the report scores latencies only where the server keeps up), the overload
// calls, and the MAPE of the source's ratios.
func (r *Report) HeldOut(source string) calibration.HeldOut {
	h := calibration.HeldOut{Source: source, OutputMAPE: math.NaN(), TPOTMAPE: math.NaN(), TTFTMdAPE: math.NaN(), RatioMAPE: math.NaN(), Params: r.Params}
	for _, s := range r.Sources {
		if s.Source != source {
			continue
		}
		h.Rows = s.Expressed
		for _, m := range s.Metrics {
			switch m.Family {
			case FamOutput:
				h.OutputMAPE, h.NOutput = m.Accuracy.MAPE, m.Accuracy.N
			case FamTPOT:
				h.TPOTMAPE, h.NTPOT = m.Accuracy.MAPE, m.Accuracy.N
			case FamTTFT:
				h.TTFTMdAPE, h.NTTFT = m.Accuracy.MedianAPE, m.Accuracy.N
			default:
				if isFactFamily(m.Family) && m.Accuracy.N > 0 {
					h.Factors = append(h.Factors, calibration.FactorMAPE{Family: m.Family, MAPE: m.Accuracy.MAPE, N: m.Accuracy.N})
				}
			}
		}
		h.OverloadRows = s.OverloadRows
		h.OverloadRight = s.Overload.Both + s.Overload.Neither
	}
	if r.Intervals != nil {
		for _, c := range r.Intervals.Shipped.Cells {
			if c.Source == source && c.Metric == "all" {
				h.Inside, h.NInterval = c.Inside, c.N
			}
		}
	}
	src := map[string]string{}
	for _, c := range r.Cases {
		src[c.ID] = c.Source
	}
	var errs []float64
	for _, x := range r.Ratios {
		if src[x.Num] == source {
			errs = append(errs, x.Err())
		}
	}
	if len(errs) > 0 {
		a := accuracy(errs)
		h.RatioMAPE, h.NRatio = a.MAPE, a.N
	}
	return h
}
