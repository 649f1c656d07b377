package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/servesim/servesim/kvcache"
	"github.com/servesim/servesim/model/cost"
	"github.com/servesim/servesim/scheduler"
	"github.com/servesim/servesim/vtime"
)

// StepCoster gives the wall time of one engine step. *cost.Model implements it.
type StepCoster interface {
	Step(s *cost.StepShape) cost.StepCost
	FrontendSeconds(promptTokens int) float64
}

// SpanCoster is what the fast mode needs from the cost model besides a StepCoster: a request's
// own terms, and a step priced from its totals and the sum of those terms (package cost, span.go).
// *cost.Model implements it; an engine whose cost model does not runs step by step.
type SpanCoster interface {
	StepCoster
	Seq(w cost.SeqWork) cost.SeqSeconds
	StepTotals(n *cost.StepCounts) cost.StepCost
	StepFinish(totals cost.StepCost, per cost.SeqSeconds) cost.StepCost
	Wall(gpuSeconds, cpuSeconds float64) float64
}

// RequestSpec is what a client sends.
type RequestSpec struct {
	PromptTokens int
	MaxTokens    int
	// PromptID identifies the prompt's content: equal IDs are identical prompts.
	PromptID uint64
	// PromptUnique promises that no other request has PromptID: once this one is done, no lookup
	// can hit its prompt, and the fast mode reuses its blocks as blocks without content.
	PromptUnique bool
	// PrefixID/PrefixTokens identify a shared leading part of otherwise different prompts.
	PrefixID     uint64
	PrefixTokens int
	// Blocks names the prompt span by span, BlockSpan tokens each (a trace's prefix-block hash
	// ids): prompts whose leading ids agree share those blocks in the prefix cache
	// (kvcache.Content). Nil: PromptID and PrefixID alone name the prompt.
	Blocks    []uint64
	BlockSpan int
	// Tag is free for the client (stream index, workload row).
	Tag int
}

// Chunk is one streamed delivery of tokens.
type Chunk struct {
	At     vtime.Time
	Tokens int
}

// Record is everything the simulation knows about one request, from the client's side.
type Record struct {
	ID   scheduler.RequestID
	Spec RequestSpec
	// Send is when the client sent it; Arrive when the engine queued it (after the frontend);
	// Admitted when the scheduler first took it from the waiting queue (-1 before).
	Send, Arrive, Admitted vtime.Time
	// FirstToken and LastToken are -1 until a token arrives.
	FirstToken, LastToken vtime.Time
	// End is when it finished or was cancelled (-1 while live).
	End    vtime.Time
	Tokens int
	// Steps counts the steps that delivered its tokens one by one (the fast mode's bulk
	// deliveries, which run only without speculative decoding, one token per step, are not
	// counted here: there Steps is Tokens; VerifierSteps says which).
	Steps     int
	Finished  bool // reached max_tokens or max_model_len
	Cancelled bool
	// Chunks is filled only when Engine.KeepChunks is set.
	Chunks []Chunk
	// Engine-side facts.
	Preemptions  int
	CachedTokens int // prefix-cache hit at the last admission
	Prefilled    int // tokens computed in prefill chunks, recomputation included
	PrefillOwed  int // tokens the admissions required (known tokens minus the cache hit, summed)
	req          *scheduler.Request
}

// Live reports whether the request has not finished or been cancelled.
func (r *Record) Live() bool { return r.End < 0 }

// VerifierSteps is the number of steps in which the request received tokens: Steps with
// speculative decoding (spec true), where every step is visited and delivers 1 + accepted
// drafts, else Tokens (one token per step).
func (r *Record) VerifierSteps(spec bool) int {
	if spec {
		return r.Steps
	}
	return r.Tokens
}

