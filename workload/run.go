package workload

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/protocol"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
)

// Options control a run.
type Options struct {
	// Seed is used when the spec does not set one (the scenario's seed).
	Seed uint64
	// Replicas splits the workload over this many identical engines, as data-parallel replicas
	// behind a round-robin balancer: request i goes to replica i mod Replicas, a closed loop's
	// or a bench cell's streams are dealt out the same way. 0 or 1: one engine. Replicas that
	// receive identical request lists are simulated once.
	Replicas int
	// Progress, if set, is called as requests complete, with the requests done and the total.
	Progress func(done, total int)
}

// replicas is the number of engines a run deals its requests over: Options.Replicas times the
// server's own data-parallel replicas (sim.Server.Replicas).
func (o Options) replicas(srv *sim.Server) int {
	return max(o.Replicas, 1) * max(srv.Replicas, 1)
}

// SeedFor is the seed a run uses: the spec's, else the caller's.
func (s *Spec) SeedFor(o Options) uint64 {
	if s.HasSeed {
		return s.Seed
	}
	return o.Seed
}

func (s *Spec) sampleInterval() vtime.Duration {
	if s.SampleIntervalS > 0 {
		return max(vtime.FromSeconds(s.SampleIntervalS), 1)
	}
	return vtime.Second
}

