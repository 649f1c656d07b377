package calibration

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/servesim/servesim/internal/workpool"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/model/priors"
)

// A multi-source fit (FitMulti) fits one parameter set to several measured sources at once: the
// seed matrix, corpus tables, vllm bench result files. Each parameter is shared along its level
// (model/param): a gpu-level parameter has one value per GPU the data covers, an engine-level one
// per engine and version, a model-level one per model. Each such value (an Entry) is pulled
// toward its prior (the GPU generation's for gpu-level parameters) by a Gaussian penalty, so a
// GPU the data does not cover keeps its prior, and one the data covers only a little stays near
// it.

// MultiJob is one simulation of a multi-source fit: a deployment and what to run on it.
type MultiJob struct {
	Label      string
	Deployment *deploy.Deployment
	// Base holds the workload-level values the job runs with (same_prompt); every other value
	// comes from the deployment's priors and the fitted entries.
	Base param.Values
	// SamePrompt: the job's requests share one prompt (the seed matrix), so the MoE routing
	// concentration fitted is routing_alpha_same_prompt instead of routing_alpha.
	SamePrompt bool
	// RatioOnly: the job is scored only through ratios between runs of another engine
	// (TensorRT-LLM): it tells how throughput scales, not its level.
	RatioOnly bool
	// CodePrompt: the job's prompt asks for code (code_prompt 1), so its acceptance depends on
	// accept_code_ratio, which it then fits.
	CodePrompt bool
	// KVCapacity: the job is scored on the server's measured KV capacity, which pins the
	// engine's memory reserves (non_torch_gib, cudagraph_gib, and sparse_workspace_entries
	// for a sparse-MLA model), so it fits them.
	KVCapacity bool
	// Cost estimates the job's simulation work (any unit; longest jobs start first).
	Cost float64
	// Run simulates the job with the parameters and returns what the source's Score reads. It
	// may be called from several goroutines at once.
	Run func(p param.Values) (any, error)
}

// MultiSource is one measured source: its jobs and how their results become residuals.
type MultiSource struct {
	Name string
	Jobs []MultiJob
	// NResid is the length of the source's residual vector (fixed, so that Jacobians line up).
	NResid int
	// Score writes the source's residuals into r (length NResid, zeroed) from its jobs' results,
	// in the order of Jobs (errs[i] non-nil: the job failed).
	Score func(results []any, errs []error, r []float64)
	// Notes say how the source was read: rows skipped with their reasons, rows capped, workloads
	// shortened.
	Notes []string
}

// MultiProblem is a multi-source fit.
type MultiProblem struct {
	Sources []*MultiSource
	// Free chooses a job's fitted parameters (nil: multiFree, the ones DefaultFree would fit on
	// the job's deployment alone, less the GPU's for a run of vLLM's V0 engine).
	Free func(j *MultiJob) []param.ID
}

// free is job j's fitted parameters under the problem.
func (p *MultiProblem) free(j *MultiJob) []param.ID {
	if p.Free != nil {
		return p.Free(j)
	}
	return multiFree(j)
}

// multiFree is the default free list of a multi-source job: defaultFree on its deployment, except
// that a run of vLLM's V0 engine (before 0.8) calibrates no GPU-level value. servesim runs V0
// deployments on V1's scheduler with V0's CPU costs (priors.ForEngine), an approximation: a V0
// run's residual is mostly the engine's, and put on its GPU's kernel efficiencies it would be
// carried to every V1 run on that GPU. Measured on the corpus before this rule, leave-one-source-
// out holding inference-sim (V1 on H100) out fitted H100's entries to dstack's V0 runs alone and
// mispredicted inference-sim's time per output token by 28 % against 4 % at the Hopper priors.
// A V0 run still calibrates its engine's and its model's entries.
func multiFree(j *MultiJob) []param.ID {
	d := j.Deployment
	free := defaultFree(d, 0, j.SamePrompt)
	if j.CodePrompt && d.Engine.SpecTokens() > 0 {
		free = append(free, param.AcceptCodeRatio)
	}
	if j.KVCapacity {
		free = append(free, param.NonTorchGiB, param.CUDAGraphGiB)
		if d.Model.HasKind(arch.AttnSparseMLA) {
			// Sparse MLA's long-context workspace is the third reserve: decode context
			// parallel divides it and not the others, so runs at two DCP sizes tell it apart.
			free = append(free, param.SparseWorkspaceEntries)
		}
	}
	if !d.RunsVLLMV0() {
		return free
	}
	kept := free[:0]
	for _, id := range free {
		if id.Def().Level != param.LevelGPU {
			kept = append(kept, id)
		}
	}
	return kept
}

