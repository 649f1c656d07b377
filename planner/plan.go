package planner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/workload"
)

// FormatVersion identifies the plan JSON layout.
const FormatVersion = 1

// Result is one row of the sweep.
type Result struct {
	Index int `json:"index"`
	// Rank orders the rows that loaded (1 = best); pruned rows have none.
	Rank   int    `json:"rank,omitempty"`
	Config Config `json:"config"`
	// Scope is "layout" for a hardware layout no flag combination can load (the flag fields of
	// Config are then zero and stand for every value swept).
	Scope string `json:"scope,omitempty"`
	// Status is "ok" (meets every objective with probability PMeet >= ConfidentP), "marginal"
	// (the prediction meets them, inside its uncertainty), "missed" (misses one), "queues"
	// (serves fewer simultaneous users than the question has: Queues) or "pruned".
	Status string `json:"status"`
	Stage  string `json:"stage,omitempty"`
	Reason string `json:"reason,omitempty"`
	Note   string `json:"note,omitempty"`
	// SameAs is the row whose simulation this row shares (they differ only in a max-num-seqs the
	// workload never reaches).
	SameAs     *int    `json:"same_as,omitempty"`
	Current    bool    `json:"current,omitempty"`
	Source     string  `json:"source,omitempty"`
	ParamsFrom string  `json:"params_from,omitempty"`
	PriceHour  float64 `json:"usd_per_hour"`
	// CostPerMTok is dollars per million output tokens at the simulated throughput.
	CostPerMTok float64 `json:"usd_per_m_output_tokens,omitempty"`
	// KVTokens is one replica's kv_cache_size_tokens.
	KVTokens  int                   `json:"kv_cache_size_tokens,omitempty"`
	Perf      *Perf                 `json:"perf,omitempty"`
	Intervals []param.NamedInterval `json:"intervals,omitempty"`
	// PMeet is the probability of meeting every objective, from the predictions' intervals
	// (pMeet); Queues is set when the row makes some of the question's users wait.
	PMeet  *float64  `json:"p_meet,omitempty"`
	Queues *Queueing `json:"queues,omitempty"`
	// Screened: Perf (and Status) come from the search's screen, the workload's first requests,
	// not from the whole workload (Plan.Search says how many).
	Screened bool `json:"screened,omitempty"`
	// Provenance is the parameters' provenance by group (what the intervals widen with).
	Provenance *param.Summary `json:"provenance,omitempty"`
	// Launch is how to run the row (plan --show-commands; AddCommands fills it).
	Launch *Launch `json:"launch,omitempty"`
}

// MaxShards is the most slices a sweep can be cut into (plan --shard i/n and merge refuse a
// larger n): far more than machines anyone runs a sweep on, small enough that merge can list
// the shards it is missing.
const MaxShards = 1 << 16

// Shard is a slice of the sweep: rows with index mod Count == Index.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Counts summarises a plan.
type Counts struct {
	Rows      int            `json:"rows"`
	Simulated int            `json:"simulated"` // distinct simulations
	Met       int            `json:"met"`
	Marginal  int            `json:"marginal"`
	Missed    int            `json:"missed"`
	Queued    int            `json:"queues"`
	Pruned    int            `json:"pruned"`
	ByStage   map[string]int `json:"pruned_by_stage"`
}

// CtxCapacity is the most streams the benchmark's rule admits at a context.
type CtxCapacity struct {
	Context        string `json:"context"`
	Tokens         int    `json:"tokens"`
	MaxConcurrency int    `json:"max_concurrency"`
}

// ConcCapacity is the longest context that many streams can each hold.
type ConcCapacity struct {
	Concurrency int `json:"concurrency"`
	MaxContext  int `json:"max_context_tokens"`
}

// Frontier is a configuration's capacity frontier from its KV cache: max concurrency per
// context and max context per concurrency, with OutputTokens reserved per stream (the
// benchmark's rule C x (context + output) <= kv_cache_size_tokens, per replica).
type Frontier struct {
	Index         int            `json:"index"`
	Label         string         `json:"label"`
	OutputTokens  int            `json:"output_tokens"`
	ByContext     []CtxCapacity  `json:"by_context"`
	ByConcurrency []ConcCapacity `json:"by_concurrency"`
}

