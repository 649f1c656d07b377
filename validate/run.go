package validate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/servesim/servesim/describe"
	"github.com/servesim/servesim/internal/workpool"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/workload"
)

// Prediction is what the simulation predicts for a row, in the row's metric definitions. NaN:
// not predicted.
type Prediction struct {
	OutputTokS float64
	// The community rows' factors (community.go): mean acceptance length and verifier steps/s
	// of the row's own run, and at C = 1 and 8 for server facts; KV capacity (pages x page
	// width, and vLLM's logical count); a single prefill's prompt tok/s.
	AcceptPerStep, VerifierStepsS                  float64
	AcceptC1, AcceptC8, StepsC1, StepsC8           float64
	KVTokens, KVLogicalTokens                      float64
	PrefillTokS                                    float64
	TTFTMedianMS, TTFTMeanMS, TTFTP90MS, TTFTP99MS float64
	TPOTMedianMS, TPOTMeanMS, TPOTP99MS            float64
	E2EMedianMS, E2EMeanMS, E2EP99MS               float64
	DurationS                                      float64
	Requests, Completed                            int
	// Overloaded is the overload call for open-loop rows (nil for the others), OverloadWhy the
	// numbers it rests on.
	Overloaded  *bool
	OverloadWhy string
}

// ParamsChooser picks a deployment's parameters (scenario.ParamsPolicy does: --params,
// --uncalibrated, else the built-in calibration that matches) and says where they come from.
type ParamsChooser func(d *deploy.Deployment) (param.Values, string, error)

// Options control a validation run.
type Options struct {
	// Params chooses each deployment's parameters (nil: the priors).
	Params ParamsChooser
	// Workers is the number of simulations run at once (0: all CPUs). The output does not depend
	// on it.
	Workers int
	// Seed is the engines' seed (speculative acceptance; none in this corpus).
	Seed uint64
	// StepByStep runs the engines step by step (sim.Server.StepByStep: the reference the default
	// event-driven mode agrees with).
	StepByStep bool
	// Provenance, if set, sums up the parameters' provenance of a deployment (the same policy as
	// Params: scenario.ParamsChoice.Summary); the report then gives each prediction its 80 %
	// interval and checks their coverage.
	Provenance func(d *deploy.Deployment) param.Summary
	// Progress, if set, is called after each simulation with the simulations done, the total and
	// the label of the one just finished (from one goroutine at a time).
	Progress func(done, total int, label string)
}

// Outcome is a case with what was predicted for it, or why it could not be.
type Outcome struct {
	Case *Case
	Pred *Prediction
	// Server describes the simulated deployment; Params where the parameters come from.
	Server, Params string
	// Summary is the parameters' provenance by group (nil: not known; no intervals).
	Summary *param.Summary
}

// Prepared is a case built from something other than a corpus row (a vllm bench serve result
// file): its server is given.
type Prepared struct {
	Case     *Case
	Server   *sim.Server
	Params   string
	Measured Measured
	// Summary is the parameters' provenance (nil: none known).
	Summary *param.Summary
	// Seed seeds the run (the scenario's seed, as 'simulate --measured' runs the same file).
	Seed uint64
}

type job struct {
	cases []*Case
	label string
}

// cost estimates a job's simulation work: tokens to process, over the pipeline's engines.
func (j job) cost() float64 {
	c := j.cases[0]
	r := c.Row
	if r == nil {
		return 0
	}
	if c.Spec != nil && c.Spec.Kind == workload.KindLLMBenchCell {
		// A decode window: its streams' tokens over the window (about 100 tokens/s each).
		return float64(c.Spec.Cell.Concurrency) * c.Spec.Cell.DurationS * 100
	}
	if len(c.factRuns) > 0 {
		return float64(len(c.factRuns)) * 30 * 100 * 4
	}
	n := float64(r.NumRequests)
	if c.Stages != nil {
		n = 0
		for _, s := range c.Stages {
			n += float64(s.Requests)
		}
	}
	return n * (r.InputTokens + r.OutputTokens)
}

// Run simulates every expressed case, in parallel, and returns an outcome per case in the cases'
// order. The outcomes do not depend on Workers: every simulation is single-threaded and seeded,
// and writes only its own slots.
func Run(cases []*Case, o Options) []*Outcome {
	out := make([]*Outcome, len(cases))
	index := map[*Case]int{}
	for i, c := range cases {
		out[i] = &Outcome{Case: c}
		index[c] = i
	}
	jobs := jobsOf(cases)
	// Longest first, so that the last simulations to start are short ones (the makespan on a few
	// workers); results go to their cases' slots, so the order changes nothing else.
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].cost() > jobs[j].cost() })
	workpool.Run(len(jobs), o.Workers, func(i int) {
		j := jobs[i]
		runJob(j, o, func(c *Case) *Outcome { return out[index[c]] })
	}, func(done, total int) {
		if o.Progress != nil {
			o.Progress(done, total, "")
		}
	})
	return out
}