// Entry is one fitted value: a parameter for one key of its level.
type Entry struct {
	ID  param.ID `json:"-"`
	Key string   `json:"key"`
	// Prior is the value the penalty pulls toward (the GPU generation's prior for gpu-level
	// parameters) and Sigma its standard deviation in the fit's coordinate (log for scale
	// parameters); Band says where Sigma comes from.
	Prior float64 `json:"prior"`
	Sigma float64 `json:"sigma"`
	Band  string  `json:"band"`
	// Jobs counts the simulations the value enters (the data that sees it), AbsJobs those of
	// them scored on absolute values (not RatioOnly).
	Jobs    int `json:"jobs"`
	AbsJobs int `json:"abs_jobs"`
}

// Name is "parameter[key]".
func (e *Entry) Name() string { return fmt.Sprintf("%s[%s]", e.ID.Def().Name, e.Key) }

// EntryEstimate is a fitted entry.
type EntryEstimate struct {
	Entry
	Param string  `json:"parameter"`
	Level string  `json:"level"`
	Value float64 `json:"value"`
	// StdErr in the parameter's unit (-1: not available); Seen is false when no simulation's
	// residual moved with the value, which then stays at its prior.
	StdErr float64 `json:"stderr"`
	Seen   bool    `json:"seen"`
}

// MultiResult is a finished multi-source fit.
type MultiResult struct {
	Entries     []EntryEstimate
	Loss        float64
	DataLoss    float64
	Evaluations int // simulations run
	Converged   bool
	Status      string
	Elapsed     time.Duration
	Sources     []string
	// Support is, per GPU generation, what the fit's absolute-scored runs cover (model
	// families, attention kinds, weight formats): the measured support of a prediction made
	// with the fit's values alone (ProvenanceFor).
	Support map[hardware.Generation]hardware.Support
}

