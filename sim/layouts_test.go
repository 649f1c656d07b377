package sim

import (
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/cost"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/vtime"
)

// layoutMML is the max-model-len of the layouts' deployments: lowered from the seed's 1M so a
// random run reaches it often and stays cheap.
const layoutMML = 16384

// hybridServer is a small Qwen3-Next-like model: three linear-attention (Gated DeltaNet) layers
// for every full-attention GQA layer, so the KV cache has state groups and attention groups in
// one pool, a large unified block and, with prefix caching, block-aligned prefill chunks.
func hybridServer(t interface{ Fatal(...any) }) *Server {
	lin := arch.LayerGroup{Count: 3, Attn: arch.Attention{Kind: arch.AttnLinear, StateHeads: 8, StateKeyDim: 64, StateValDim: 64, ConvKernel: 4},
		FFN: arch.FFN{Kind: arch.FFNDense, Intermediate: 2048}}
	full := arch.LayerGroup{Count: 1, Attn: arch.Attention{Kind: arch.AttnGQA, Heads: 16, KVHeads: 2, HeadDim: 64},
		FFN: arch.FFN{Kind: arch.FFNDense, Intermediate: 2048}}
	a := &arch.Arch{Name: "tiny-hybrid", Family: "qwen3_next", Hidden: 1024, Vocab: 8000, Layers: []arch.LayerGroup{lin, full, lin, full}}
	if err := a.Normalize(); err != nil {
		t.Fatal(err)
	}
	g := hardware.GPU{Name: "toy", MemoryGiB: 4, BandwidthGBps: 1000, BF16TFLOPS: 100, FP8TFLOPS: 200, Link: hardware.LinkPCIe, LinkGBps: 32, LinkLatencyUS: 10}
	e := deploy.DefaultEngineConfig()
	e.MaxModelLen, e.MaxNumSeqs, e.MaxNumBatchedTokens = layoutMML, 64, 8192
	d := &deploy.Deployment{Model: a, Hardware: hardware.Machine{GPU: g, Count: 1}, Engine: e}
	p := param.Priors()
	p[param.NonTorchGiB], p[param.CUDAGraphGiB], p[param.ActivationBuffers] = 0.3, 0.1, 4
	s, err := NewServer(d, p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ResolvedFromTestdata resolves the scenario file under testdata ("" for the embedded seed) with
// its built-in calibration. Exported for the package's external tests (agree_test.go).
func ResolvedFromTestdata(t interface{ Fatal(...any) }, file string) *scenario.Resolved {
	sc := scenario.Default()
	if file != "" {
		var err error
		if sc, err = scenario.Load(filepath.Join("testdata", file)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := sc.Resolve(scenario.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// seedLayoutServer is the seed scenario (GLM-5.3-Flash: linear attention with sparse MLA, DSA
// indexer, MoE; DFlash drafter k = 7) from file ("" for the embedded seed), at layoutMML.
func seedLayoutServer(t interface{ Fatal(...any) }, file string) *Server {
	r := ResolvedFromTestdata(t, file)
	r.Deployment.Engine.MaxModelLen = layoutMML
	s, err := NewServer(r.Deployment, r.Params)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type layoutCase struct {
	name string
	spec bool // speculative decoding (DFlash)
	srv  func() *Server
}

func onceServer(build func(t interface{ Fatal(...any) }) *Server) func() *Server {
	return sync.OnceValue(func() *Server { return build(panicker{}) })
}

type panicker struct{}

func (panicker) Fatal(a ...any) { panic(fmt.Sprint(a...)) }

var layoutCases = []layoutCase{
	{"hybrid-linear-gqa", false, onceServer(hybridServer)},
	{"seed-sparse-mla", false, onceServer(func(t interface{ Fatal(...any) }) *Server {
		return seedLayoutServer(t, filepath.Join("agree", "seed-nospec.toml"))
	})},
	{"seed-dflash", true, onceServer(func(t interface{ Fatal(...any) }) *Server { return seedLayoutServer(t, "") })},
}

// checkedCost wraps the cost model and fails at once on a step duration, as the cost model gives
// it (before the engine rounds and clamps it), that is not positive and finite. It keeps the
// fast mode: it is a SpanCoster when the wrapped model is.
type checkedCost struct {
	SpanCoster
	fail func(format string, a ...any)
}

func (c *checkedCost) check(what string, s float64) {
	if !(s > 0 && !math.IsInf(s, 0)) {
		c.fail("the cost model says %s lasts %v s", what, s)
	}
}

func (c *checkedCost) Step(s *cost.StepShape) cost.StepCost {
	r := c.SpanCoster.Step(s)
	c.check(fmt.Sprintf("step of %d seqs, %d tokens", len(s.Seqs), s.Tokens), r.TotalSeconds)
	return r
}

func (c *checkedCost) StepFinish(totals cost.StepCost, per cost.SeqSeconds) cost.StepCost {
	r := c.SpanCoster.StepFinish(totals, per)
	c.check("a step (fast mode)", r.TotalSeconds)
	return r
}

func (c *checkedCost) Wall(gpu, cpu float64) float64 {
	r := c.SpanCoster.Wall(gpu, cpu)
	c.check(fmt.Sprintf("a span's step (GPU %v s, CPU %v s)", gpu, cpu), r)
	return r
}

// TestEngineInvariantsLayouts drives the layouts the tiny dense model of TestEngineInvariants
// does not have through the scheduler and the engine: a hybrid linear/full-attention model, the
// seed's sparse MLA with linear attention (no speculation: lazy decoders in the fast mode), and
// the seed with its DFlash drafter (k = 7: every decoder explicit, verify entries capped near
// max-model-len). Each draw shrinks the KV pool to between one and a few max-length requests (so
// requests queue, preempt and recompute), draws max-num-seqs and the token budget, and sends
// random arrivals with prompts up to max-model-len and outputs that often reach it, cancelling a
// few; a few draws run step by step. At every step: the scheduled tokens are within
// max-num-batched-tokens, the running requests within max-num-seqs (so is the batch), the cost
// model's step duration is positive and finite, the pool's blocks in use are within its total
// (and its own invariants hold). At the end: the engine is idle without error, no block leaked
// (every block is free or cached-free), and every request is accounted: finished (at max_tokens,
// or short of it only at max-model-len), cancelled, or refused by the client because its prompt
// leaves no room for a token (prompt >= max-model-len, which vLLM's API server refuses).
func TestEngineInvariantsLayouts(t *testing.T) {
	// 50 draws per layout, 10 with -short (rapid divides by 5), unless -rapid.checks is given.
	defer withRapidChecks(50)()
	for _, lc := range layoutCases {
		t.Run(lc.name, func(t *testing.T) {
			var st layoutStats
			rapid.Check(t, func(t *rapid.T) { layoutRun(t, lc, &st) })
			t.Logf("%+v", st)
		})
	}
}

// withRapidChecks sets rapid's number of checks to n unless -rapid.checks was given, and returns
// the function that restores it.
func withRapidChecks(n int) func() {
	f := flag.Lookup("rapid.checks")
	set := false
	flag.Visit(func(g *flag.Flag) { set = set || g == f })
	if f == nil || set {
		return func() {}
	}
	old := f.Value.String()
	if err := f.Value.Set(strconv.Itoa(n)); err != nil {
		panic(err)
	}
	return func() { f.Value.Set(old) }
}

// layoutStats counts what the draws exercised (logged with -v).
type layoutStats struct {
	Runs, StepByStep, Steps, Spans, Preemptions, RunsPreempting, AtModelLen, Cancelled, Refused, Finished, Foreseen int
}

func layoutRun(t *rapid.T, lc layoutCase, st *layoutStats) {
	srv := lc.srv()
	mml := srv.Deployment.Engine.MaxModelLen
	cfg := srv.SchedulerConfig()
	cfg.MaxNumSeqs = rapid.IntRange(1, 24).Draw(t, "max_num_seqs")
	cfg.MaxNumBatchedTokens = rapid.SampledFrom([]int{64, 512, 2048, 8192}).Draw(t, "max_num_batched_tokens")
	if cfg.AlignBlock > 0 {
		// A hybrid model with prefix caching cuts prompt chunks at its (large) block: a smaller
		// budget is refused at start (TestHybridBudgetBelowBlockRefused).
		cfg.MaxNumBatchedTokens = max(cfg.MaxNumBatchedTokens, cfg.AlignBlock)
	}
	if lc.spec {
		// vLLM needs room for 1 + k tokens per decoder in a step.
		cfg.MaxNumBatchedTokens = max(cfg.MaxNumBatchedTokens, cfg.MaxNumSeqs*(1+cfg.SpecTokens))
	}
	l := *srv.Layout
	per := l.BlocksPerRequestMax
	l.NumBlocks = per + rapid.IntRange(0, rapid.SampledFrom([]int{per / 4, per, 2 * per}).Draw(t, "extra_blocks_max")).Draw(t, "extra_blocks")
	stepByStep := rapid.IntRange(0, 3).Draw(t, "mode") == 0
	cc := &checkedCost{SpanCoster: srv.Cost}
	eng := New(Config{Scheduler: cfg, Layout: &l, EagleDrop: srv.Deployment.Engine.Speculative.EagleFamily(),
		Cost: cc, Seed: rapid.Uint64().Draw(t, "seed"), StepByStep: stepByStep})
	if eng.Fast() == stepByStep {
		t.Fatalf("fast mode %v with step by step %v", eng.Fast(), stepByStep)
	}
	pool := eng.Scheduler().KV().Pool
	// Foreseeing finishes: the engine then checks every step against its floor and every step's
	// finishes against what it foresaw, and stops with an error otherwise.
	foresee := rapid.Bool().Draw(t, "foresee")
	if foresee {
		err := eng.Foresee()
		if lc.spec != (err != nil) {
			t.Fatalf("Foresee with speculative decoding %v: error %v", lc.spec, err)
		}
		foresee = err == nil
		if foresee {
			st.Foreseen++
		}
	}

	n := rapid.IntRange(1, 32).Draw(t, "n")
	maxGap := rapid.SampledFrom([]int{0, 20, 500, 5000}).Draw(t, "max_gap_ms")
	type sent struct {
		rec     *Record
		refused string
	}
	reqs := make([]*sent, n)
	at := vtime.Time(0)
	for i := range reqs {
		at = at.Add(vtime.Duration(rapid.IntRange(0, maxGap).Draw(t, "gap_ms")) * vtime.Millisecond)
		var prompt int
		switch rapid.IntRange(0, 4).Draw(t, "prompt_kind") {
		case 0:
			prompt = rapid.IntRange(1, 512).Draw(t, "prompt")
		case 1:
			prompt = rapid.IntRange(1, mml).Draw(t, "prompt")
		case 2:
			prompt = rapid.IntRange(mml/2, mml).Draw(t, "prompt")
		default: // near max-model-len, sometimes past it
			prompt = mml - rapid.IntRange(-1, 64).Draw(t, "prompt_slack")
		}
		out := rapid.IntRange(1, rapid.SampledFrom([]int{16, 600, 6000, 6000}).Draw(t, "max_out")).Draw(t, "out")
		spec := RequestSpec{PromptTokens: prompt, MaxTokens: out, PromptID: uint64(rapid.IntRange(1, 4).Draw(t, "prompt_id")), Tag: i}
		if rapid.Bool().Draw(t, "shared_prefix") {
			spec.PrefixID, spec.PrefixTokens = 7, min(prompt, rapid.IntRange(1, 8192).Draw(t, "prefix"))
		}
		s := &sent{}
		reqs[i] = s
		eng.At(at, func(e *Engine) {
			if spec.PromptTokens >= mml {
				s.refused = fmt.Sprintf("prompt %d >= max-model-len %d", spec.PromptTokens, mml)
				return
			}
			s.rec = e.Submit(spec)
		})
	}
	cancels := rapid.IntRange(0, 3).Draw(t, "cancels")
	if foresee {
		cancels = 0 // a cancelled request would not finish as foreseen (TestForeseeRefusesCancel)
	}
	for i := 0; i < cancels; i++ {
		j := rapid.IntRange(0, n-1).Draw(t, "cancel_req")
		eng.At(vtime.Time(rapid.IntRange(0, 20_000).Draw(t, "cancel_ms"))*vtime.Time(vtime.Millisecond), func(e *Engine) {
			if reqs[j].rec != nil {
				e.Cancel(reqs[j].rec)
			}
		})
	}

	// Every step starts inside an event's handling; RunWhile's condition runs after each event,
	// so it sees every step the engine started (a span's steps share its first step's batch).
	var lastSteps int64
	var steps int64
	fail := func(format string, a ...any) {
		t.Fatalf("at %v, step %d (%s): %s", eng.Now(), eng.Steps, map[bool]string{true: "fast", false: "step by step"}[eng.Fast()], fmt.Sprintf(format, a...))
	}
	cc.fail = fail
	observe := func() bool {
		if used := pool.NumBlocks() - pool.NumFree(); pool.NumFree() < 0 || pool.NumFree() > pool.NumBlocks() || used > l.NumBlocks || pool.NumBlocks() != l.NumBlocks {
			fail("pool: %d of %d blocks free (layout %d)", pool.NumFree(), pool.NumBlocks(), l.NumBlocks)
		}
		pool.CheckInvariants()
		if eng.Steps == lastSteps {
			return true
		}
		steps++
		if eng.Steps-lastSteps > 1 {
			st.Spans++
		}
		lastSteps = eng.Steps
		b := &eng.batch
		tokens, seqs := 0, len(b.Entries)+b.Lazy.Implicit
		for i := range b.Entries {
			tokens += b.Entries[i].Tokens
		}
		tokens += b.Lazy.Implicit
		if tokens != b.NumTokens {
			fail("batch counts %d tokens, its entries %d", b.NumTokens, tokens)
		}
		if tokens > cfg.MaxNumBatchedTokens || tokens <= 0 {
			fail("%d tokens scheduled, max-num-batched-tokens %d", tokens, cfg.MaxNumBatchedTokens)
		}
		if r := eng.sched.NumRunning(); r > cfg.MaxNumSeqs || seqs > r || seqs > cfg.MaxNumSeqs {
			fail("%d running, %d in the batch, max-num-seqs %d", r, seqs, cfg.MaxNumSeqs)
		}
		if d := eng.LastStep.TotalSeconds; !(d > 0) || math.IsInf(d, 0) {
			fail("step lasts %v s", d)
		}
		for _, d := range eng.spanDur {
			if d <= 0 {
				fail("a span's step lasts %v", d)
			}
		}
		return true
	}
	if err := eng.RunWhile(observe, vtime.Never); err != nil {
		fail("run stopped: %v", err)
	}
	observe()
	if eng.sched.HasWork() || eng.busy {
		fail("idle with %d running, %d waiting, busy %v", eng.sched.NumRunning(), eng.sched.NumWaiting(), eng.busy)
	}
	if pool.NumFree() != pool.NumBlocks() {
		fail("after every request ended %d of %d blocks are free (cached %d): leak", pool.NumFree(), pool.NumBlocks(), pool.NumCached())
	}
	for i, s := range reqs {
		r := s.rec
		switch {
		case s.refused != "":
			if r != nil {
				fail("request %d refused (%s) and sent", i, s.refused)
			}
			continue
		case r == nil:
			fail("request %d neither sent nor refused", i)
		case r.Live():
			fail("request %d (prompt %d, max_tokens %d) still live: %d tokens, %d preemptions", i, r.Spec.PromptTokens, r.Spec.MaxTokens, r.Tokens, r.Preemptions)
		case r.Cancelled:
			if r.Finished {
				fail("request %d finished and cancelled", i)
			}
		case !r.Finished:
			fail("request %d ended neither finished nor cancelled", i)
		case r.Tokens > r.Spec.MaxTokens:
			fail("request %d: %d tokens > max_tokens %d", i, r.Tokens, r.Spec.MaxTokens)
		case r.Tokens < r.Spec.MaxTokens && r.Spec.PromptTokens+r.Tokens != mml:
			fail("request %d (prompt %d) finished with %d of %d tokens, not at max-model-len %d", i, r.Spec.PromptTokens, r.Tokens, r.Spec.MaxTokens, mml)
		case r.Tokens < 1 || r.FirstToken < r.Admitted || r.Admitted < r.Arrive || r.LastToken < r.FirstToken || r.End != r.LastToken:
			fail("request %d: %d tokens, arrive %v admitted %v first %v last %v end %v", i, r.Tokens, r.Arrive, r.Admitted, r.FirstToken, r.LastToken, r.End)
		case r.Preemptions == 0 && (r.Prefilled != r.PrefillOwed || r.PrefillOwed != r.Spec.PromptTokens-r.CachedTokens):
			fail("request %d: prefilled %d tokens, its admission owed %d (prompt %d - hit %d)", i, r.Prefilled, r.PrefillOwed, r.Spec.PromptTokens, r.CachedTokens)
		case r.Prefilled > r.PrefillOwed || r.Prefilled < r.Spec.PromptTokens-r.CachedTokens:
			// A request preempted during its prefill leaves that admission's prefill unpaid.
			fail("request %d: prefilled %d tokens, admissions owed %d, the last at least prompt %d - hit %d (preemptions %d)",
				i, r.Prefilled, r.PrefillOwed, r.Spec.PromptTokens, r.CachedTokens, r.Preemptions)
		}
	}
	st.Runs++
	st.Steps += int(eng.Steps)
	st.Preemptions += int(eng.sched.Preemptions)
	if eng.sched.Preemptions > 0 {
		st.RunsPreempting++
	}
	if stepByStep {
		st.StepByStep++
	}
	for _, s := range reqs {
		switch {
		case s.refused != "":
			st.Refused++
		case s.rec.Cancelled:
			st.Cancelled++
		default:
			st.Finished++
			if s.rec.Spec.PromptTokens+s.rec.Tokens == mml {
				st.AtModelLen++
			}
		}
	}
	if steps == 0 && anySent(reqs, func(s *sent) bool { return s.rec != nil && !s.rec.Cancelled }) {
		fail("no step observed")
	}
}

func anySent[T any](xs []T, f func(T) bool) bool {
	for _, x := range xs {
		if f(x) {
			return true
		}
	}
	return false
}

// TestHybridBudgetBelowBlockRefused: a hybrid model with prefix caching cuts prompt chunks at
// its KV-cache block (2,272 tokens on the seed, raised to hold a state page). With
// max_num_batched_tokens below it, every prompt longer than the budget was cut to 0 tokens and
// never admitted: the run stopped with "request at the head of the queue does not fit in the KV
// cache even with the engine idle", a wrong reason (found by TestEngineInvariantsLayouts). The
// deployment is now refused at start with the numbers; without prefix caching, or with a budget
// of one block, long prompts run.
func TestHybridBudgetBelowBlockRefused(t *testing.T) {
	build := func(budget int, prefix bool) (*Server, error) {
		r := seedNoSpec(t)
		r.Deployment.Engine.MaxModelLen, r.Deployment.Engine.MaxNumBatchedTokens = layoutMML, budget
		r.Deployment.Engine.PrefixCaching = prefix
		return NewServer(r.Deployment, r.Params)
	}
	_, err := build(512, true)
	if err == nil || !strings.Contains(err.Error(), "max_num_batched_tokens 512") || !strings.Contains(err.Error(), "block of 2272 tokens") {
		t.Fatalf("budget 512 below the seed's 2272-token block with prefix caching: err = %v, want a refusal naming both", err)
	}
	for _, c := range []struct {
		budget int
		prefix bool
	}{{512, false}, {2272, true}} {
		srv, err := build(c.budget, c.prefix)
		if err != nil {
			t.Fatalf("budget %d, prefix caching %v: %v", c.budget, c.prefix, err)
		}
		e := srv.NewEngine(1)
		rec := e.Submit(RequestSpec{PromptTokens: 5000, MaxTokens: 4, PromptID: 1})
		if err := e.RunUntilIdle(); err != nil || !rec.Finished {
			t.Errorf("budget %d, prefix caching %v: a 5000-token prompt finished %v, err %v", c.budget, c.prefix, rec.Finished, err)
		}
	}
}

// A cache too small for one max_model_len request is refused with advice on the setting that
// sized it: raising gpu_memory_utilization changes nothing once kv_cache_memory_bytes is set.
func TestTooSmallCacheNamesItsSetting(t *testing.T) {
	build := func(kvBytes int) error {
		r := seedNoSpec(t)
		r.Deployment.Engine.MaxModelLen = 1 << 20
		r.Deployment.Engine.KVCacheMemoryBytes = kvBytes
		_, err := NewServer(r.Deployment, r.Params)
		return err
	}
	if err := build(1 << 28); err == nil || !strings.Contains(err.Error(), "raise kv_cache_memory_bytes") {
		t.Errorf("256 MiB of cache set by kv_cache_memory_bytes: err = %v, want advice to raise kv_cache_memory_bytes", err)
	}
	if err := build(0); err != nil && strings.Contains(err.Error(), "kv_cache_memory_bytes") {
		t.Errorf("cache sized by gpu_memory_utilization: err = %v names kv_cache_memory_bytes", err)
	}
}

// seedNoSpec is the seed's deployment without speculative decoding, resolved with its parameters.
func seedNoSpec(t *testing.T) *scenario.Resolved {
	t.Helper()
	sc, err := scenario.Load(filepath.Join("testdata", "agree", "seed-nospec.toml"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := sc.Resolve(scenario.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