// Run simulates the workload on srv and measures it. The result depends only on the server, the
// spec and the seed.
func Run(srv *sim.Server, s *Spec, o Options) (*Metrics, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	srv, err := llmbench.WithSamePrompt(srv, s.SamePromptShare())
	if err != nil {
		return nil, err
	}
	if s.Kind == KindVLLMBench || s.Kind == KindOffline {
		return runVLLMBench(srv, s, o)
	}
	seed := s.SeedFor(o)
	r := o.replicas(srv)
	var parts []part
	switch s.Kind {
	case KindLLMBenchCell:
		loads := splitCount(s.Cell.Concurrency, r)
		for _, g := range groupInts(loads) {
			if g.v == 0 {
				continue
			}
			b := s.Cell
			b.Concurrency = g.v
			c, err := runBench(srv, b, seed, s.sampleInterval(), &s.SLO)
			if err != nil {
				return nil, err
			}
			parts = append(parts, part{c, g.n})
		}
	default:
		reqs, err := s.Requests(seed)
		if err != nil {
			return nil, err
		}
		conc := 0
		if s.Kind == KindClosed {
			conc = s.Closed.Concurrency
		}
		subs, concs := splitRequests(reqs, conc, r)
		seen := map[uint64]int{}
		total := len(reqs)
		done := 0
		for i := range subs {
			if len(subs[i]) == 0 {
				continue
			}
			key := listKey(subs[i], concs[i])
			if j, ok := seen[key]; ok {
				parts[j].mult++
				done += len(subs[i])
				continue
			}
			var prog func(int)
			if o.Progress != nil {
				base := done
				prog = func(n int) { o.Progress(base+n, total) }
			}
			c, err := runList(srv, subs[i], concs[i], seed, s.sampleInterval(), &s.SLO, prog)
			if err != nil {
				return nil, err
			}
			seen[key] = len(parts)
			parts = append(parts, part{c, 1})
			done += len(subs[i])
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("workload %q: no request to simulate", s.Name)
	}
	return summarise(s, seed, parts, r), nil
}

// splitCount deals n items over r replicas round-robin: replica i gets n/r, plus one if i < n%r.
func splitCount(n, r int) []int {
	out := make([]int, r)
	for i := range out {
		out[i] = n / r
		if i < n%r {
			out[i]++
		}
	}
	return out
}

type intGroup struct{ v, n int }

// groupInts counts equal values, in order of first appearance.
func groupInts(v []int) []intGroup {
	var out []intGroup
outer:
	for _, x := range v {
		for i := range out {
			if out[i].v == x {
				out[i].n++
				continue outer
			}
		}
		out = append(out, intGroup{x, 1})
	}
	return out
}

// splitRequests deals requests round-robin over r replicas; a closed loop's streams likewise,
// and then only over replicas that have a stream.
func splitRequests(reqs []Request, conc, r int) ([][]Request, []int) {
	subs := make([][]Request, r)
	concs := make([]int, r)
	active := r
	if conc > 0 {
		copy(concs, splitCount(conc, r))
		active = min(conc, r)
	}
	if active == 1 {
		subs[0] = reqs
		return subs, concs
	}
	for i, q := range reqs {
		subs[i%active] = append(subs[i%active], q)
	}
	return subs, concs
}

// listKey fingerprints a replica's load, so identical replicas are simulated once. Content ids
// are left out: they only name prompts, and equal shapes behave identically whatever the names,
// as long as the sharing pattern (which requests have equal ids) is the same, which holds for
// lists dealt from one generator at equal positions.
func listKey(reqs []Request, conc int) uint64 {
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	put(uint64(conc))
	put(uint64(len(reqs)))
	for i := range reqs {
		q := &reqs[i]
		put(uint64(q.At))
		put(uint64(q.InputTokens)<<32 | uint64(q.OutputTokens))
		put(uint64(q.PrefixTokens))
		put(q.PrefixID)
		put(q.PromptID & (promptIDBase - 1) >> 62) // only whether prompts are identical matters
		put(uint64(len(q.Blocks)))
		for _, id := range q.Blocks {
			put(id) // which requests share spans matters: the ids themselves are that pattern here
		}
	}
	return h.Sum64()
}

// runner drives one engine.
type runner struct {
	srv *sim.Server
	eng *sim.Engine
	col *collector
	// measuring turns on with the first measured request: the inter-token gaps before it are the
	// warm-ups' (which end before measured requests start).
	measuring bool
	live      int
	armed     bool
	every     vtime.Duration
	sampleF   func(*sim.Engine)
	// timer, if set, schedules the next KV sample instead of an engine timer: a caller that owns
	// the clock (Replica) calls sample at that time.
	timer func(t vtime.Time)
}

// newRunner starts a fresh engine on the server.
func newRunner(srv *sim.Server, seed uint64, every vtime.Duration, slo *SLO) *runner {
	return newRunnerOn(srv, srv.NewEngine(seed), every, slo)
}

// newRunnerOn drives a fresh engine built by the caller. Once measuring, every inter-token gap
// the engine reports goes to the ITL histogram.
func newRunnerOn(srv *sim.Server, eng *sim.Engine, every vtime.Duration, slo *SLO) *runner {
	r := &runner{srv: srv, eng: eng, col: &collector{slo: slo, itl: newITLHist()}, every: every}
	r.col.kv.interval = every
	r.sampleF = r.sample
	r.eng.Hooks.OnGap = func(gap vtime.Duration, n int) {
		if r.measuring {
			r.col.holdGap(int64(gap), uint64(n))
		}
	}
	return r
}

// submit sends a request; measured says it counts in the metrics (not a warm-up's).
func (r *runner) submit(spec sim.RequestSpec, measured bool) *sim.Record {
	rec := r.eng.Submit(spec)
	r.measuring = r.measuring || measured
	r.live++
	r.arm()
	return rec
}

func (r *runner) cancel(rec *sim.Record) {
	if rec.Live() {
		r.live--
		r.eng.Cancel(rec)
	}
}

// arm schedules the next KV sample on the grid of multiples of the interval.
func (r *runner) arm() {
	if r.armed {
		return
	}
	now := r.eng.Now()
	t := vtime.Time((int64(now)/int64(r.every) + 1) * int64(r.every))
	r.armed = true
	if r.timer != nil {
		r.timer(t)
		return
	}
	r.eng.At(t, r.sampleF)
}

// sample records the KV state; it re-arms while anything is in flight, so an idle engine's event
// queue empties.
func (r *runner) sample(e *sim.Engine) {
	r.armed = false
	s := e.Scheduler()
	r.col.kv.add(e.Now(), s.KV().Pool.Usage(), s.NumRunning(), s.NumWaiting()+e.Pending())
	if w := r.col.watch; w != nil {
		w.observe(e.Now(), r.live-s.NumRunning(), s.NumRunning(), s.KV().Pool.Usage())
	}
	if s.HasWork() || r.live > 0 {
		r.arm()
	}
}

// finished accounts a request that received its last token: one fewer live, its record, and the
// completed requests' counts, input the prompt tokens it counts for.
func (r *runner) finished(rec *sim.Record, input int) {
	r.live--
	r.record(rec)
	c := r.col
	c.completed++
	c.inputTokens += int64(input)
	c.outputTokens += int64(rec.Tokens)
	c.verifierSteps += int64(rec.VerifierSteps(r.srv.Deployment.Engine.SpecTokens() > 0))
}

// record adds a request's latencies.
func (r *runner) record(rec *sim.Record) {
	c := r.col
	s := reqSample{ttft: math.NaN(), tpot: math.NaN(), e2e: math.NaN(), queue: math.NaN(), output: rec.Tokens}
	// Milliseconds as seconds x 1e3, the benchmark's arithmetic, so bench cells match bit for bit.
	if rec.FirstToken >= 0 {
		s.ttft = rec.FirstToken.Sub(rec.Send).Seconds() * 1e3
	}
	if rec.Tokens >= 2 {
		s.tpot = rec.LastToken.Sub(rec.FirstToken).Seconds() * 1e3 / float64(rec.Tokens-1)
	}
	if rec.Finished {
		s.e2e = rec.End.Sub(rec.Send).Seconds() * 1e3
	}
	if rec.Admitted >= 0 && rec.Arrive >= 0 {
		s.queue = rec.Admitted.Sub(rec.Arrive).Seconds() * 1e3
	}
	c.hold(&s)
	c.requests++
	c.allOut += int64(s.output)
	if c.slo != nil && c.slo.Any() && meets(&s, c.slo) {
		c.good++
		c.goodOut += int64(s.output)
	}
	c.preemptions += rec.Preemptions
	if rec.Preemptions > 0 {
		c.preempted++
	}
}

func (r *runner) finishStats() {
	r.col.steps = r.eng.Steps
	r.col.simEnd = r.eng.Now()
}

// runList simulates a closed loop (conc > 0: conc clients, each sending the next request when its
// previous one completes) or open-loop arrivals (conc == 0: each request at its At time).
func runList(srv *sim.Server, reqs []Request, conc int, seed uint64, every vtime.Duration, slo *SLO, progress func(int)) (*collector, error) {
	r := newRunner(srv, seed, every, slo)
	e := r.eng
	c := r.col
	mml := srv.Deployment.Engine.MaxModelLen
	if conc == 0 {
		c.watch = newOverloadWatch(reqs, mml, srv.Deployment.Engine.MaxNumSeqs)
	}
	next := 0
	done := 0
	step := max(len(reqs)/100, 1)
	// send submits the request at next, or counts it rejected when it exceeds max_model_len
	// (vLLM's API server refuses it); it returns false when the request was rejected.
	send := func() bool {
		q := &reqs[next]
		next++
		c.submitted++
		if q.InputTokens+q.OutputTokens > mml {
			c.rejected++
			return false
		}
		r.submit(sim.RequestSpec{PromptTokens: q.InputTokens, MaxTokens: q.OutputTokens, PromptID: q.PromptID, PromptUnique: q.PromptUnique,
			PrefixID: q.PrefixID, PrefixTokens: q.PrefixTokens, Blocks: q.Blocks, BlockSpan: q.BlockSpan, Tag: next - 1}, true)
		return true
	}
	closedNext := func() {
		for next < len(reqs) && !send() {
		}
	}
	var last vtime.Time
	e.Hooks.OnTokens = func(e *sim.Engine, rec *sim.Record, n int, fin bool) {
		if !fin {
			return
		}
		r.finished(rec, reqs[rec.Spec.Tag].InputTokens)
		last = e.Now()
		done++
		if progress != nil && done%step == 0 {
			progress(done)
		}
		if conc > 0 {
			closedNext()
		}
	}
	if conc > 0 {
		for i := 0; i < conc && next < len(reqs); i++ {
			closedNext()
		}
	} else if len(reqs) > 0 {
		var arrive func(*sim.Engine)
		arrive = func(e *sim.Engine) {
			for next < len(reqs) && reqs[next].At <= e.Now() {
				send()
			}
			if next < len(reqs) {
				e.At(reqs[next].At, arrive)
			}
		}
		e.At(reqs[0].At, arrive)
	}
	if err := e.RunUntilIdle(); err != nil {
		return nil, err
	}
	if progress != nil {
		progress(len(reqs))
	}
	c.durationS = last.Seconds()
	r.finishStats()
	return c, nil
}

// BenchSeed is the engine seed of a decode cell of tokens x concurrency in a run seeded with seed:
// llmbench's per-job seed, so that a cell simulated alone is the cell of the matrix.
func BenchSeed(seed uint64, tokens, concurrency int) uint64 {
	return llmbench.JobSeed(seed, &protocol.Job{Phase: matrix.Decode, Tokens: tokens, Concurrency: concurrency})
}

// runBench runs one llm-inference-bench decode cell as the tool runs a matrix of that one cell
// (protocol.Protocol.Schedule on llmbench.Session): the hidden warm-ups, then the cell, whose scout
// is the cold first use of its prompt. It keeps every stream request's latencies. Throughput
// counts the window; latencies count every stream request.
func runBench(srv *sim.Server, b LLMBenchCell, seed uint64, every vtime.Duration, slo *SLO) (*collector, error) {
	p := b.Protocol()
	tokens, err := p.FitContext(b.Context, srv.Deployment.Engine.MaxModelLen)
	if err != nil {
		return nil, fmt.Errorf("bench.context %s: %w", b.Context, err)
	}
	c := b.Concurrency
	r := newRunner(srv, BenchSeed(seed, tokens, c), every, slo)
	col := r.col
	if p.OverCapacity(c, tokens, srv.Layout.KVCacheSizeTokens) {
		col.status = string(matrix.OverCapacity)
		return col, nil
	}
	jobs, stages, err := p.Schedule(srv.Deployment.Engine.MaxModelLen, srv.Layout.KVCacheSizeTokens)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	opt := llmbench.CellOptions{
		OnSubmit: func(rec *sim.Record) {
			r.measuring = true
			r.live++
			r.arm()
		},
		OnTokens: func(rec *sim.Record, n int, done bool, now vtime.Time) {
			if done {
				r.live--
			}
		},
		OnCancel: func(*sim.Record) { r.live-- },
	}
	if b.ReadyLimitS > 0 {
		opt.ReadyLimit = vtime.FromSeconds(b.ReadyLimitS)
	}
	s := llmbench.NewSession(r.eng, srv, &p, seed)
	var run *llmbench.CellRun
	var job *protocol.Job
	for i := range stages {
		st := &stages[i]
		switch st.Kind {
		case protocol.StageWarmup, protocol.StageWarmupDecode:
			err = s.Warmup(st)
		case protocol.StagePrefill:
			_, err = s.Prefill(&jobs[st.Job])
		case protocol.StageCell:
			job = &jobs[st.Job]
			run, err = s.Cell(job, opt)
		}
		if err != nil {
			return nil, err
		}
	}
	if run == nil {
		return nil, fmt.Errorf("bench: the schedule ran no decode cell for %s x %d", b.Context, c)
	}
	if run.Gate == protocol.GateGaveUp {
		return nil, fmt.Errorf("decode %s x %d: at most %d of the %d streams ran at once in %g simulated seconds: the KV cache cannot hold them all (%d preemptions)",
			b.Context, c, run.Peak, c, b.ReadyLimitS, r.eng.Scheduler().Preemptions)
	}
	for _, rec := range run.Records {
		r.record(rec)
	}
	col.completed = run.Completed
	col.inputTokens = int64(run.Completed) * int64(tokens)
	col.cancelled = run.Cancelled
	col.submitted = len(run.Records)
	col.outputTokens = int64(run.WindowTokens)
	col.verifierSteps = int64(run.WindowSteps)
	// The tool's throughput: the window's tokens over the time to the last of them.
	cell := run.Cell(job)
	col.durationS = cell.MeasuredS
	col.status = string(cell.Status)
	r.finishStats()
	return col, nil
}