// ParamsFor returns the parameters a deployment runs with under the fit: its priors (its GPU
// generation's, its engine's, its model's), with every fitted entry whose key matches one of the
// deployment's, and the description of what was fitted for it.
//
// A GPU without entries takes, as a parameter file's sets are applied (--params), the entries of
// the stock card it is run off (a memory-clock offset, a power cap), else of the one GPU of its
// generation in the fit, else of the one stock card of its generation: transferred. A GPU whose
// entries only ratio-scored runs of another engine saw (AbsJobs 0) counts as without entries
// when such a transfer exists: ratios fix how throughput scales on it, not its level.
func (r *MultiResult) ParamsFor(d *deploy.Deployment) (param.Values, string) {
	p, _ := priors.Of(d)
	k := priors.Keys(d)
	levels := map[param.Level]bool{}
	gpuKey, transferred := r.gpuKeyFor(d), false
	if gpuKey != k.GPU {
		transferred = true
	}
	for _, e := range r.Entries {
		key := k.Key(e.ID.Def().Level)
		if e.ID.Def().Level == param.LevelGPU {
			key = gpuKey
		}
		if key != "" && e.Key == key {
			p[e.ID] = e.Value
			levels[e.ID.Def().Level] = true
		}
	}
	var parts []string
	for _, l := range []param.Level{param.LevelGPU, param.LevelEngine, param.LevelModel} {
		if levels[l] {
			if l == param.LevelGPU && transferred {
				parts = append(parts, fmt.Sprintf("%s %s (transferred from %s)", l, k.Key(l), gpuKey))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s", l, k.Key(l)))
		}
	}
	if len(parts) == 0 {
		return p, "priors (no fitted value for this GPU, engine or model)"
	}
	return p, "multi-source fit (" + strings.Join(parts, ", ") + "), priors elsewhere"
}

// ProvenanceFor is the provenance summary of ParamsFor's values for d, as a parameter file of the
// fit would give it: a value fitted on d's own GPU, engine or model is calibrated, one from
// another GPU of its generation transferred, the rest priors. Its 80 % intervals are the
// widths a user of the fit would be shown.
func (r *MultiResult) ProvenanceFor(d *deploy.Deployment) param.Summary {
	_, prov := priors.Of(d)
	k := priors.Keys(d)
	gpuKey := r.gpuKeyFor(d)
	for _, e := range r.Entries {
		lvl := e.ID.Def().Level
		key, kind := k.Key(lvl), param.OriginCalibrated
		if lvl == param.LevelGPU {
			key = gpuKey
			if gpuKey != k.GPU {
				kind = param.OriginTransferred
			}
		}
		if key != "" && e.Key == key {
			prov[e.ID] = param.Origin{Kind: kind, Detail: "multi-source fit (" + e.Key + ")"}
		}
	}
	return priors.SummarizeIn(d, &prov, r.Support[d.Hardware.GPU.Generation])
}

// gpuKeyFor is the GPU key whose entries apply to d (ParamsFor): its own, else the transferred
// one, else "".
func (r *MultiResult) gpuKeyFor(d *deploy.Deployment) string {
	own := d.Hardware.GPU.Name
	keys := map[string]bool{} // GPUs with entries seen by absolute-scored runs
	ratioOnly := false        // own has entries, seen by ratio-scored runs only
	for _, e := range r.Entries {
		if e.ID.Def().Level != param.LevelGPU {
			continue
		}
		if e.AbsJobs > 0 {
			keys[e.Key] = true
		} else if e.Key == own && e.Jobs > 0 {
			ratioOnly = true
		}
	}
	if keys[own] {
		return own
	}
	if t := r.transferKey(d, keys); t != "" {
		return t
	}
	if ratioOnly {
		return own
	}
	return ""
}

// transferKey is the GPU d's entries are transferred from (gpuKeyFor), among keys; "" for none.
func (r *MultiResult) transferKey(d *deploy.Deployment, keys map[string]bool) string {
	own := d.Hardware.GPU.Name
	if base, derived := hardware.BaseName(own); derived && keys[base] {
		return base
	}
	gen := d.Hardware.GPU.Generation
	if gen == "" {
		return ""
	}
	cat := hardware.BuiltinCatalog()
	var same, stock []string
	for key := range keys {
		base, derived := hardware.BaseName(key)
		g, err := cat.Find(base)
		if err != nil || g.Generation != gen {
			continue
		}
		same = append(same, key)
		if !derived {
			stock = append(stock, key)
		}
	}
	switch {
	case len(same) == 1:
		return same[0]
	case len(stock) == 1:
		return stock[0]
	}
	return ""
}

// sigmaOf is a prior's standard deviation in the fit's coordinate g (log for scale parameters),
// from the prior's band when it has one, else a quarter of the parameter's bounds. A GPU
// generation's band is the interval its value is believed to lie in (model/hardware.Prior),
// drawn around public kernel profiles (Vidur's H100/A100 GEMMs, which the generation priors meet
// within 6-9 % median APE: `servesim kernels`), so it is taken as +-2 sd; an engine or model
// prior's band is an order-of-magnitude range from public write-ups (priors.ForEngine) and
// is taken as +-1 sd. The difference matters where a GPU is covered by one source only: with
// the GPU's band as +-1 sd, a source's engine-specific error (dstack's V0 runs on H100) was
// cheaper to put on the GPU's kernel efficiencies than on its engine, and then mispredicted
// every other source on that GPU.
func sigmaOf(d *param.Def, o param.Origin) (float64, string) {
	if o.Hi > o.Lo && o.Lo > 0 || (o.Hi > o.Lo && !d.Log) {
		sds := 1.0
		if d.Level == param.LevelGPU {
			sds = 2
		}
		s := (gfun(d, o.Hi) - gfun(d, o.Lo)) / (2 * sds)
		if s > 0 {
			return s, fmt.Sprintf("prior band [%.3g, %.3g] as +-%g sd", o.Lo, o.Hi, sds)
		}
	}
	return (gfun(d, d.Hi) - gfun(d, d.Lo)) / 4, fmt.Sprintf("bounds [%g, %g] / 4", d.Lo, d.Hi)
}

// multiJob is a job prepared for the fit.
type multiJob struct {
	src, idx int // source and index within it
	job      *MultiJob
	base     param.Values
	entries  []int // entries applied to the job's parameters
	affects  []int // entries the job's simulation depends on (in its free list)
}

type multiFit struct {
	p       *MultiProblem
	w       Weights
	workers int
	jobs    []multiJob
	entries []Entry
	ids     []param.ID
	evals   int
	// offsets of each source's residuals in the data part
	offsets []int
	nData   int
	// tick is called (from one goroutine at a time) after each simulation with the count so far.
	tick func(evals int)
}

func newMultiFit(p *MultiProblem, w Weights, workers int) (*multiFit, error) {
	f := &multiFit{p: p, w: w, workers: workers}
	index := map[string]int{}
	for si, s := range p.Sources {
		f.offsets = append(f.offsets, f.nData)
		f.nData += s.NResid
		for ji := range s.Jobs {
			j := &s.Jobs[ji]
			d := j.Deployment
			base, prov := priors.Of(d)
			for _, def := range param.Defs() {
				if def.Level == param.LevelWorkload {
					base[def.ID] = j.Base[def.ID]
				}
			}
			mj := multiJob{src: si, idx: ji, job: j, base: base}
			free := p.free(j)
			k := priors.Keys(d)
			for _, id := range free {
				def := id.Def()
				key := k.Key(def.Level)
				if key == "" {
					continue
				}
				name := def.Name + "[" + key + "]"
				if _, ok := index[name]; !ok {
					sig, band := sigmaOf(&def, prov[id])
					index[name] = len(f.entries)
					f.entries = append(f.entries, Entry{ID: id, Key: key, Prior: base[id], Sigma: sig, Band: band})
				}
			}
			f.jobs = append(f.jobs, mj)
		}
	}
	// Every job takes every entry of its keys; its simulation depends on those in its free list.
	for i := range f.jobs {
		mj := &f.jobs[i]
		k := priors.Keys(mj.job.Deployment)
		free := p.free(mj.job)
		inFree := map[param.ID]bool{}
		for _, id := range free {
			inFree[id] = true
		}
		for e := range f.entries {
			en := &f.entries[e]
			if en.Key == k.Key(en.ID.Def().Level) {
				mj.entries = append(mj.entries, e)
				if inFree[en.ID] {
					mj.affects = append(mj.affects, e)
					en.Jobs++
					if !mj.job.RatioOnly {
						en.AbsJobs++
					}
				}
			}
		}
	}
	if len(f.jobs) == 0 {
		return nil, fmt.Errorf("no simulation to fit: every source is empty")
	}
	if len(f.entries) == 0 {
		return nil, fmt.Errorf("no parameter to fit")
	}
	return f, nil
}

// support is what the fit's absolute-scored jobs cover, per GPU generation (their deployments'
// Runs): ratio-only jobs tell how throughput scales, not whether its level is right, and add
// nothing.
func (f *multiFit) support() map[hardware.Generation]hardware.Support {
	out := map[hardware.Generation]hardware.Support{}
	for i := range f.jobs {
		j := f.jobs[i].job
		if j.RatioOnly {
			continue
		}
		g := j.Deployment.Hardware.GPU.Generation
		out[g] = out[g].Add(priors.Runs(j.Deployment))
	}
	return out
}

// params is job i's parameter set at the entry values vals.
func (f *multiFit) params(i int, vals []float64) param.Values {
	mj := &f.jobs[i]
	p := mj.base
	for _, e := range mj.entries {
		p[f.entries[e].ID] = vals[e]
	}
	return p
}

type jobOut struct {
	res any
	err error
}

// run simulates the given (job, values) tasks on the workers, longest first.
func (f *multiFit) run(jobs []int, vals [][]float64) []jobOut {
	out := make([]jobOut, len(jobs))
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return f.jobs[jobs[order[a]]].job.Cost > f.jobs[jobs[order[b]]].job.Cost })
	base := f.evals
	workpool.Run(len(jobs), f.workers, func(k int) {
		i := order[k]
		j := jobs[i]
		p := f.params(j, vals[i])
		r, err := f.jobs[j].job.Run(p)
		out[i] = jobOut{r, err}
	}, func(done, _ int) {
		if f.tick != nil {
			f.tick(base + done)
		}
	})
	f.evals += len(jobs)
	return out
}