// Hooks lets a client react to the engine. Every hook runs inside the event loop, at simulated
// time now; it may submit or cancel requests and set timers.
type Hooks struct {
	// OnTokens is called when a request receives n tokens (done is true on its last delivery).
	// In the fast mode (see doc.go) it is called for a request's first delivery, its last, and
	// the deliveries of steps in which the request is visited; the deliveries in between are
	// reported in bulk, through OnGap and Engine.Generated.
	OnTokens func(e *Engine, r *Record, n int, done bool)
	// OnGap, if set, is called for inter-token gaps: n deliveries, each gap after the previous
	// delivery to the same request (vLLM's inter-token latency), in both modes.
	OnGap func(gap vtime.Duration, n int)
}

// Config sets up an engine.
type Config struct {
	// Limits guard against runaway runs. (First: every event reads them, with the fields that
	// end the engine's hot part.)
	MaxEvents  int64
	MaxSimTime vtime.Time
	// AsyncScheduling is vLLM's async scheduling (deploy.Engine.AsyncScheduling): step n+1 is
	// scheduled when step n starts, so a request that arrives while a step runs joins the step
	// after the next one (see doc.go, "Async scheduling").
	AsyncScheduling bool
	Scheduler       scheduler.Config
	Layout          *kvcache.Layout
	EagleDrop       bool
	Cost            StepCoster
	// Seed for the acceptance draws.
	Seed uint64
	// StepByStep forces the reference mode: every step built, priced and applied request by
	// request (scheduler.Schedule, StepCoster.Step, scheduler.Update). Otherwise, when Cost is a
	// SpanCoster, the engine runs in the fast mode (see doc.go), which agrees with it.
	StepByStep bool
}

// ErrLimit is returned when a run exceeds its event or simulated-time guard.
var ErrLimit = errors.New("simulation limit reached")

// Engine is a deterministic discrete-event simulation of one serving engine: a virtual clock, an
// event queue with a total order (time, class, sequence), the scheduler and the cost model. It has
// no goroutines and no wall clock.
type Engine struct {
	// The fields an event reads or writes come first, in as few cache lines as they fit: a
	// fleet interleaves a hundred engines, and each engine's state is out of the processor's
	// caches when its next event comes.
	now   vtime.Time
	q     eventQueue
	seq   uint64
	sched *scheduler.Scheduler
	busy  bool
	// Fast mode.
	fast bool
	// Finish foresight (Foresee): finishing is how many requests the running step will finish,
	// floor the shortest a step may last.
	foresee bool
	// KeepChunks records every delivery in Record.Chunks (step-by-step mode only: the fast mode
	// keeps no per-token record).
	KeepChunks bool
	err        error
	events     int64
	barrier    vtime.Time // the running Run call's time limit: no span ends after it
	fc         SpanCoster
	batch      scheduler.Batch
	spanDur    []vtime.Duration // the durations of the steps the running batch stands for
	lastEnd    vtime.Time       // when the last step ended
	// lastDelivery is when tokens were last delivered (-1 before any).
	lastDelivery vtime.Time
	// Async scheduling: stepStart is when the running (or last) step started; pending holds, in
	// arrival order, the arrivals the scheduler cannot see yet (they arrived after stepStart while
	// the step ran, or after such arrivals).
	stepStart vtime.Time
	// stepEnd is when the running step (or span) ends, while busy; timers counts the queued
	// client timers (NextWake).
	stepEnd vtime.Time
	timers  int
	pending []*Record
	// spare holds records given back (Recycle) for Submit to reuse.
	spare     []*Record
	finishing int
	floor     vtime.Duration
	// usedFloor is the fewest KV blocks in use until the step after the running one ends, or -1
	// (scheduler.Scheduler.UsedFloor); floorEnd is the running step's end, when it was given.
	usedFloor int
	floorEnd  vtime.Time

	// Statistics.
	Steps int64
	// Generated counts every token delivered to a client (vLLM's generation-token counter).
	Generated int64
	// Verified counts, summed over requests, the steps in which a request received tokens: its
	// verifier steps (one token each without speculative decoding; 1 + accepted drafts with it),
	// so Generated / Verified is the mean acceptance length vLLM reports.
	Verified     int64
	BusyTime     vtime.Duration
	runIntegral  float64 // integral of num_requests_running over time, request-seconds
	lastRunCount int
	lastRunT     vtime.Time

	Hooks  Hooks
	nextID scheduler.RequestID
	// frontendFree is when the API server finishes the prompts it has accepted.
	frontendFree vtime.Time
	cost         StepCoster
	// The last step's totals and their priced part (steady decoding repeats them).
	totalsOf cost.StepCounts
	totals   cost.StepCost
	LastStep cost.StepCost
	// cfg's limits (its first fields) are read at every event too.
	cfg Config

	// The step-by-step mode's shape of the batch.
	shape cost.StepShape
	// src is the acceptance draws' source (Reseed restarts it).
	src *rand.PCG
}

