package planner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/workload"
)

// Pruning stages, in the order they are checked.
const (
	StageFormat     = "format"     // the GPU cannot run the weight format
	StageEngine     = "engine"     // vLLM refuses the flags (an engine argument that does not hold for the model)
	StageParallel   = "parallel"   // TP does not divide the heads, EP does not divide the experts
	StageMemory     = "memory"     // weights (and reserves) do not fit, or one max_model_len request does not
	StageCapacity   = "capacity"   // the benchmark refuses the cell: C x (context + output) > KV cache
	StageSimulation = "simulation" // the simulation stopped (a request can never be admitted)
)

// layout is a hardware layout: GPU kind, weights variant, GPU count, TP x DP, EP. With EP and
// DP > 1 it is one engine with data-parallel attention and the experts over TP x DP ranks
// (Config.WideEP); otherwise DP independent replicas of a TP engine.
type layout struct {
	gpu     hardware.GPU
	weights string
	arch    *arch.Arch
	format  string
	count   int
	tp, dp  int
	ep      bool
	// Set when no flag combination can load it.
	stage, reason string
	// The layout's parameters and their provenance, chosen once per speculative setting
	// (layoutMemo): the choice depends on the GPU, TP, engine, model and speculative setting,
	// never on the other swept flags, and cost about a fifth of a screen per row.
	memoMu sync.Mutex
	memo   map[string]*layoutMemo
}

// layoutMemo is a layout's parameters (Question.params) and provenance (Question.Provenance)
// for its rows of one speculative setting.
type layoutMemo struct {
	paramsOnce, provOnce sync.Once
	params               layoutParams
	prov                 param.Summary
}

// memoFor is the memo of d's rows: keyed by the speculative method, its draft model, k, the
// drafter's KV dtype and whether a drafter is loaded (the provenance's speculative groups and
// the method's priors follow them).
func (l *layout) memoFor(d *deploy.Deployment) *layoutMemo {
	s := &d.Engine.Speculative
	k := fmt.Sprintf("%s|%s|%d|%s|%t", s.Method, s.Model, s.NumTokens, s.KVCacheDType, d.Drafter != nil)
	l.memoMu.Lock()
	defer l.memoMu.Unlock()
	if l.memo == nil {
		l.memo = map[string]*layoutMemo{}
	}
	m := l.memo[k]
	if m == nil {
		m = &layoutMemo{}
		l.memo[k] = m
	}
	return m
}

type layoutParams struct {
	values    param.Values
	src, from string
	err       error
}

// candidate is one row of the sweep: a configuration, or a layout pruned before its flags were
// expanded (then Config's flag fields are zero).
type candidate struct {
	index  int
	config Config
	lay    *layout
	key    string // simulation class: rows with equal keys share one simulation
	// stage and reason prune this row alone (flags vLLM refuses together); a row without a key
	// and without a stage is its layout's (lay.stage).
	stage, reason string
}

// divisorsDesc are the TP sizes for a GPU count: the listed ones that divide it, or the powers of
// two that do; largest first (one engine over every GPU is the usual choice).
func (q *Question) tpsFor(count int) []int {
	var out []int
	if len(q.Space.TP) > 0 {
		for i := len(q.Space.TP) - 1; i >= 0; i-- {
			if t := q.Space.TP[i]; count%t == 0 {
				out = append(out, t)
			}
		}
		return out
	}
	for t := count; t >= 1; t-- {
		if count%t == 0 && t&(t-1) == 0 {
			out = append(out, t)
		}
	}
	return out
}

// epsFor lists the expert-parallel settings of a TP x DP layout: on and off for a MoE model on
// more than one GPU (with DP > 1, on is one wide-EP engine over all of them), else off.
func (q *Question) epsFor(tp, dp int) []bool {
	if !q.Model.IsMoE() || tp*dp == 1 {
		return []bool{false}
	}
	if len(q.Space.EP) > 0 {
		return q.Space.EP
	}
	return []bool{true, false}
}