// QuestionInfo is the serialisable part of a question: what the fingerprint covers and what a
// merged plan reports.
type QuestionInfo struct {
	Model       string         `json:"model"`
	ModelArch   *arch.Arch     `json:"model_arch"`
	Drafter     string         `json:"drafter,omitempty"`
	DrafterArch *arch.Arch     `json:"drafter_arch,omitempty"`
	Workload    *workload.Spec `json:"workload"`
	// WorkloadDesc is Workload.Describe(); TraceKey fingerprints a trace's rows.
	WorkloadDesc string `json:"workload_desc"`
	TraceKey     string `json:"trace_key,omitempty"`
	// Base is the scenario's engine (Question.Base); Engine the flags the rows start from, when
	// they do not all follow from Base; ServeModel what `vllm serve` is given.
	Base       *deploy.EngineConfig `json:"base_engine,omitempty"`
	Engine     *deploy.EngineArgs   `json:"engine_args,omitempty"`
	ServeModel string               `json:"serve_model,omitempty"`
	GPUs       []hardware.GPU       `json:"gpus"`
	Space      Space                `json:"space"`
	Seed       uint64               `json:"seed"`
	Params     string               `json:"params"`
	Intervals  string               `json:"intervals,omitempty"`
	Current    *Config              `json:"current,omitempty"`
}

// Plan is the answer: every row ranked, the capacity frontier of the best configurations, and
// what was pruned and why. A shard's plan has Shard set; merging every shard gives the plan of
// the whole sweep, byte for byte.
type Plan struct {
	Format      int          `json:"servesim_plan"`
	Fingerprint string       `json:"fingerprint"`
	Question    QuestionInfo `json:"question"`
	// Rows is the number of rows of the whole sweep (all shards).
	Rows     int        `json:"rows"`
	Shard    *Shard     `json:"shard,omitempty"`
	Notes    []string   `json:"notes,omitempty"`
	Counts   Counts     `json:"counts"`
	Results  []Result   `json:"results"`
	Frontier []Frontier `json:"frontier"`
	// Search says how the fast passes evaluated the rows (nil: every row in full).
	Search *Search `json:"search,omitempty"`
}

// Options control a planning run.
type Options struct {
	// Workers is the number of simulations run at once (0: workpool.Workers, the CPUs the process
	// may use). The plan does not depend on it.
	Workers int
	// Shard selects a slice of the sweep (zero value: all of it).
	Shard Shard
	// Exhaustive simulates every row in full. Otherwise an open loop at a constant rate or a
	// closed loop is searched in passes (Question.search): a screen of every row on the first
	// requests, then full simulations of the rows that can still reach the top Exact rows or be
	// the best of their hardware layout. The top Exact rows are those of the exhaustive sweep.
	Exhaustive bool
	// Exact is the number of top rows the passes rank exactly (0: DefaultExact).
	Exact int
	// Start, if set, is called once before the bulk of the simulations with what the run will
	// do and its measured cost per simulation.
	Start func(Estimate)
	// Progress, if set, is called (from one goroutine at a time) as simulations finish.
	Progress func(Progress)
}

func sourceOf(s string) scenario.Source { return scenario.Source(s) }

// info builds the serialisable question.
func (q *Question) info() QuestionInfo {
	qi := QuestionInfo{Model: q.ModelRef, ModelArch: q.Model, Drafter: q.DrafterRef, DrafterArch: q.Drafter, Workload: q.Workload,
		WorkloadDesc: q.Workload.Describe(), GPUs: q.GPUs, Space: q.Space, Seed: q.Seed, Params: q.ParamsRef, Current: q.Current}
	rs := q.rowSpec()
	qi.Base = rs.base
	if q.Engine != nil && (rs.base == nil || !q.Engine.Complete()) {
		e := q.Engine.Clone()
		qi.Engine = &e
	}
	if q.ServeModel != q.ModelRef {
		qi.ServeModel = q.ServeModel
	}
	if q.Drafter == nil {
		qi.Drafter = ""
	}
	if q.Uncertainty != nil {
		qi.Intervals = q.Uncertainty.Name()
	}
	if q.Workload.Kind == workload.KindTrace {
		reqs, err := q.Workload.Requests(q.Seed)
		if err == nil {
			h := sha256.New()
			for _, r := range reqs {
				fmt.Fprintf(h, "%d %d %d %d %d\n", r.At, r.InputTokens, r.OutputTokens, r.PrefixID, r.PrefixTokens)
			}
			qi.TraceKey = hex.EncodeToString(h.Sum(nil))[:16]
		}
	}
	return qi
}