// New builds an engine.
func New(cfg Config) *Engine {
	kv := kvcache.NewManager(cfg.Layout, cfg.EagleDrop)
	src := newSource(cfg.Seed)
	if cfg.MaxEvents == 0 {
		cfg.MaxEvents = 50_000_000
	}
	if cfg.MaxSimTime == 0 {
		cfg.MaxSimTime = vtime.Time(30 * 24 * 3600 * vtime.Second)
	}
	e := &Engine{sched: scheduler.New(cfg.Scheduler, kv, rand.New(src)), src: src, cost: cfg.Cost, cfg: cfg, barrier: vtime.Never, lastDelivery: -1}
	if fc, ok := cfg.Cost.(SpanCoster); ok && !cfg.StepByStep {
		e.fast, e.fc = true, fc
		e.sched.EnableLazy(fc)
		e.sched.OnMaterialise = e.materialised
	}
	return e
}

// Fast reports whether the engine runs in the fast mode (see doc.go); false: step by step.
func (e *Engine) Fast() bool { return e.fast }

// LastDelivery is when tokens were last delivered to a client (-1 before any).
func (e *Engine) LastDelivery() vtime.Time { return e.lastDelivery }

// materialised brings the record of a request the fast mode has advanced without visiting it up
// to date: it received one token at the end of each of the steps applied since.
func (e *Engine) materialised(req *scheduler.Request, steps int) {
	if rec, _ := req.Owner.(*Record); rec != nil {
		rec.Tokens = req.Output
		rec.LastToken = e.lastEnd
	}
}

// Sync brings r's token count and last-token time up to date (in the fast mode they may lag while
// the request decodes without events; hooks always see them current).
func (e *Engine) Sync(r *Record) {
	if r.req == nil || !e.fast {
		return
	}
	if _, out := e.sched.Current(r.req); out != r.Tokens {
		r.Tokens = out
		r.LastToken = e.lastEnd
	}
}

// Reseed restarts the acceptance draws from seed, as if the engine had been built with it. A
// benchmark that runs many cells on one engine reseeds at each cell, so a cell's draws do not
// depend on how many steps the cells before it took.
func (e *Engine) Reseed(seed uint64) { seedSource(e.src, seed) }

// Now is the simulated time.
func (e *Engine) Now() vtime.Time { return e.now }

// Scheduler exposes the scheduler (read-only use).
func (e *Engine) Scheduler() *scheduler.Scheduler { return e.sched }

// Err is the first error the run hit (a guard), or nil.
func (e *Engine) Err() error { return e.err }

// Submit sends a request now; it reaches the engine after the frontend's processing time.
func (e *Engine) Submit(spec RequestSpec) *Record {
	e.nextID++
	var r *Record
	if n := len(e.spare); n > 0 {
		r = e.spare[n-1]
		e.spare = e.spare[:n-1]
	} else {
		r = new(Record)
	}
	*r = Record{ID: e.nextID, Spec: spec, Send: e.now, Arrive: -1, Admitted: -1, FirstToken: -1, LastToken: -1, End: -1}
	// The API server processes prompts one at a time (tokenisation is CPU-bound in one process):
	// a burst of long prompts reaches the engine staggered.
	d := vtime.FromSeconds(e.cost.FrontendSeconds(spec.PromptTokens))
	begin := max(e.now, e.frontendFree)
	e.frontendFree = begin.Add(d)
	e.push(event{at: e.frontendFree, class: classArrival, rec: r})
	return r
}