func runJob(j job, o Options, outcome func(*Case) *Outcome) {
	c := j.cases[0]
	srv, params, err := buildServer(c, o.Params)
	if err != nil {
		msg := err.Error()
		if strings.Contains(msg, "nothing left for KV cache") || strings.Contains(msg, "less than one request") {
			msg += " (the source ran this deployment: servesim's memory reserves are too large for it; the activation reserve is activation_buffers x max_num_batched_tokens x hidden x 2 bytes per GPU)"
		}
		for _, x := range j.cases {
			x.refuse(ReasonBuild, "%s", msg)
		}
		return
	}
	srv.StepByStep = o.StepByStep
	desc := describe.Deployment(srv.Deployment)
	var sum *param.Summary
	if o.Provenance != nil {
		s := o.Provenance(srv.Deployment)
		sum = &s
	}
	for _, x := range j.cases {
		o := outcome(x)
		o.Server, o.Params, o.Summary = desc, params, sum
		approximations(x, &srv.Deployment.Engine)
	}
	if c.Stages != nil {
		st, err := runStages(srv, c.Stages, c.stageLengths, c.stageGroups, c.stagePerGroup, o.Seed)
		if err != nil {
			for _, x := range j.cases {
				x.refuse(ReasonRun, "%v", err)
			}
			return
		}
		for _, x := range j.cases {
			outcome(x).Pred = st[x.Stage].prediction(x.CountedOutput, x.DerivedTPOT)
		}
		return
	}
	p, err := c.simulate(srv, c.Spec, o.Seed)
	if err != nil {
		c.refuse(ReasonRun, "%v", err)
		return
	}
	outcome(c).Pred = p
}

// simulate runs the case's workload on srv (data-parallel replicas as the server has them) and
// returns its prediction in the row's definitions; a server-facts row runs its decode windows
// and reads the KV layout.
func (c *Case) simulate(srv *sim.Server, spec *workload.Spec, seed uint64) (*Prediction, error) {
	if c.Row != nil && c.Row.WorkloadKind == "server-facts" {
		return c.simulateFacts(srv, seed)
	}
	m, err := workload.Run(srv, spec, workload.Options{Seed: seed})
	if err != nil {
		return nil, err
	}
	return fromMetrics(m, c), nil
}

// RunPrepared simulates prepared cases (result files) like Run.
func RunPrepared(ps []*Prepared, o Options) []*Outcome {
	out := make([]*Outcome, len(ps))
	workpool.Run(len(ps), o.Workers, func(i int) {
		p := ps[i]
		out[i] = &Outcome{Case: p.Case, Server: describe.Deployment(p.Server.Deployment), Params: p.Params, Summary: p.Summary}
		m, err := workload.Run(p.Server, p.Case.Spec, workload.Options{Seed: p.Seed})
		if err != nil {
			p.Case.refuse(ReasonRun, "%v", err)
			return
		}
		out[i].Pred = fromMetrics(m, p.Case)
	}, func(done, total int) {
		if o.Progress != nil {
			o.Progress(done, total, "")
		}
	})
	return out
}

// buildServer resolves the case's flags with vLLM's defaults for its version, GPU and model, and
// builds the server (sim.NewServer, with its guards; pipeline and data parallel as the engine
// simulates them).
func buildServer(c *Case, choose ParamsChooser) (*sim.Server, string, error) {
	d, err := c.deployment()
	if err != nil {
		return nil, "", err
	}
	p, from := param.Priors(), "priors"
	if choose != nil {
		if p, from, err = choose(d); err != nil {
			return nil, "", err
		}
	}
	srv, err := c.server(d, p)
	if err != nil {
		return nil, "", err
	}
	return srv, from, nil
}

// deployment resolves the case's flags with vLLM's defaults for its version, GPU and model.
func (c *Case) deployment() (*deploy.Deployment, error) {
	e, _, err := deploy.Resolve(c.Args, deploy.ModelGPU{Model: c.Model, GPU: &c.GPU})
	if err != nil {
		return nil, err
	}
	return &deploy.Deployment{Model: c.Model, Drafter: c.Drafter, Hardware: hardware.Machine{GPU: c.GPU, Count: e.GPUs()}, Engine: e}, nil
}

// server builds the case's server on d with p (sim.NewServer: data-parallel replicas, pipeline
// stages and their guards as the engine simulates them), with the workload-level values the
// row's prompt sets (a coding prompt: code_prompt 1). It does not change the case.
func (c *Case) server(d *deploy.Deployment, p param.Values) (*sim.Server, error) {
	if c.codePrompt {
		p[param.CodePrompt] = 1
	}
	return sim.NewServer(d, p)
}

// approximations notes, per row, where the V1 step policy stands in for V0's scheduling.
func approximations(c *Case, e *deploy.EngineConfig) {
	if c.Scoring != Absolute || !deploy.IsV0(e.Version) {
		return
	}
	if !e.ChunkedPrefill {
		c.note("V0 without chunked prefill runs prefill-only steps ahead of decodes; simulated as whole-prompt admission (budget %d tokens) into mixed steps (approximation)", e.MaxNumBatchedTokens)
	} else {
		c.note("V0 chunked prefill (budget %d tokens) simulated by the V1 policy: running requests first, then waiting prompts in chunks", e.MaxNumBatchedTokens)
	}
}