// specTokens lists the speculative settings swept (k > 0 only with a drafter).
func (q *Question) specTokens() []int {
	if q.Drafter != nil {
		return q.Space.SpecTokens
	}
	var out []int
	for _, k := range q.Space.SpecTokens {
		if k == 0 {
			out = append(out, 0)
		}
	}
	if len(out) == 0 {
		out = []int{0}
	}
	return out
}

// specOption is one speculative setting of the sweep: a method and its draft tokens (0: off).
type specOption struct {
	method string
	k      int
}

// baseSpecMethod is the method the question's flags (or base engine) give, "dflash" when none.
func (q *Question) baseSpecMethod() string {
	a := q.rowSpec().baseArgs()
	if a.Speculative != nil && a.Speculative.Method != "" {
		return a.Speculative.Method
	}
	return "dflash"
}

// measuredAcceptanceNote says which rows a measured acceptance of the question's server applies
// to: those of its method and number of drafts.
func (q *Question) measuredAcceptanceNote() string {
	a := q.rowSpec().baseArgs()
	s := a.Speculative
	if s == nil || s.Method == "" || (len(s.Acceptance) == 0 && s.MeanAcceptanceLength == 0) {
		return ""
	}
	what := fmt.Sprintf("mean acceptance length %g", s.MeanAcceptanceLength)
	if len(s.Acceptance) > 0 {
		what = fmt.Sprintf("per-position acceptance rates %v", s.Acceptance)
	}
	return fmt.Sprintf("measured %s: applied to the rows with %s and %d drafts; rows with another method or number of drafts run at that method's calibrated or prior acceptance", what, s.Method, s.NumTokens)
}

// specOptions lists the speculative settings swept: off; for each k > 0 of the space and the
// methods Space.SpecMethods allows (auto: the question's method with its drafter, when a drafter is
// described, and mtp when the checkpoint has multi-token-prediction layers, k at most n_predict or
// a multiple of it, vLLM's rule; ngram only when listed). EAGLE heads and draft models need their
// description (--drafter), so they are swept only as the question's method.
func (q *Question) specOptions() []specOption {
	var out []specOption
	base := q.baseSpecMethod()
	for _, k := range q.Space.SpecTokens {
		if k == 0 {
			out = append(out, specOption{})
			continue
		}
		if q.Drafter != nil && deploy.NeedsDrafter(base) && q.specAllowed(base) {
			out = append(out, specOption{base, k})
		}
		if n := q.Model.MTPLayers; n > 0 && (k <= n || k%n == 0) && q.specAllowed("mtp") {
			out = append(out, specOption{"mtp", k})
		}
		if q.specListed("ngram") {
			out = append(out, specOption{"ngram", k})
		}
	}
	if len(out) == 0 {
		out = []specOption{{}}
	}
	return out
}

// specListed reports whether the method is named in Space.SpecMethods.
func (q *Question) specListed(m string) bool {
	return slices.Contains(q.Space.SpecMethods, m)
}

// specAllowed reports whether a method of the automatic set (the question's drafter method, mtp)
// is swept: when SpecMethods is empty or holds auto, or names it.
func (q *Question) specAllowed(m string) bool {
	return len(q.Space.SpecMethods) == 0 || q.specListed("auto") || q.specListed(m)
}

// maxModelLen is the max_model_len a candidate starts with: the space's, else the flags', else
// the one vLLM derives from the model's config; raised to the workload's need (validate has
// checked that the model allows it).
func (q *Question) maxModelLen() int {
	m := q.Space.MaxModelLen
	if m == 0 {
		a := q.rowSpec().baseArgs()
		if a.MaxModelLen != nil {
			m = *a.MaxModelLen
		} else {
			m = q.Model.MaxModelLen
		}
	}
	return max(m, q.needModelLen())
}