// Recycle gives back the record of a request that has ended, which the caller no longer holds:
// a later Submit reuses it. An engine of a fleet then writes its records into memory its
// processor's caches hold, instead of memory the garbage collector has not seen for a while.
func (e *Engine) Recycle(r *Record) {
	if r.Live() {
		panic(fmt.Sprintf("sim: recycling request %d, still live", r.ID))
	}
	e.spare = append(e.spare, r)
}

// Cancel aborts a request (the client closed its stream).
func (e *Engine) Cancel(r *Record) {
	if !r.Live() {
		return
	}
	if e.foresee {
		e.fail(fmt.Errorf("internal error: request %d cancelled at %v while the engine foresees its finishes", r.ID, e.now))
	}
	e.noteRunning()
	r.Cancelled = true
	r.End = e.now
	if r.req != nil {
		e.sched.Abort(r.req)
		r.req.Owner = nil
		r.req = nil
	}
	e.maybeStep()
}

// At schedules fn at time t (>= now).
func (e *Engine) At(t vtime.Time, fn func(*Engine)) {
	if t < e.now {
		panic(fmt.Sprintf("sim: timer at %v before now %v", t, e.now))
	}
	e.timers++
	e.push(event{at: t, class: classTimer, fn: fn})
}

func (e *Engine) push(ev event) {
	e.seq++
	ev.seq = e.seq
	e.q.push(ev)
}

// noteRunning accumulates the num_requests_running integral up to now.
func (e *Engine) noteRunning() {
	e.runIntegral += float64(e.lastRunCount) * e.now.Sub(e.lastRunT).Seconds()
	e.lastRunT = e.now
	e.lastRunCount = e.sched.NumRunning()
}

// RunningIntegral returns the integral of num_requests_running up to now, in request-seconds.
func (e *Engine) RunningIntegral() float64 {
	return e.runIntegral + float64(e.lastRunCount)*e.now.Sub(e.lastRunT).Seconds()
}

// Pending is the number of requests that have reached the engine but that, with async
// scheduling, the scheduler does not see yet (vLLM has them in its waiting queue, behind a step
// already scheduled).
func (e *Engine) Pending() int { return len(e.pending) }

// release hands the scheduler the pending arrivals it sees when it schedules a step now: those
// that arrived at or before the start of the step that just ended, or all of them when nothing
// else is visible (the engine would idle: a request reaching an idle engine starts at once).
func (e *Engine) release(all bool) {
	n := 0
	for n < len(e.pending) && (all || e.pending[n].Arrive <= e.stepStart) {
		if rec := e.pending[n]; rec.Live() {
			e.enqueue(rec)
		}
		n++
	}
	if n > 0 {
		k := copy(e.pending, e.pending[n:])
		clear(e.pending[k:])
		e.pending = e.pending[:k]
	}
}

// maybeStep starts a step if the GPU is idle and there is work.
func (e *Engine) maybeStep() {
	if e.busy || e.err != nil {
		return
	}
	if len(e.pending) > 0 {
		e.release(false)
		if !e.sched.HasWork() {
			e.release(true)
		}
	}
	if !e.sched.HasWork() {
		return
	}
	if e.fast {
		e.maybeSpan()
		return
	}
	e.sched.Schedule(&e.batch)
	e.noteRunning()
	if len(e.batch.Entries) == 0 {
		if len(e.pending) > 0 {
			// Nothing to run: the engine idles, so it sees every arrival.
			e.release(true)
			e.maybeStep()
			return
		}
		if e.sched.NumRunning() == 0 && e.sched.NumWaiting() > 0 {
			// Nothing runs and the head of the queue can never be admitted.
			e.fail(fmt.Errorf("at %v: request at the head of the queue does not fit in the KV cache even with the engine idle", e.now))
		}
		return
	}
	e.noteAdmitted()
	e.batch.Shape(&e.shape)
	c := e.cost.Step(&e.shape)
	e.LastStep = c
	d := vtime.FromSeconds(c.TotalSeconds)
	if d <= 0 {
		d = 1
	}
	if e.tooLong(&c, d) {
		return
	}
	e.busy = true
	e.stepStart = e.now
	e.Steps++
	e.BusyTime += d
	e.stepEnd = e.now.Add(d)
	if e.foresee {
		e.checkStep(d)
		e.foreseeStep()
	}
	e.push(event{at: e.stepEnd, class: classStep})
}