// score turns every job's output into the data residuals.
func (f *multiFit) score(outs []jobOut) []float64 {
	r := make([]float64, f.nData)
	start := 0
	for si, s := range f.p.Sources {
		n := len(s.Jobs)
		res := make([]any, n)
		errs := make([]error, n)
		for i := 0; i < n; i++ {
			res[i], errs[i] = outs[start+i].res, outs[start+i].err
		}
		s.Score(res, errs, r[f.offsets[si]:f.offsets[si]+s.NResid])
		start += n
	}
	return r
}

// scoreSource rescores source si only, into r (a copy of the data residuals).
func (f *multiFit) scoreSource(si int, outs []jobOut, r []float64) {
	s := f.p.Sources[si]
	start := 0
	for k := 0; k < si; k++ {
		start += len(f.p.Sources[k].Jobs)
	}
	n := len(s.Jobs)
	res := make([]any, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		res[i], errs[i] = outs[start+i].res, outs[start+i].err
	}
	seg := r[f.offsets[si] : f.offsets[si]+s.NResid]
	for i := range seg {
		seg[i] = 0
	}
	s.Score(res, errs, seg)
}

// priorResid is the penalty of the free entries: RobustScale x (g(v) - g(prior)) / sigma, so
// that a log error of RobustScale in one metric weighs as much as one prior standard deviation.
func (f *multiFit) priorResid(free []int, vals []float64) []float64 {
	out := make([]float64, len(free))
	for i, e := range free {
		en := &f.entries[e]
		d := en.ID.Def()
		out[i] = f.w.RobustScale * (gfun(&d, vals[e]) - gfun(&d, en.Prior)) / en.Sigma
	}
	return out
}