// needModelLen is the workload's longest request rounded up to 1,024 tokens, but not above the
// model's own limit when the request itself is within it.
func (q *Question) needModelLen() int {
	n := q.Workload.MaxRequestTokens()
	r := (n + 1023) / 1024 * 1024
	if lim := q.Model.MaxModelLen; lim > 0 && (n <= lim || q.benchTrimsTo(lim)) && r > lim {
		r = lim
	}
	return r
}

// benchTrimsTo reports whether the workload is a bench cell whose context the benchmark trims to
// fit max_model_len mml (a context a little above the room).
func (q *Question) benchTrimsTo(mml int) bool {
	_, _, ok := q.benchFit(mml)
	return ok
}

// benchFit is the bench cell's context fitted to max_model_len mml as the benchmark fits it: its
// nominal tokens, the tokens sent, and whether it fits (false for another workload).
func (q *Question) benchFit(mml int) (nominal, tokens int, ok bool) {
	w := q.Workload
	if w == nil || w.Kind != workload.KindLLMBenchCell || mml <= 0 {
		return 0, 0, false
	}
	n, err := matrix.ParseContext(w.Cell.Context)
	if err != nil {
		return 0, 0, false
	}
	p := w.Cell.Protocol()
	t, ok := p.Fit(n, mml, p.MaxOutput)
	return n, t, ok
}

// rowSpec is what a row's flags are built from; a Question and a plan's QuestionInfo both give it.
type rowSpec struct {
	engine    *deploy.EngineArgs
	base      *deploy.EngineConfig
	drafter   string
	modelArch *arch.Arch
	// currentGPU is the scenario's GPU: its attention and MoE backends (GPU-specific kernels)
	// apply to rows on that GPU only; elsewhere vLLM chooses.
	currentGPU string
}

func (q *Question) rowSpec() rowSpec {
	rs := rowSpec{engine: q.Engine, drafter: q.DrafterRef, modelArch: q.Model}
	if q.Base.Name != "" || q.Engine == nil {
		b := q.Base
		rs.base = &b
	}
	if q.Drafter == nil {
		rs.drafter = ""
	}
	if q.Current != nil {
		rs.currentGPU = q.Current.GPU
	}
	return rs
}

func (qi *QuestionInfo) rowSpec() rowSpec {
	rs := rowSpec{engine: qi.Engine, base: qi.Base, drafter: qi.Drafter, modelArch: qi.ModelArch}
	if qi.Current != nil {
		rs.currentGPU = qi.Current.GPU
	}
	return rs
}

// base is the engine flags every row starts from: the question's flags, else its base engine's
// settings, all given.
func (rs rowSpec) baseArgs() deploy.EngineArgs {
	switch {
	case rs.engine != nil:
		return rs.engine.Clone()
	case rs.base != nil:
		return deploy.ArgsOf(*rs.base)
	}
	return deploy.EngineArgs{}
}

// RowArgs are the `vllm serve` flags of a row: the question's flags with the row's layout (TP,
// DP 1 per replica, PP 1, EP), its swept flags and max_model_len set, and, with speculative
// tokens, the question's method (DFlash when it gives none) with its drafter.
func (qi *QuestionInfo) RowArgs(c *Config) deploy.EngineArgs { return qi.rowSpec().args(c) }