// noteAdmitted stamps the first admission of the requests the batch admitted.
func (e *Engine) noteAdmitted() {
	for i := range e.batch.Entries {
		if en := &e.batch.Entries[i]; en.Admitted && en.Req.Admitted == 1 {
			if rec, _ := en.Req.Owner.(*Record); rec != nil {
				rec.Admitted = e.now
			}
		}
	}
}

// maxSpan bounds the steps one event may stand for, so a span's durations stay a small slice.
const maxSpan = 1 << 16

// maybeSpan is maybeStep in the fast mode: the scheduler visits only the requests with something
// to do (scheduler.ScheduleLazy), the step is priced from its totals and the sum of its requests'
// own terms, and when nothing but lazy decoders runs, one event stands for the steps until the
// next thing happens: the next lazy decoder due, the next queued event, or the end of the Run call.
// Each of those steps is priced as it would be alone (its decoders' terms are affine in the step
// index), so the span's steps and their end times are those of as many single steps.
func (e *Engine) maybeSpan() {
	b := &e.batch
	e.sched.ScheduleLazy(b)
	e.noteRunning()
	if len(b.Entries) == 0 && b.Lazy.Implicit == 0 {
		if len(e.pending) > 0 {
			e.release(true)
			e.maybeStep()
			return
		}
		if e.sched.NumRunning() == 0 && e.sched.NumWaiting() > 0 {
			e.fail(fmt.Errorf("at %v: request at the head of the queue does not fit in the KV cache even with the engine idle", e.now))
		}
		return
	}
	e.noteAdmitted()
	n := cost.StepCounts{Seqs: len(b.Entries) + b.Lazy.Implicit, Tokens: b.NumTokens,
		DecodeSeqs: b.Lazy.Implicit, DecodeTokens: b.Lazy.Implicit, EmitSeqs: b.Lazy.Implicit}
	for i := range b.Entries {
		en := &b.Entries[i]
		if en.Decode {
			n.DecodeSeqs++
			n.DecodeTokens += en.Tokens
		}
		if en.Emits {
			n.EmitSeqs++
		}
		n.MaxTokens = max(n.MaxTokens, en.Tokens)
	}
	if b.Lazy.Implicit > 0 {
		n.MaxTokens = max(n.MaxTokens, 1)
	}
	if n != e.totalsOf || e.Steps == 0 {
		// Through the field: &n would move n to the heap (an interface call), once per event.
		e.totalsOf = n
		e.totals = e.fc.StepTotals(&e.totalsOf)
	}
	c := e.fc.StepFinish(e.totals, b.Lazy.Sum)
	e.LastStep = c
	d := max(vtime.FromSeconds(c.TotalSeconds), 1)
	if e.tooLong(&c, d) {
		return
	}
	e.spanDur = append(e.spanDur[:0], d)
	end := e.now.Add(d)
	if b.Lazy.Span > 1 && len(e.pending) == 0 {
		// (With arrivals pending, the next step's scheduling sees some of them: a visibility
		// point, so the span is this one step.)
		limit := min(e.barrier, e.cfg.MaxSimTime)
		if e.q.Len() > 0 {
			limit = min(limit, e.q.peekAt())
		}
		slope := b.Lazy.Slope.Total()
		if c.SeqShare > 0 {
			slope *= c.SeqShare
		}
		for j := int64(1); j < min(b.Lazy.Span, maxSpan); j++ {
			dj := max(vtime.FromSeconds(e.fc.Wall(c.GPUSeconds+float64(j)*slope, c.CPUSeconds)), 1)
			if end.Add(dj) > limit {
				break
			}
			end = end.Add(dj)
			e.spanDur = append(e.spanDur, dj)
		}
	}
	b.Lazy.Steps = len(e.spanDur)
	e.busy = true
	e.stepStart = e.now
	e.Steps += int64(len(e.spanDur))
	e.BusyTime += end.Sub(e.now)
	e.stepEnd = end
	if e.foresee {
		for _, dj := range e.spanDur {
			e.checkStep(dj)
		}
		e.foreseeStep()
	}
	e.push(event{at: end, class: classStep})
}