func fingerprint(qi *QuestionInfo) string {
	b, err := json.Marshal(qi)
	if err != nil {
		panic(fmt.Sprintf("planner: fingerprint: %v", err))
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

// validate checks the question before any work.
func (q *Question) validate() error {
	if q.Model == nil {
		return fmt.Errorf("planner: no model")
	}
	if q.Workload == nil {
		return fmt.Errorf("planner: no workload")
	}
	if err := q.Workload.Validate(); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	if len(q.GPUs) == 0 {
		return fmt.Errorf("no candidate GPU")
	}
	if err := q.Space.normalize(); err != nil {
		return err
	}
	return q.checkModelLen()
}

// checkModelLen refuses what vLLM would refuse: a max_model_len above what the model's config
// allows (unless the flags allow long lengths, VLLM_ALLOW_LONG_MAX_MODEL_LEN=1), or a workload
// whose longest request needs more; and a model whose length is not known without a
// max_model_len.
func (q *Question) checkModelLen() error {
	base := q.rowSpec().baseArgs()
	m := q.Model
	mml := q.Space.MaxModelLen
	if mml == 0 && base.MaxModelLen != nil {
		mml = *base.MaxModelLen
	}
	if mml == 0 && m.MaxModelLen == 0 {
		return fmt.Errorf("max-model-len: not set, and model %s does not say its context length (vLLM derives it from config.json): set --max-model-len", q.ModelRef)
	}
	lim := m.MaxModelLen
	if lim == 0 || base.AllowLongMaxModelLen {
		return nil
	}
	rule := ""
	if m.MaxModelLenRule != "" {
		rule = " (" + m.MaxModelLenRule + ")"
	}
	if mml > lim {
		return fmt.Errorf("max-model-len %d: model %s allows at most %d%s; vLLM refuses more unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", mml, q.ModelRef, lim, rule)
	}
	if need := q.Workload.MaxRequestTokens(); need > lim {
		hint := ""
		if q.benchTrimsTo(lim) {
			// The benchmark trims a context a little above the room to the room; the rows
			// simulate it so (Protocol.FitContext with each row's max_model_len).
			return nil
		}
		if w := q.Workload; w.Kind == workload.KindLLMBenchCell {
			p := w.Cell.Protocol()
			if room := p.Room(lim, p.MaxOutput); room > 0 {
				hint = fmt.Sprintf("; the longest context that fits with %d output tokens is %d tokens (--context %d)", p.MaxOutput, room, room)
			}
		}
		return fmt.Errorf("the workload's longest request needs %d tokens (prompt, output and margin), more than the max_model_len %d model %s allows%s: vLLM would refuse it%s", need, lim, q.ModelRef, rule, hint)
	}
	return nil
}

// contextNote says how the bench cell's context is fitted when the benchmark trims it ("" when it
// fits as given).
func (q *Question) contextNote() string {
	mml := q.maxModelLen()
	n, t, ok := q.benchFit(mml)
	if !ok || t == n {
		return ""
	}
	p := q.Workload.Cell.Protocol()
	return fmt.Sprintf("context %s trimmed to %d tokens for every row, as llm-inference-bench trims a context up to %.0f%% above the room (max_model_len %d - %d output - %d margin)",
		q.Workload.Cell.Context, t, 100*p.TrimSlack, mml, p.MaxOutput, p.MarginTokens)
}

// Run answers the question: it enumerates the sweep (or its shard), prunes what cannot load,
// simulates the rest on worker goroutines, and ranks the rows.
func Run(q *Question, o Options) (*Plan, error) {
	if err := q.validate(); err != nil {
		return nil, err
	}
	if o.Shard.Count == 0 {
		o.Shard.Count = 1
	}
	if err := o.Shard.validate(); err != nil {
		return nil, err
	}
	if q.Workload.Kind == workload.KindTrace {
		if err := q.Workload.LoadTrace(); err != nil {
			return nil, err
		}
	}
	cands, notes := q.enumerate()
	qi := q.info()
	p := &Plan{Format: FormatVersion, Question: qi, Fingerprint: fingerprint(&qi), Rows: len(cands), Notes: notes}
	if o.Shard.Count > 1 {
		sh := o.Shard
		p.Shard = &sh
	}
	// The simulation class representative is the lowest index of the whole sweep, so shards agree.
	rep := map[string]int{}
	for i := range cands {
		if k := cands[i].key; k != "" {
			if _, ok := rep[k]; !ok {
				rep[k] = i
			}
		}
	}
	var mine []int
	var jobs []int // representative candidate per class in this shard, by first appearance
	seen := map[string]bool{}
	for i := range cands {
		if i%o.Shard.Count != o.Shard.Index {
			continue
		}
		mine = append(mine, i)
		if k := cands[i].key; k != "" && !seen[k] {
			seen[k] = true
			jobs = append(jobs, i)
		}
	}
	rows := map[string]int{}
	for _, i := range mine {
		if k := cands[i].key; k != "" {
			rows[k]++
		}
	}
	outs, search := q.search(cands, jobs, rows, o)
	if !search.Exhaustive {
		// An exhaustive plan says nothing of its search, so that merged shards equal it.
		p.Search = search
	}
	for _, i := range mine {
		c := &cands[i]
		r := Result{Index: i, Config: c.config, PriceHour: float64(c.config.Count) * c.lay.gpu.PricePerHour}
		if c.key == "" && c.stage != "" {
			r.Status, r.Stage, r.Reason = "pruned", c.stage, c.reason
			p.Results = append(p.Results, r)
			continue
		}
		if c.key == "" {
			r.Scope = "layout"
			r.Status = "pruned"
			r.Stage, r.Reason = c.lay.stage, c.lay.reason
			p.Results = append(p.Results, r)
			continue
		}
		out := outs[c.key]
		r.Config.MaxModelLen = out.mml
		r.Source, r.ParamsFrom, r.Note = out.source, out.from, out.note
		r.KVTokens = out.kvTokens
		if ri := rep[c.key]; ri != i {
			r.SameAs = &ri
		}
		if q.Current != nil && c.config.sameDeployment(q.Current) {
			r.Current = true
		}
		if out.stage != "" {
			r.Status, r.Stage, r.Reason = "pruned", out.stage, out.reason
			p.Results = append(p.Results, r)
			continue
		}
		r.Perf = out.perf
		r.Intervals = out.intervals
		r.Screened = out.screened
		r.Provenance = out.prov
		r.Status = out.status()
		pm := out.pMeet
		r.PMeet, r.Queues = &pm, out.queues
		if out.perf.OutputTokS > 0 {
			r.CostPerMTok = r.PriceHour / (out.perf.OutputTokS * 3600) * 1e6
		}
		p.Results = append(p.Results, r)
	}
	p.finalize()
	return p, nil
}

// finalize ranks the rows, counts them and computes the frontier. It depends only on the rows,
// so a merged plan finalizes to the unsharded one.
func (p *Plan) finalize() {
	rs := p.Results
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := &rs[i], &rs[j]
		if oa, ob := statusRank(a.Status), statusRank(b.Status); oa != ob {
			return oa < ob
		}
		if a.Status == StatusPruned {
			return a.Index < b.Index
		}
		if a.PriceHour != b.PriceHour {
			return a.PriceHour < b.PriceHour
		}
		if pa, pb := a.pMeet(), b.pMeet(); pa != pb && meetsOrMarginal(a.Status) {
			return pa > pb
		}
		ca, cb := costKey(a), costKey(b)
		if ca != cb {
			return ca < cb
		}
		ha, hb := headroomMin(a.Perf), headroomMin(b.Perf)
		if ha != hb {
			return ha > hb
		}
		return a.Index < b.Index
	})
	c := Counts{Rows: len(rs), ByStage: map[string]int{}}
	rank := 0
	sims := map[int]bool{}
	for i := range rs {
		r := &rs[i]
		r.Rank = 0
		if r.Perf != nil {
			if r.SameAs != nil {
				sims[*r.SameAs] = true
			} else {
				sims[r.Index] = true
			}
		}
		switch r.Status {
		case StatusOK:
			c.Met++
		case StatusMarginal:
			c.Marginal++
		case StatusMissed:
			c.Missed++
		case StatusQueues:
			c.Queued++
		default:
			c.Pruned++
			c.ByStage[r.Stage]++
			continue
		}
		rank++
		r.Rank = rank
	}
	c.Simulated = len(sims)
	p.Counts = c
	p.Frontier = p.frontier(5)
}