func (rs rowSpec) args(c *Config) deploy.EngineArgs {
	e := rs.baseArgs()
	e.Name = "vllm"
	e.TensorParallel, e.DataParallel, e.PipelineParallel = deploy.Ptr(c.TP), deploy.Ptr(1), deploy.Ptr(1)
	if c.WideEP() {
		// One engine over every GPU: attention data-parallel, experts over TP x DP ranks.
		e.DataParallel = deploy.Ptr(c.DP)
	}
	e.ExpertParallel = deploy.Ptr(c.EP)
	e.MaxNumSeqs, e.MaxNumBatchedTokens = deploy.Ptr(c.MaxNumSeqs), deploy.Ptr(c.MaxNumBatchedTokens)
	e.KVCacheDType, e.GPUMemoryUtilization = deploy.Ptr(c.KVCacheDType), deploy.Ptr(c.GPUMemoryUtilization)
	e.MaxModelLen = deploy.Ptr(c.MaxModelLen)
	if !strings.EqualFold(c.GPU, rs.currentGPU) {
		e.AttentionBackend, e.MoEBackend = "", ""
	}
	if c.Weights != "native" {
		// A 16-bit checkpoint is quantized to fp8 when loading (--quantization fp8); another format
		// needs another checkpoint, so the label is the variant's format only.
		if c.Weights == "fp8" && rs.modelArch != nil && deploy.CheckpointQuantization(rs.modelArch) == "" && rs.modelArch.Quantization == "" {
			e.Quantization = "fp8"
		} else {
			e.Quantization = strings.ToUpper(c.WeightFormat)
		}
	}
	if c.SpecTokens > 0 {
		method, kv := "", ""
		if e.Speculative != nil {
			method, kv = e.Speculative.Method, e.Speculative.KVCacheDType
		}
		if c.SpecMethod != "" && c.SpecMethod != method {
			method, kv = c.SpecMethod, ""
		}
		if method == "" {
			method = "dflash"
		}
		model := rs.drafter
		if !deploy.NeedsDrafter(method) {
			model = ""
		}
		spec := &deploy.Speculative{Method: method, Model: model, NumTokens: c.SpecTokens, KVCacheDType: kv}
		// A measured acceptance (the scenario's [engine.speculative] acceptance or
		// mean_acceptance_length) belongs to its method and k; other rows run at the method's
		// acceptance (measuredAcceptanceNote says so).
		if o := e.Speculative; o != nil && o.Method == method && o.NumTokens == c.SpecTokens {
			spec.Acceptance, spec.MeanAcceptanceLength = slices.Clone(o.Acceptance), o.MeanAcceptanceLength
		}
		e.Speculative = spec
	} else {
		e.Speculative = &deploy.Speculative{}
	}
	return e
}

// engineFor builds one replica's engine for a candidate.
func (q *Question) engineFor(l *layout, c *Config) (deploy.EngineConfig, error) {
	cc := *c
	cc.TP, cc.DP, cc.EP, cc.Weights, cc.WeightFormat = l.tp, l.dp, l.ep, l.weights, l.format
	e, _, err := deploy.Resolve(q.rowSpec().args(&cc), deploy.ModelGPU{Model: l.arch, GPU: &l.gpu})
	if err != nil {
		return e, err
	}
	e.Quantization = strings.ToUpper(l.format)
	return e, nil
}

// deployment builds one replica of a candidate.
func (q *Question) deployment(l *layout, c *Config) (*deploy.Deployment, error) {
	e, err := q.engineFor(l, c)
	if err != nil {
		return nil, err
	}
	d := &deploy.Deployment{Model: l.arch, Hardware: hardware.Machine{GPU: l.gpu, Count: e.GPUs()}, Engine: e}
	if c.SpecTokens > 0 && deploy.NeedsDrafter(e.Speculative.Method) {
		d.Drafter = q.Drafter
	}
	return d, nil
}

// params chooses a deployment's parameters.
func (q *Question) params(d *deploy.Deployment, native bool) (param.Values, string, string, error) {
	if q.Params == nil {
		return param.Priors(), "prior", "priors", nil
	}
	p, src, from, err := q.Params(d, native)
	return p, string(src), from, err
}

// layoutProvenance is q.Provenance for the layout's rows, taken on the first and kept, as
// layoutParams (q.Provenance must be set).
func (q *Question) layoutProvenance(l *layout, d *deploy.Deployment) param.Summary {
	m := l.memoFor(d)
	m.provOnce.Do(func() { m.prov = q.Provenance(d, l.weights == "native") })
	return m.prov
}