// tooLong stops the run, with an error naming the step and what makes it long, when a step of
// duration d starting now would end past the run's simulated-time limit (a step of 1e10 s from
// a GPU with 1 B/s of bandwidth, say). Durations saturate (vtime.FromSeconds, Time.Add), so
// such a step never wraps around into a short one.
func (e *Engine) tooLong(c *cost.StepCost, d vtime.Duration) bool {
	if e.now.Add(d) <= e.cfg.MaxSimTime {
		return false
	}
	b := c.Binding()
	e.fail(fmt.Errorf("%w: step %d at %v lasts %.4g s (%s %.4g s of GPU %.4g s, CPU %.4g s): it would end past the simulated-time limit %v",
		ErrLimit, e.Steps+1, e.now, c.TotalSeconds, b, c.Seconds[b], c.GPUSeconds, c.CPUSeconds, e.cfg.MaxSimTime))
	return true
}

func (e *Engine) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

func (e *Engine) handle(ev event) {
	switch ev.class {
	case classStep:
		e.busy = false
		e.lastEnd = e.now
		finished := 0
		var outs []scheduler.Output
		if e.fast {
			outs = e.sched.UpdateLazy(&e.batch)
			if n := e.batch.Lazy.Delivered; n > 0 {
				e.Generated += int64(n) * int64(len(e.spanDur))
				e.Verified += int64(n) * int64(len(e.spanDur))
				e.lastDelivery = e.now
				if e.Hooks.OnGap != nil {
					for _, d := range e.spanDur {
						e.Hooks.OnGap(d, n)
					}
				}
			}
		} else {
			outs = e.sched.Update(&e.batch)
		}
		for _, o := range outs {
			rec, _ := o.Req.Owner.(*Record)
			if rec == nil {
				continue
			}
			rec.Prefilled = o.Req.PrefilledTokens
			rec.PrefillOwed = o.Req.OwedPrefill
			rec.Preemptions = o.Req.Preemptions
			rec.CachedTokens = o.Req.CachedTokens
			if o.Tokens == 0 {
				continue
			}
			if rec.FirstToken < 0 {
				rec.FirstToken = e.now
			} else if e.Hooks.OnGap != nil {
				e.Hooks.OnGap(e.now.Sub(rec.LastToken), 1)
			}
			rec.LastToken = e.now
			rec.Tokens += o.Tokens
			e.Generated += int64(o.Tokens)
			e.Verified++
			rec.Steps++
			e.lastDelivery = e.now
			if e.KeepChunks {
				rec.Chunks = append(rec.Chunks, Chunk{At: e.now, Tokens: o.Tokens})
			}
			if o.Finished {
				finished++
				rec.Finished = true
				rec.End = e.now
				o.Req.Owner = nil
				rec.req = nil
			}
			if e.Hooks.OnTokens != nil {
				e.Hooks.OnTokens(e, rec, o.Tokens, o.Finished)
			}
		}
		e.noteRunning()
		if e.foresee && finished != e.finishing {
			e.fail(fmt.Errorf("internal error: the step ending at %v finished %d requests where %d were foreseen", e.now, finished, e.finishing))
		}
	case classArrival:
		rec := ev.rec
		if !rec.Live() {
			return // cancelled before it reached the engine
		}
		rec.Arrive = e.now
		if e.cfg.AsyncScheduling && e.busy && (e.now > e.stepStart || len(e.pending) > 0) {
			// The step after the running one was scheduled when it started: this request
			// waits for the one after (doc.go, "Async scheduling").
			e.pending = append(e.pending, rec)
			return
		}
		e.enqueue(rec)
	case classTimer:
		e.timers--
		ev.fn(e)
	}
}