// FitMulti fits the entries (the free parameters of every job, one value per key of their level)
// to every source at once: the weighted residuals of each source plus the prior penalty of each
// entry, minimised by Levenberg-Marquardt from the priors (one start: Settings.Starts is not
// used). The Jacobian is taken column by column, each column simulating only the jobs its entry
// touches. Settings.MaxIter bounds the iterations (default 8).
func FitMulti(p *MultiProblem, s *Settings) (*MultiResult, error) {
	start := time.Now()
	if s == nil {
		s = &Settings{}
	}
	st := *s
	if st.Step <= 0 {
		st.Step = 0.05
	}
	w := DefaultWeights()
	if st.Weights != nil {
		w = *st.Weights
	}
	if w.RobustScale <= 0 {
		w.RobustScale = 0.1
	}
	f, err := newMultiFit(p, w, st.Workers)
	if err != nil {
		return nil, err
	}
	nE := len(f.entries)
	vals0 := make([]float64, nE)
	for e := range f.entries {
		vals0[e] = f.entries[e].Prior
	}
	allJobs := make([]int, len(f.jobs))
	for i := range allJobs {
		allJobs[i] = i
	}
	best := math.Inf(1)
	iter := 0
	curStage := "first Jacobian"
	progress := func(stage string, loss float64) {
		best = math.Min(best, loss)
		curStage = stage
		if st.Progress != nil {
			st.Progress(Progress{Stage: stage, Evaluations: f.evals, Best: best, Elapsed: time.Since(start)})
		}
	}
	f.tick = func(n int) {
		if st.Progress != nil {
			st.Progress(Progress{Stage: curStage, Evaluations: n, Best: best, Elapsed: time.Since(start)})
		}
	}
	// evalAll simulates every job at each of the value sets.
	evalAll := func(sets [][]float64) [][]jobOut {
		var jobs []int
		var vals [][]float64
		for _, v := range sets {
			for _, j := range allJobs {
				jobs = append(jobs, j)
				vals = append(vals, v)
			}
		}
		flat := f.run(jobs, vals)
		out := make([][]jobOut, len(sets))
		for k := range sets {
			out[k] = flat[k*len(allJobs) : (k+1)*len(allJobs)]
		}
		return out
	}
	// The Jacobian at vals over the free entries: the base run plus, per entry, its jobs again.
	// h is the step in the unconstrained coordinate u.
	jacobianAt := func(free []int, vals []float64, baseOuts []jobOut) (*mat.Dense, []float64) {
		if baseOuts == nil {
			baseOuts = evalAll([][]float64{vals})[0]
		}
		data := f.score(baseOuts)
		var jobs []int
		var sets [][]float64
		type col struct{ from, to int }
		cols := make([]col, len(free))
		for c, e := range free {
			d := f.entries[e].ID.Def()
			v := append([]float64(nil), vals...)
			v[e] = fromU(&d, toU(&d, vals[e])+st.Step)
			cols[c].from = len(jobs)
			for i := range f.jobs {
				for _, a := range f.jobs[i].affects {
					if a == e {
						jobs = append(jobs, i)
						sets = append(sets, v)
						break
					}
				}
			}
			cols[c].to = len(jobs)
		}
		flat := f.run(jobs, sets)
		r0 := append(data, f.priorResid(free, vals)...)
		J := mat.NewDense(len(r0), len(free), nil)
		for c, e := range free {
			outs := append([]jobOut(nil), baseOuts...)
			touched := map[int]bool{}
			for k := cols[c].from; k < cols[c].to; k++ {
				outs[jobs[k]] = flat[k]
				touched[f.jobs[jobs[k]].src] = true
			}
			r := append([]float64(nil), data...)
			for si := range f.p.Sources {
				if touched[si] {
					f.scoreSource(si, outs, r)
				}
			}
			v := append([]float64(nil), vals...)
			d := f.entries[e].ID.Def()
			v[e] = fromU(&d, toU(&d, vals[e])+st.Step)
			r = append(r, f.priorResid(free, v)...)
			for k := range r {
				J.Set(k, c, (r[k]-r0[k])/st.Step)
			}
		}
		return J, r0
	}
	all := make([]int, nE)
	for i := range all {
		all[i] = i
	}
	progress("first Jacobian", math.Inf(1))
	J0, r0 := jacobianAt(all, vals0, nil)
	progress("first Jacobian", sumSq(r0))
	// Entries no residual moves with stay at their priors.
	seen := make([]bool, nE)
	var free []int
	for c := range all {
		for k := 0; k < f.nData; k++ {
			if J0.At(k, c) != 0 {
				seen[c] = true
				break
			}
		}
		if seen[c] {
			free = append(free, c)
		}
	}
	res := &MultiResult{Support: f.support()}
	for _, s := range p.Sources {
		res.Sources = append(res.Sources, s.Name)
	}
	finalVals := vals0
	var lastJ *mat.Dense
	if len(free) > 0 {
		toVals := func(u []float64) []float64 {
			v := append([]float64(nil), vals0...)
			for i, e := range free {
				d := f.entries[e].ID.Def()
				v[e] = fromU(&d, u[i])
			}
			return v
		}
		var tried [][]float64
		var triedOuts [][]jobOut
		resid := func(us [][]float64) [][]float64 {
			sets := make([][]float64, len(us))
			for i, u := range us {
				sets[i] = toVals(u)
			}
			outs := evalAll(sets)
			rs := make([][]float64, len(us))
			for i := range outs {
				rs[i] = append(f.score(outs[i]), f.priorResid(free, sets[i])...)
			}
			// LM takes its next Jacobian at one of these points: keep their simulations.
			tried = us
			triedOuts = outs
			return rs
		}
		jac := func(u []float64) (*mat.Dense, []float64) {
			iter++
			var base []jobOut
			for i := range tried {
				if equal(tried[i], u) {
					base = triedOuts[i]
				}
			}
			return jacobianAt(free, toVals(u), base)
		}
		u0 := make([]float64, len(free))
		J := mat.NewDense(len(r0)-nE+len(free), len(free), nil)
		rr := append(append([]float64(nil), r0[:f.nData]...), f.priorResid(free, vals0)...)
		for c, e := range free {
			d := f.entries[e].ID.Def()
			u0[c] = toU(&d, vals0[e])
			for k := 0; k < f.nData; k++ {
				J.Set(k, c, J0.At(k, e))
			}
			J.Set(f.nData+c, c, J0.At(f.nData+e, e))
		}
		maxIter := iterOr(st.MaxIter, 8)
		stage := func() string { return fmt.Sprintf("iteration %d/%d", iter+1, maxIter) }
		u, loss, conv, why, Jl := lmFrom(u0, J, rr, resid, jac, maxIter, func(l float64) { progress(stage(), l) })
		finalVals = toVals(u)
		res.Loss, res.Converged, res.Status = loss, conv, why
		lastJ = Jl
	} else {
		res.Loss, res.Converged, res.Status = sumSq(r0), true, "no entry is seen by the data: every value stays at its prior"
	}
	// The data loss at the optimum (without the prior penalty).
	final := evalAll([][]float64{finalVals})[0]
	data := f.score(final)
	res.DataLoss = sumSq(data)
	var stderr []float64
	if lastJ != nil {
		rf := append(data, f.priorResid(free, finalVals)...)
		stderr = paramStdErr(lastJ, rf, len(free))
	}
	freeIdx := map[int]int{}
	for i, e := range free {
		freeIdx[e] = i
	}
	for e := range f.entries {
		en := f.entries[e]
		def := en.ID.Def()
		ee := EntryEstimate{Entry: en, Param: def.Name, Level: string(def.Level), Value: finalVals[e], StdErr: -1, Seen: seen[e]}
		if i, ok := freeIdx[e]; ok && stderr != nil && stderr[i] >= 0 {
			se := stderr[i] * math.Abs(dvdu(&def, toU(&def, finalVals[e])))
			if !math.IsNaN(se) && !math.IsInf(se, 0) {
				ee.StdErr = se
			}
		}
		res.Entries = append(res.Entries, ee)
	}
	res.Evaluations = f.evals
	res.Elapsed = time.Since(start)
	progress("done", res.Loss)
	return res, nil
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