// layoutParams is q.params for the layout's rows of d's speculative setting, chosen on the first
// and kept: every row of a layout has its GPU, TP, engine and model (d is that row's deployment).
func (q *Question) layoutParams(l *layout, d *deploy.Deployment) (param.Values, string, string, error) {
	m := l.memoFor(d)
	m.paramsOnce.Do(func() {
		lp := &m.params
		lp.values, lp.src, lp.from, lp.err = q.params(d, l.weights == "native")
	})
	lp := &m.params
	return lp.values, lp.src, lp.from, lp.err
}

// checkLayout prunes a layout no flag combination can load: a weight format the GPU lacks, a
// TP/EP size that does not divide the model, or weights that do not fit even with the most
// memory the swept flags leave (the highest utilization, the smallest batch, no drafter).
func (q *Question) checkLayout(l *layout) {
	for _, a := range []*arch.Arch{l.arch, q.Drafter} {
		if a == nil || (a == q.Drafter && !anyPositive(q.specTokens())) {
			continue
		}
		for _, dt := range a.WeightDTypes() {
			if ok, why := l.gpu.SupportsWeights(dt); !ok {
				l.stage, l.reason = StageFormat, fmt.Sprintf("%s weights in %s: %s", a.Name, dt, why)
				return
			}
		}
	}
	s := &q.Space
	best := Config{KVCacheDType: s.KVCacheDTypes[0], SpecTokens: q.specTokens()[0], MaxNumBatchedTokens: s.MaxNumBatchedTokens[0],
		MaxNumSeqs: s.MaxNumSeqs[0], GPUMemoryUtilization: s.GPUMemoryUtilization[len(s.GPUMemoryUtilization)-1], MaxModelLen: q.maxModelLen()}
	d, err := q.deployment(l, &best)
	if err != nil {
		l.stage, l.reason = StageEngine, err.Error()
		return
	}
	if err := d.Validate(); err != nil {
		l.stage, l.reason = StageParallel, err.Error()
		return
	}
	p, _, _, err := q.layoutParams(l, d)
	if err != nil {
		l.stage, l.reason = StageMemory, err.Error()
		return
	}
	m := d.Memory(&p)
	if msg := m.FitError(); msg != "" {
		l.stage, l.reason = StageMemory, fmt.Sprintf("%s (even at gpu-memory-utilization %.2f and max-num-batched-tokens %d)", msg, best.GPUMemoryUtilization, best.MaxNumBatchedTokens)
	}
}

func anyPositive(v []int) bool {
	for _, x := range v {
		if x > 0 {
			return true
		}
	}
	return false
}