// enqueue puts an arrived request in the scheduler's waiting queue.
func (e *Engine) enqueue(rec *Record) {
	req := &scheduler.Request{ID: rec.ID, MaxTokens: rec.Spec.MaxTokens}
	req.Content = kvcache.Content{PrefixID: rec.Spec.PrefixID, PrefixTokens: rec.Spec.PrefixTokens,
		PromptID: rec.Spec.PromptID, PromptUnique: rec.Spec.PromptUnique, PromptTokens: rec.Spec.PromptTokens, UniqueID: uint64(rec.ID)<<20 ^ 0x9e3779b97f4a7c15,
		Blocks: rec.Spec.Blocks, BlockSpan: rec.Spec.BlockSpan}
	rec.req = req
	req.Owner = rec
	e.sched.Add(req)
}

// RunUntil processes every event up to and including time t, then sets the clock to t. It
// returns an error when a guard trips.
func (e *Engine) RunUntil(t vtime.Time) error {
	e.barrier = t
	for e.err == nil && e.q.Len() > 0 && e.q.peekAt() <= t {
		e.step()
	}
	if e.err == nil && t > e.now && t != vtime.Never {
		e.now = t
	}
	return e.err
}

// RunWhile processes events while cond() holds, and at most until time limit; it returns when
// cond is false, the queue is empty, or the limit is reached.
//
// In the fast mode an event may stand for several steps (see doc.go), so cond is evaluated
// between events, not between those steps.
func (e *Engine) RunWhile(cond func() bool, limit vtime.Time) error {
	e.barrier = limit
	for e.err == nil && cond() && e.q.Len() > 0 && e.q.peekAt() <= limit {
		e.step()
	}
	return e.err
}

// RunUntilIdle processes events until nothing is queued, running or waiting.
func (e *Engine) RunUntilIdle() error {
	return e.RunWhile(func() bool { return true }, vtime.Never)
}

func (e *Engine) step() {
	ev := e.q.pop()
	if ev.at < e.now {
		panic(fmt.Sprintf("sim: event at %v processed at %v: time went backwards", ev.at, e.now))
	}
	e.events++
	if e.events > e.cfg.MaxEvents || ev.at > e.cfg.MaxSimTime {
		e.fail(fmt.Errorf("%w: %d events, simulated time %v", ErrLimit, e.events, ev.at))
		return
	}
	e.now = ev.at
	e.handle(ev)
	e.maybeStep()
}

// NextEvent is the time of the earliest queued event (a step's end, an arrival, a timer), or
// vtime.Never when nothing is queued: a caller that paces the engine to a clock (package server)
// sleeps until then, or until it has something to submit.
func (e *Engine) NextEvent() vtime.Time {
	if e.q.Len() == 0 {
		return vtime.Never
	}
	return e.q.peekAt()
}

// NextWake is the time of the earliest queued event that changes more than the engine's waiting
// queue: while a step runs, a request reaching the engine before the step ends only joins the
// waiting queue (or, with async scheduling, the pending arrivals), which nothing reads before the
// step's end schedules the next one. So the step's end, unless a client timer comes first;
// NextEvent when idle. A caller that runs the engine up to NextWake processes the same events, in
// the same order, as one that runs it up to every event: a run stopped at an arrival only queues
// it. What a caller reads before then (Scheduler().NumWaiting, Pending) may lag: it runs the
// engine up to its time first.
func (e *Engine) NextWake() vtime.Time {
	if e.busy && e.timers == 0 {
		return e.stepEnd
	}
	return e.NextEvent()
}