// meetsOrMarginal reports whether a status is one whose rows rank by their probability of
// meeting the objectives after price (the rows that miss rank by cost and headroom alone).
func meetsOrMarginal(s string) bool { return s == StatusOK || s == StatusMarginal }

// pMeet is the row's probability of meeting the objectives (1 for a row without one: a plan
// read from an older file).
func (r *Result) pMeet() float64 {
	if r.PMeet == nil {
		return 1
	}
	return *r.PMeet
}

func costKey(r *Result) float64 {
	if r.CostPerMTok > 0 {
		return r.CostPerMTok
	}
	return math.Inf(1)
}

// groupKey is a hardware layout: the table shows the best row of each.
func groupKey(c *Config) string {
	return fmt.Sprintf("%s|%d|%d|%d|%v|%s", c.GPU, c.Count, c.TP, c.DP, c.EP, c.Weights)
}

// frontier computes the capacity frontier of the best n layouts that meet the objectives (or
// that load, when none does), and of the current configuration.
func (p *Plan) frontier(n int) []Frontier {
	out := p.frontierOutput()
	var fs []Frontier
	seen := map[string]bool{}
	want := StatusOK
	switch {
	case p.Counts.Met > 0:
	case p.Counts.Marginal > 0:
		want = StatusMarginal
	case p.Counts.Missed > 0:
		want = StatusMissed
	default:
		want = StatusQueues
	}
	add := func(r *Result) {
		fs = append(fs, capacityFrontier(r, out))
	}
	for i := range p.Results {
		r := &p.Results[i]
		if r.Status != want || r.KVTokens == 0 {
			continue
		}
		k := groupKey(&r.Config)
		if seen[k] || len(seen) >= n {
			continue
		}
		seen[k] = true
		add(r)
	}
	for i := range p.Results {
		r := &p.Results[i]
		if r.Current && r.KVTokens > 0 {
			dup := false
			for _, f := range fs {
				dup = dup || f.Index == r.Index
			}
			if !dup {
				add(r)
			}
			break
		}
	}
	return fs
}