// enumerate lists every row of the sweep in a fixed order: GPU kind, weights, count, TP (largest
// first), EP, then KV dtype, speculative method and tokens, batched tokens, max-num-seqs, utilization.
func (q *Question) enumerate() ([]candidate, []string) {
	var out []candidate
	notes := append([]string(nil), q.Notes...)
	if n := q.contextNote(); n != "" {
		notes = append(notes, n)
	}
	if q.Drafter == nil && anyPositive(q.Space.SpecTokens) && deploy.NeedsDrafter(q.baseSpecMethod()) {
		notes = append(notes, fmt.Sprintf("speculative decoding with %s not swept: no drafter description for %s (give --drafter NAME|FILE); mtp is, when the checkpoint has MTP layers", q.baseSpecMethod(), q.ModelRef))
	}
	if anyPositive(q.Space.SpecTokens) && !q.specListed("ngram") {
		notes = append(notes, "ngram (prompt lookup) not swept: its acceptance depends on how much of each output repeats its prompt, which a length-only workload does not say; add --spec-methods auto,ngram to sweep it at servesim's prior")
	}
	if n := q.measuredAcceptanceNote(); n != "" {
		notes = append(notes, n)
	}
	if n := q.onlineFP8Note(); n != "" {
		notes = append(notes, n)
	}
	var untried []string
	for _, c := range q.Space.Counts {
		if len(q.tpsFor(c)) == 0 {
			untried = append(untried, strconv.Itoa(c))
		}
	}
	if len(untried) > 0 {
		notes = append(notes, fmt.Sprintf("GPU count(s) %s: no tp in %v divides them, so no row has them", strings.Join(untried, ", "), q.Space.TP))
	}
	specs := q.specOptions()
	perReplica := q.Workload.MaxConcurrency()
	mml := q.maxModelLen()
	for gi := range q.GPUs {
		g := q.GPUs[gi]
		var ws []string
		for _, w := range q.Space.Weights {
			ws = append(ws, weightsVariants(q.Model, &g, w)...)
		}
		for _, w := range uniqStrings(ws) {
			v := variant(q.Model, w)
			for _, count := range q.Space.Counts {
				for _, tp := range q.tpsFor(count) {
					for _, ep := range q.epsFor(tp, count/tp) {
						l := &layout{gpu: g, weights: w, arch: v, format: mainFormat(v), count: count, tp: tp, dp: count / tp, ep: ep}
						q.checkLayout(l)
						base := Config{GPU: g.Name, Count: count, TP: tp, DP: l.dp, EP: ep, Weights: w, WeightFormat: l.format}
						if l.stage != "" {
							out = append(out, candidate{index: len(out), config: base, lay: l})
							continue
						}
						conc := 0
						if perReplica > 0 {
							// Per replica, or per data-parallel rank of a wide-EP engine (whose
							// max-num-seqs is per rank, as vLLM's is).
							conc = (perReplica + l.dp - 1) / l.dp
						}
						for _, kv := range q.Space.KVCacheDTypes {
							for _, k := range specs {
								for _, mbt := range q.Space.MaxNumBatchedTokens {
									for _, mns := range q.Space.MaxNumSeqs {
										for _, u := range q.Space.GPUMemoryUtilization {
											c := base
											c.KVCacheDType, c.SpecMethod, c.SpecTokens, c.MaxNumBatchedTokens, c.MaxNumSeqs, c.GPUMemoryUtilization, c.MaxModelLen = kv, k.method, k.k, mbt, mns, u, mml
											if err := deploy.CheckBatch(mbt, mns); err != nil {
												out = append(out, candidate{index: len(out), config: c, lay: l, stage: StageEngine, reason: err.Error()})
												continue
											}
											// Rows that differ only in a max-num-seqs the workload never reaches
											// simulate identically.
											eff := mns
											if conc > 0 && mns >= conc {
												eff = conc
											}
											key := strings.Join([]string{strconv.Itoa(gi), w, strconv.Itoa(count), strconv.Itoa(tp), strconv.FormatBool(ep), kv,
												k.method, strconv.Itoa(k.k), strconv.Itoa(mbt), strconv.Itoa(eff), strconv.FormatFloat(u, 'g', -1, 64)}, "|")
											out = append(out, candidate{index: len(out), config: c, lay: l, key: key})
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return out, notes
}

// onlineFP8Note says whether the sweep quantizes a 16-bit checkpoint to fp8 when loading ("" for
// a quantized checkpoint, whose other formats are other checkpoints).
func (q *Question) onlineFP8Note() string {
	if !onlineFP8(q.Model) {
		return ""
	}
	switch {
	case slices.Contains(q.Space.Weights, "auto"), slices.Contains(q.Space.Weights, "fp8"):
		return "fp8 weights: the 16-bit checkpoint quantized by vLLM when loading (--quantization fp8, dynamic per-tensor scales) on GPUs with fp8 tensor cores; check its quality on your task, or --weights native to leave it out"
	}
	return fmt.Sprintf("fp8 weights not swept (--weights %s): vLLM can quantize this 16-bit checkpoint when loading (--quantization fp8); --weights auto sweeps it", strings.Join(q.Space.Weights, ","))
}

// benchCell is the workload's bench cell, if it is one.
func benchCell(s *workload.Spec) *workload.LLMBenchCell {
	if s.Kind == workload.KindLLMBenchCell {
		return &s.Cell
	}
	return nil
}