// nanPrediction is a prediction of nothing yet.
func nanPrediction() *Prediction {
	n := math.NaN()
	return &Prediction{OutputTokS: n, TTFTMedianMS: n, TTFTMeanMS: n, TTFTP90MS: n, TTFTP99MS: n, TPOTMedianMS: n, TPOTMeanMS: n, TPOTP99MS: n,
		E2EMedianMS: n, E2EMeanMS: n, E2EP99MS: n, DurationS: n, AcceptPerStep: n, VerifierStepsS: n, AcceptC1: n, AcceptC8: n, StepsC1: n, StepsC8: n,
		KVTokens: n, KVLogicalTokens: n, PrefillTokS: n}
}

// fromMetrics is a workload run's prediction in the row's definitions.
func fromMetrics(m *workload.Metrics, c *Case) *Prediction {
	p := nanPrediction()
	p.OutputTokS, p.DurationS, p.Requests, p.Completed = m.OutputTokS, m.DurationS, m.Requests, m.Completed
	p.TTFTMedianMS, p.TTFTMeanMS, p.TTFTP90MS, p.TTFTP99MS = m.TTFT.P50, m.TTFT.Mean, m.TTFT.P90, m.TTFT.P99
	p.TPOTMedianMS, p.TPOTMeanMS, p.TPOTP99MS = m.TPOT.P50, m.TPOT.Mean, m.TPOT.P99
	p.E2EMedianMS, p.E2EMeanMS, p.E2EP99MS = m.E2E.P50, m.E2E.Mean, m.E2E.P99
	if m.VerifierSteps > 0 && m.DurationS > 0 {
		p.AcceptPerStep = float64(m.OutputTokens) / float64(m.VerifierSteps)
		p.VerifierStepsS = float64(m.VerifierSteps) / m.DurationS
	}
	if c.genRate && m.Completed > 0 && usable(m.TPOT.P50) {
		// Completion tokens / (last - first streamed token): per request out / ((out - 1) TPOT).
		out := float64(m.OutputTokens) / float64(m.Completed)
		p.OutputTokS = out / math.Max(out-1, 1) * 1000 / m.TPOT.P50
		if usable(p.AcceptPerStep) {
			p.VerifierStepsS = p.OutputTokS / p.AcceptPerStep
		}
	}
	if c.prefillTokens > 0 && usable(m.TTFT.P50) {
		p.PrefillTokS = float64(c.prefillTokens) / m.TTFT.P50 * 1000
	}
	if c.Spec != nil && c.Spec.Kind == workload.KindOffline {
		// No client latencies offline: only the throughput is measured.
		p.TTFTMedianMS, p.TTFTMeanMS, p.TTFTP90MS, p.TTFTP99MS = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		p.TPOTMedianMS, p.TPOTMeanMS, p.TPOTP99MS = math.NaN(), math.NaN(), math.NaN()
		p.E2EMedianMS, p.E2EMeanMS, p.E2EP99MS = math.NaN(), math.NaN(), math.NaN()
	}
	if c.Spec != nil && c.Spec.Kind == workload.KindVLLMBench && c.Spec.VLLM.RequestRate > 0 {
		rate := c.Spec.VLLM.RequestRate
		served := 0.0
		if m.DurationS > 0 {
			served = float64(m.Completed) / m.DurationS
		}
		over := served < servedFraction*rate
		p.Overloaded = &over
		p.OverloadWhy = fmt.Sprintf("served %.2f req/s of %g offered (rule: below %.0f%%)", served, rate, 100*servedFraction)
	}
	return p
}

// servedFraction: an open-loop Poisson run is overloaded when it completes requests at less than
// this fraction of the offered rate (completed / duration, measured and predicted alike).
const servedFraction = 0.9

// MeasuredOverloaded is the corpus's overload call for an open-loop row: notes that start with
// OVER CAPACITY, failed requests, or (Poisson rows) a completion rate below 90 % of the offered
// rate. ok is false for rows without an open-loop rate.
func MeasuredOverloaded(r *Row) (over bool, why string, ok bool) {
	switch r.WorkloadKind {
	case "constant-rate", "poisson-rate":
	default:
		return false, "", false
	}
	if strings.HasPrefix(strings.TrimSpace(r.Notes), "OVER CAPACITY") {
		return true, "notes: OVER CAPACITY", true
	}
	if r.NumFailed > 0 {
		return true, fmt.Sprintf("%d failed", r.NumFailed), true
	}
	if r.WorkloadKind == "poisson-rate" && r.Measured.DurationS > 0 && r.NumCompleted > 0 && !math.IsInf(r.RequestRate, 1) {
		served := float64(r.NumCompleted) / r.Measured.DurationS
		return served < servedFraction*r.RequestRate, fmt.Sprintf("served %.2f req/s of %g offered", served, r.RequestRate), true
	}
	return false, "no OVER CAPACITY note, no failed request", true
}