// Foresee makes the engine foresee, whenever it schedules a step, how many requests the step will
// finish (Finishing), and hold every step to at least StepFloor. A caller that routes requests
// ahead of the engine by the outstanding requests it will have relies on both: no request
// finishes other than at the running step's end before StepFloor after it. It is refused with
// speculative decoding (how many drafts a step accepts is drawn when it is applied). A request
// cancelled while foreseeing, a step shorter than the floor or a count that turns out otherwise
// stops the run with an error: the caller's routing would no longer be what it saw.
func (e *Engine) Foresee() error {
	if e.cfg.Scheduler.SpecTokens > 0 {
		return errors.New("sim: cannot foresee finishes with speculative decoding")
	}
	// The shortest step: one token, decoded or prefilled (a step's time grows with its tokens,
	// its requests and their context), with a margin for the fast mode's pricing.
	var sh cost.StepShape
	floor := vtime.Never
	for _, w := range []cost.SeqWork{{Start: 1, Tokens: 1, Decode: true, Emits: true}, {Tokens: 1, Emits: true}, {Tokens: 1}} {
		sh.Reset()
		sh.Add(w)
		floor = min(floor, vtime.Time(vtime.FromSeconds(0.9*e.cost.Step(&sh).TotalSeconds)))
	}
	e.floor = max(vtime.Duration(floor), 1)
	e.foresee = true
	return nil
}

// StepFloor is the shortest a step lasts under Foresee.
func (e *Engine) StepFloor() vtime.Duration { return e.floor }

// Finishing is, under Foresee, the running step's end and how many requests it will finish
// (vtime.Never and 0 when idle).
func (e *Engine) Finishing() (vtime.Time, int) {
	if !e.busy {
		return vtime.Never, 0
	}
	return e.stepEnd, e.finishing
}

// KVFloor is, under Foresee, the lowest KV-cache usage (the share of blocks in use, as
// kvcache.Pool.Usage) the engine can have from now until a StepFloor after its running step's
// end, and at most its usage now: what that step's finishes leave, when nothing else can free
// blocks by then (scheduler.Scheduler.UsedFloor); else 0. Idle, its usage now, which only an
// admission changes. A caller that routes by KV usage bounds with it a replica it has not run
// past the running step's end.
func (e *Engine) KVFloor() float64 {
	p := e.sched.KV().Pool
	if !e.busy {
		return p.Usage()
	}
	if !e.foresee || e.usedFloor < 0 || p.NumBlocks() == 0 {
		return 0
	}
	// Usage's own arithmetic, so that the floor is at most the usage it bounds.
	return 1 - float64(p.NumBlocks()-e.usedFloor)/float64(p.NumBlocks())
}

// usedBlocks is the number of KV blocks in use.
func (e *Engine) usedBlocks() int {
	p := e.sched.KV().Pool
	return p.NumBlocks() - p.NumFree()
}

// checkStep checks a step of duration d against the floor.
func (e *Engine) checkStep(d vtime.Duration) {
	if d < e.floor {
		e.fail(fmt.Errorf("internal error: a step at %v lasts %v, under the engine's floor %v", e.now, d, e.floor))
	}
}

// foreseeStep notes what the step (or span) just scheduled will finish and the fewest KV blocks
// in use until the one after it ends, checking, when it starts at the end of the step before,
// the blocks in use against that step's floor. (An engine that idled between the two freed
// every block: the floor held until then.)
func (e *Engine) foreseeStep() {
	if used := e.usedBlocks(); e.usedFloor >= 0 && e.now == e.floorEnd && used < e.usedFloor {
		e.fail(fmt.Errorf("internal error: %d KV blocks in use at %v, under the floor of %d foreseen", used, e.now, e.usedFloor))
	}
	e.finishing = e.sched.Finishing(&e.batch)
	e.usedFloor, e.floorEnd = e.sched.UsedFloor(&e.batch), e.stepEnd
	if e.finishing < 0 {
		e.fail(fmt.Errorf("internal error: the step at %v cannot be foreseen", e.now))
	}
}

// Busy reports whether a step is running (until NextWake when no client timer is queued).
func (e *Engine) Busy() bool { return e.busy }

// Events is the number of events processed.
func (e *Engine) Events() int64 { return e.events }