// frontierOutput is the output reserved per stream in the frontier: the bench cell's max output,
// else the workload's output length.
func (p *Plan) frontierOutput() int {
	w := p.Question.Workload
	if w == nil {
		return 0
	}
	switch w.Kind {
	case workload.KindLLMBenchCell:
		return w.Cell.Protocol().MaxOutput
	case workload.KindClosed, workload.KindOpen:
		return w.Lengths.OutputTokens
	}
	return 0
}

// frontierContexts are the contexts of the capacity frontier's max-concurrency table.
func frontierContexts() []int {
	return []int{8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20}
}

// frontierConcurrency are the stream counts of its max-context table.
func frontierConcurrency() []int {
	return []int{1, 2, 4, 8, 16, 32, 64, 128, 256}
}

func capacityFrontier(r *Result, out int) Frontier {
	c := &r.Config
	f := Frontier{Index: r.Index, Label: fmt.Sprintf("%s, %s KV, util %.2f, mbt %d, %s", c.Label(), kvText(c.KVCacheDType), c.GPUMemoryUtilization, c.MaxNumBatchedTokens, c.specLabel()), OutputTokens: out}
	room := c.MaxModelLen - out - 64
	kv := r.KVTokens
	reps := c.Replicas()
	for _, ctx := range frontierContexts() {
		t := ctx
		if t > room {
			if float64(t) > float64(room)*1.1 || room <= 0 {
				break
			}
			t = room // the benchmark trims a context within 10 % of the room
		}
		per := kv / (t + out)
		f.ByContext = append(f.ByContext, CtxCapacity{Context: fmt.Sprintf("%dK", t/1024), Tokens: t, MaxConcurrency: reps * per})
	}
	for _, n := range frontierConcurrency() {
		per := (n + reps - 1) / reps
		m := min(kv/per-out, room)
		if m <= 0 {
			break
		}
		f.ByConcurrency = append(f.ByConcurrency, ConcCapacity{Concurrency: n, MaxContext: m})
	}
	return f
}

// WriteJSON writes the plan deterministically: the header indented, then one result per line.
// A row that shares another row's simulation (SameAs) carries no perf when that row is in the
// plan; ReadJSON restores it.
func (p *Plan) WriteJSON(w io.Writer) error {
	present := map[int]*Result{}
	for i := range p.Results {
		present[p.Results[i].Index] = &p.Results[i]
	}
	head := *p
	head.Results = nil
	hb, err := json.MarshalIndent(&head, "", " ")
	if err != nil {
		return err
	}
	// Splice the results in place of the empty list.
	const empty = "\"results\": null"
	i := bytes.Index(hb, []byte(empty))
	if i < 0 {
		return fmt.Errorf("planner: plan header has no results field")
	}
	var b bytes.Buffer
	b.Write(hb[:i])
	b.WriteString("\"results\": [")
	for k := range p.Results {
		r := p.Results[k]
		if r.SameAs != nil && present[*r.SameAs] != nil {
			r.Perf, r.Intervals = nil, nil
		}
		rb, err := json.Marshal(&r)
		if err != nil {
			return err
		}
		if k > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  ")
		b.Write(rb)
	}
	if len(p.Results) > 0 {
		b.WriteString("\n ")
	}
	b.WriteByte(']')
	b.Write(hb[i+len(empty):])
	b.WriteByte('\n')
	_, err = w.Write(b.Bytes())
	return err
}

// validate checks 0 <= Index < Count <= MaxShards.
func (s Shard) validate() error {
	if s.Count < 1 || s.Count > MaxShards || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d/%d: want i/n with 0 <= i < n <= %d", s.Index, s.Count, MaxShards)
	}
	return nil
}

// checkRows checks what ReadJSON must not trust: the shard header (0 <= index < count <=
// MaxShards), the row count, and each row's index (in 0..rows-1, in this shard's slice, once).
func (p *Plan) checkRows(name string) error {
	if p.Shard != nil {
		if err := p.Shard.validate(); err != nil {
			return fmt.Errorf("%s: field \"shard\": %v", name, err)
		}
	}
	if p.Rows < 0 || p.Rows < len(p.Results) {
		return fmt.Errorf("%s: field \"rows\" = %d: want the sweep's row count, at least the %d results the file holds", name, p.Rows, len(p.Results))
	}
	seen := make(map[int]bool, len(p.Results))
	for k := range p.Results {
		i := p.Results[k].Index
		switch {
		case i < 0 || i >= p.Rows:
			return fmt.Errorf("%s: results[%d]: field \"index\" = %d: want 0 <= index < rows (%d)", name, k, i, p.Rows)
		case p.Shard != nil && i%p.Shard.Count != p.Shard.Index:
			return fmt.Errorf("%s: results[%d]: field \"index\" = %d is not in shard %d/%d (index mod %d = %d)", name, k, i, p.Shard.Index, p.Shard.Count, p.Shard.Count, p.Shard.Index)
		case seen[i]:
			return fmt.Errorf("%s: results[%d]: field \"index\" = %d: row given twice", name, k, i)
		}
		seen[i] = true
		if s := p.Results[k].SameAs; s != nil && (*s < 0 || *s >= p.Rows) {
			return fmt.Errorf("%s: results[%d]: field \"same_as\" = %d: want 0 <= same_as < rows (%d)", name, k, *s, p.Rows)
		}
	}
	return nil
}

// ReadJSON reads a plan written by WriteJSON. It checks the shard header and the row indices
// (errors name the file and the field), so Merge can trust them.
func ReadJSON(r io.Reader, name string) (*Plan, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: not a servesim plan (JSON from 'servesim plan --format json'): %v", name, err)
	}
	if p.Format != FormatVersion {
		return nil, fmt.Errorf("%s: plan format %d: this servesim reads format %d", name, p.Format, FormatVersion)
	}
	if p.Question.Workload != nil {
		p.Question.Workload.HasSeed = true // the seed was resolved when the plan was made
	}
	if err := p.checkRows(name); err != nil {
		return nil, err
	}
	byIndex := map[int]*Result{}
	for i := range p.Results {
		byIndex[p.Results[i].Index] = &p.Results[i]
	}
	for i := range p.Results {
		upgradeIntervals(p.Results[i].Intervals)
	}
	for i := range p.Results {
		r := &p.Results[i]
		if r.SameAs != nil {
			if src := byIndex[*r.SameAs]; src != nil {
				if r.Perf != nil || len(r.Intervals) > 0 {
					return nil, fmt.Errorf("%s: results[%d] (row %d): field \"perf\": a row that shares row %d's simulation (same_as) takes its figures from it, and this file gives it its own", name, i, r.Index, *r.SameAs)
				}
				r.Perf, r.Intervals = src.Perf, src.Intervals
			}
		}
		if r.Status != StatusPruned && r.Perf == nil {
			return nil, fmt.Errorf("%s: result %d (%s) has no perf", name, r.Index, r.Status)
		}
	}
	if err := p.checkPlan(name); err != nil {
		return nil, err
	}
	if err := checkShared(p.Results, func(int) string { return name }); err != nil {
		return nil, err
	}
	if err := p.checkDerived(name); err != nil {
		return nil, err
	}
	return &p, nil
}

// Merge combines shard plans of one sweep into the plan of the whole sweep. Every shard of the
// same count must be present once (partial: missing shards are allowed and listed in a note).
func Merge(plans []*Plan, names []string, partial bool) (*Plan, error) {
	if len(plans) == 0 {
		return nil, fmt.Errorf("no plan to merge")
	}
	if len(names) != len(plans) {
		return nil, fmt.Errorf("planner: %d plans but %d names", len(plans), len(names))
	}
	for i, p := range plans {
		if err := p.checkRows(names[i]); err != nil {
			return nil, err
		}
		if err := p.checkPlan(names[i]); err != nil {
			return nil, err
		}
	}
	first := plans[0]
	count := 1
	if first.Shard != nil {
		count = first.Shard.Count
	}
	have := make([]string, count)
	out := &Plan{Format: FormatVersion, Fingerprint: first.Fingerprint, Question: first.Question, Rows: first.Rows, Notes: first.Notes}
	if count == 1 {
		// One unsharded plan: its search (shards are always exhaustive).
		out.Search = first.Search
	}
	for i, p := range plans {
		n, idx := 1, 0
		if p.Shard != nil {
			n, idx = p.Shard.Count, p.Shard.Index
		}
		switch {
		case p.Fingerprint != first.Fingerprint:
			return nil, fmt.Errorf("%s: fingerprint %s differs from %s's %s: the shards answer different questions (model, workload, GPUs, sweep, seed or parameters)", names[i], p.Fingerprint, names[0], first.Fingerprint)
		case n != count:
			return nil, fmt.Errorf("%s: shard of %d, but %s is a shard of %d", names[i], n, names[0], count)
		case p.Rows != first.Rows:
			return nil, fmt.Errorf("%s: field \"rows\" = %d, but %s has %d: the shards are of different sweeps", names[i], p.Rows, names[0], first.Rows)
		case have[idx] != "":
			return nil, fmt.Errorf("%s: shard %d/%d given twice (also %s)", names[i], idx, n, have[idx])
		case !slices.Equal(p.Notes, first.Notes):
			return nil, fmt.Errorf("%s: field \"notes\" differs from %s's: the shards of one question carry the same notes", names[i], names[0])
		case count > 1 && p.Search != nil:
			return nil, fmt.Errorf("%s: field \"search\": a shard simulates every row in full, and this one says it searched", names[i])
		}
		have[idx] = names[i]
		out.Results = append(out.Results, p.Results...)
	}
	from := make([]string, 0, len(out.Results))
	for i, p := range plans {
		for range p.Results {
			from = append(from, names[i])
		}
	}
	if err := checkShared(out.Results, func(k int) string { return from[k] }); err != nil {
		return nil, err
	}
	var missing []int
	for i, h := range have {
		if h == "" {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		if !partial {
			return nil, fmt.Errorf("shards %v of %d missing (use --partial to merge what is there)", missing, count)
		}
		out.Notes = append(out.Notes, fmt.Sprintf("partial: shards %v of %d are missing", missing, count))
	}
	sort.Slice(out.Results, func(i, j int) bool { return out.Results[i].Index < out.Results[j].Index })
	out.finalize()
	return out, nil
}
