package scheduler

import (
	"fmt"
	"github.com/servesim/servesim/model/param"
	"math/rand/v2"

	"github.com/servesim/servesim/kvcache"
	"github.com/servesim/servesim/model/cost"
)

// Config holds the engine limits the step policy uses.
type Config struct {
	MaxNumBatchedTokens int
	MaxNumSeqs          int
	MaxModelLen         int
	ChunkedPrefill      bool
	// SpecTokens is k; 0 without speculative decoding.
	SpecTokens int
	// MaxEntryTokens > 0 caps one request's tokens in a step below MaxNumBatchedTokens: with
	// pipeline stages or data-parallel ranks in one engine, the step's budget is the sum of the
	// micro-batches' or ranks' own budgets, and a request runs in one of them (package sim).
	MaxEntryTokens int
	// AlignBlock > 0 cuts non-final prefill chunks at multiples of this many tokens (hybrid
	// models in "align" prefix-caching mode).
	AlignBlock int
	// Accept is the speculative acceptance as the deployment resolves it (deploy.Deployment.
	// Acceptance): Rates[i] = P(accepted >= i+1), decreasing, len == SpecTokens; Late, when set,
	// replaces Rates for a request that has already generated at least Switch output tokens
	// (acceptance that changes along an output, between a reasoning part and its answer);
	// Opening, when set, replaces both for a request that has generated fewer than OpenEnd
	// output tokens (an output's opening).
	Accept param.SpecAcceptance
}

// Entry is one request's share of a step.
type Entry struct {
	Req *Request
	// Start is the number of tokens computed before this step; Tokens are scheduled now.
	Start, Tokens int
	// Emits is true when the step completes every known token, so the request samples output.
	Emits bool
	// Drafts is the number of draft tokens verified (part of Tokens).
	Drafts int
	// Decode is true for a pure decode (verification) entry: no prompt tokens left before it.
	Decode bool
	// Admitted is true when the request left the waiting queue in this step.
	Admitted bool
}

// Batch is what one engine step runs.
type Batch struct {
	Entries   []Entry
	Preempted []*Request
	NumTokens int
	Lazy      LazyBatch // lazy mode only (lazy.go)
}

func (b *Batch) reset() {
	b.Entries = b.Entries[:0]
	b.Preempted = b.Preempted[:0]
	b.NumTokens = 0
	b.Lazy = LazyBatch{}
}

// Output is what a step produced for one request.
type Output struct {
	Req      *Request
	Tokens   int // emitted this step (0 for a partial prefill chunk)
	Accepted int // drafts accepted
	Finished bool
}

// Scheduler is vLLM v1's step policy (vllm/v1/core/sched/scheduler.py; see doc.go). It is single-threaded
// and deterministic given its random source.
type Scheduler struct {
	cfg     Config
	kv      *kvcache.Manager
	rng     *rand.Rand
	running []*Request
	waiting deque // FCFS; preempted requests go to the front
	seq     int64
	outs    []Output
	// Stats.
	Preemptions int64
	Steps       int64

	// Lazy mode (lazy.go).
	lazyOn   bool
	oweBT    int     // block tokens when growLazy may hand out blocks without the table (0: never)
	runOrder []int64 // the running requests' admission orders (lazy mode), for binary search
	coster   SeqCoster
	tick     int64      // steps applied
	grown    int64      // the last step scheduled: the phase lists have grown up to it
	active   []*Request // running requests that are not lazy, in running order
	nLazy    int
	// The lazy decoders' seconds in the step scheduled at tick T add up to k0 + k1 T.
	k0, k1 cost.SeqSeconds
	churn  int
	lzFree []*lazyState // lazy states of requests that left, for reuse
	// growScratch holds the lazy decoders due only for growing, in a ScheduleLazy pass.
	growScratch []wheelEnt
	dueScratch  []wheelEnt
	// OnMaterialise, if set, is called when a lazy request becomes explicit, with the steps it
	// advanced (one token each) since it became lazy.
	OnMaterialise func(r *Request, steps int)
	// touch is lazy requests by the step at which they are due. Last: its wheel spans kilobytes
	// of which a step reads one slot, and the fields above share a few cache lines.
	touch touchQueue
}

// New returns a scheduler over a KV-cache manager, drawing acceptance from rng.
func New(cfg Config, kv *kvcache.Manager, rng *rand.Rand) *Scheduler {
	if len(cfg.Accept.Rates) != cfg.SpecTokens {
		panic(fmt.Sprintf("scheduler: %d acceptance rates for %d speculative tokens", len(cfg.Accept.Rates), cfg.SpecTokens))
	}
	if cfg.Accept.Late != nil && len(cfg.Accept.Late) != cfg.SpecTokens {
		panic(fmt.Sprintf("scheduler: %d late acceptance rates for %d speculative tokens", len(cfg.Accept.Late), cfg.SpecTokens))
	}
	if cfg.Accept.Opening != nil && len(cfg.Accept.Opening) != cfg.SpecTokens {
		panic(fmt.Sprintf("scheduler: %d opening acceptance rates for %d speculative tokens", len(cfg.Accept.Opening), cfg.SpecTokens))
	}
	return &Scheduler{cfg: cfg, kv: kv, rng: rng}
}

// KV returns the cache manager.
func (s *Scheduler) KV() *kvcache.Manager { return s.kv }

// NumRunning is vLLM's num_requests_running.
func (s *Scheduler) NumRunning() int { return len(s.running) }

// NumWaiting is vLLM's num_requests_waiting.
func (s *Scheduler) NumWaiting() int { return s.waiting.len() }

// HasWork reports whether a step would schedule anything.
func (s *Scheduler) HasWork() bool { return len(s.running) > 0 || s.waiting.len() > 0 }

// Running returns the running requests in admission order (read-only).
func (s *Scheduler) Running() []*Request { return s.running }

// Add queues a new request.
func (s *Scheduler) Add(r *Request) {
	if r.MaxTokens <= 0 {
		panic(fmt.Sprintf("scheduler: %v has max_tokens %d", r, r.MaxTokens))
	}
	r.State = Waiting
	r.table = nil // made at its first admission attempt: a long queue holds no tables
	s.waiting.pushBack(r)
}

// Abort removes a request wherever it is and frees its blocks. Aborting a finished request is a
// no-op.
func (s *Scheduler) Abort(r *Request) {
	switch r.State {
	case Finished:
		return
	case Waiting:
		s.waiting.remove(r)
	case Running:
		if s.isLazy(r) {
			s.unlazy(r)
		}
		if s.lazyOn {
			s.removeRunning(r)
			s.removeActive(r)
		} else {
			s.running = remove(s.running, r)
		}
	}
	s.release(r)
	r.State = Finished
	r.Reason = FinishedCancelled
}

func remove(list []*Request, r *Request) []*Request {
	for i, x := range list {
		if x == r {
			copy(list[i:], list[i+1:])
			list[len(list)-1] = nil
			return list[:len(list)-1]
		}
	}
	panic(fmt.Sprintf("scheduler: %v not in its queue", r))
}

// release returns a request's blocks and its table when it leaves the engine.
func (s *Scheduler) release(r *Request) {
	if r.table != nil {
		s.kv.ReleaseDone(r.table, &r.Content)
		r.table = nil
	}
	s.putLZ(r)
}

// preemptLast frees the newest running request and puts it at the front of the waiting queue.
func (s *Scheduler) preemptLast(b *Batch) *Request {
	r := s.running[len(s.running)-1]
	s.running[len(s.running)-1] = nil
	s.running = s.running[:len(s.running)-1]
	if s.lazyOn {
		s.runOrder = s.runOrder[:len(s.running)]
	}
	if s.lazyOn {
		if s.isLazy(r) {
			s.unlazy(r)
		}
		s.putLZ(r)
		s.removeActive(r)
		// Its generated blocks were not entered in the cache (DeferUnique): its re-admission
		// may hit them.
		s.kv.CommitAll(r.table, &r.Content, r.Computed)
	}
	s.kv.Free(r.table)
	r.State = Waiting
	r.Computed = 0
	r.Drafts = 0
	r.Preemptions++
	s.Preemptions++
	s.waiting.pushFront(r)
	b.Preempted = append(b.Preempted, r)
	return r
}

// chunk applies the model-length cap, the budget and chunk alignment to a request needing need
// tokens from start, known of them prompt or generated tokens (the rest drafts to verify); it
// returns 0 when nothing can be scheduled. The cap is vLLM's: no input position past
// max_model_len - 1, so a decoding request near the end verifies fewer drafts
// (min(n, max_model_len - 1 - num_computed_tokens), vllm/v1/core/sched/scheduler.py). Only a
// prompt chunk that leaves known tokens for later is cut at an aligned block (vLLM's
// _mamba_block_aligned_split, for requests without output): verify entries are not.
func (s *Scheduler) chunk(start, known, need, budget int) int {
	n := min(need, budget, s.cfg.MaxModelLen-1-start)
	if c := s.cfg.MaxEntryTokens; c > 0 {
		n = min(n, c)
	}
	if n <= 0 {
		return 0
	}
	if n < known && s.cfg.AlignBlock > 0 {
		n = (start+n)/s.cfg.AlignBlock*s.cfg.AlignBlock - start
	}
	return max(n, 0)
}

// Schedule builds the next step into b (reusing its storage).
func (s *Scheduler) Schedule(b *Batch) {
	b.reset()
	budget := s.cfg.MaxNumBatchedTokens

	// RUNNING first, in admission order.
	for i := 0; i < len(s.running) && budget > 0; i++ {
		n, ok := s.scheduleRunning(s.running[i], budget, b)
		if !ok {
			break
		}
		budget -= n
	}
	s.admit(budget, b)
	if len(b.Entries) > 0 {
		s.Steps++
	}
}

// scheduleRunning gives running request r its share of a step with budget tokens left: what is
// left of its prompt, or 1 + k tokens to verify, capped by the budget and max_model_len, with
// blocks grown for them, preempting the newest running requests while the pool is short. It
// returns the tokens scheduled, and false when r had to preempt itself (the pass stops).
func (s *Scheduler) scheduleRunning(r *Request, budget int, b *Batch) (int, bool) {
	k := s.cfg.SpecTokens
	known := r.NumTokens() - r.Computed
	need := known + r.Drafts
	n := s.chunk(r.Computed, known, need, budget)
	if n <= 0 {
		return 0, true
	}
	emits := n >= known
	look := 0
	if emits {
		look = k
	}
	for !s.kv.Grow(r.table, r.Computed+n+look) {
		if victim := s.preemptLast(b); victim == r {
			return 0, false
		}
	}
	drafts := 0
	if emits {
		drafts = n - known
	}
	b.Entries = append(b.Entries, Entry{Req: r, Start: r.Computed, Tokens: n, Emits: emits, Drafts: drafts, Decode: known == 1 && r.Output > 0})
	b.NumTokens += n
	return n, true
}

// admit takes WAITING requests, first come first served, into a step with budget tokens left.
// Nothing is admitted in a step that preempted.
func (s *Scheduler) admit(budget int, b *Batch) {
	k := s.cfg.SpecTokens
	for s.waiting.len() > 0 && budget > 0 && len(s.running) < s.cfg.MaxNumSeqs && len(b.Preempted) == 0 {
		r := s.waiting.front()
		if r.table == nil {
			r.table = s.kv.NewTable()
		}
		total := r.NumTokens()
		hit := s.kv.FindHit(r.table, &r.Content, total)
		need := total - hit
		if !s.cfg.ChunkedPrefill && (need > budget || (s.cfg.MaxEntryTokens > 0 && need > s.cfg.MaxEntryTokens)) {
			break
		}
		n := s.chunk(hit, need, need, budget)
		if n <= 0 {
			break
		}
		emits := n >= need
		look := 0
		if emits {
			look = k
		}
		if !s.kv.CanAdmit(r.table, total+look) {
			break // head of line: admission never preempts
		}
		s.kv.Admit(r.table)
		if !s.kv.Grow(r.table, hit+n+look) {
			panic(fmt.Sprintf("scheduler: %v passed the admission check but could not grow to %d tokens", r, hit+n+look))
		}
		s.waiting.popFront()
		r.State = Running
		r.Computed = hit
		r.CachedTokens = hit
		r.OwedPrefill += total - hit
		r.Admitted++
		s.seq++
		r.order = s.seq
		s.running = append(s.running, r)
		if s.lazyOn {
			s.runOrder = append(s.runOrder, r.order)
			s.active = append(s.active, r)
		}
		b.Entries = append(b.Entries, Entry{Req: r, Start: hit, Tokens: n, Emits: emits, Admitted: true})
		b.NumTokens += n
		budget -= n
	}
}

// sampleAccepted draws how many of d drafts are accepted for a request that has generated output
// tokens so far: one uniform draw against the per-position rates P(accepted >= i), equivalent to
// accepting position by position until the first rejection.
func (s *Scheduler) sampleAccepted(d, output int) int {
	if d == 0 {
		return 0
	}
	u := s.rng.Float64()
	a := 0
	rates := s.cfg.Accept.Rates
	switch {
	case s.cfg.Accept.Opening != nil && output < s.cfg.Accept.OpenEnd:
		rates = s.cfg.Accept.Opening
	case s.cfg.Accept.Late != nil && output >= s.cfg.Accept.Switch:
		rates = s.cfg.Accept.Late
	}
	for a < d && u < rates[a] {
		a++
	}
	return a
}

// Update applies the results of a finished step and returns what each request emitted. Entries of
// requests aborted while the step ran are skipped. The returned slice is reused by the next call.
func (s *Scheduler) Update(b *Batch) []Output {
	s.outs = s.outs[:0]
	finished := false
	for i := range b.Entries {
		if o, ok := s.apply(&b.Entries[i]); ok {
			s.outs = append(s.outs, o)
			finished = finished || o.Finished
		}
	}
	if finished {
		j := 0
		for _, r := range s.running {
			if r.State == Running {
				s.running[j] = r
				j++
			}
		}
		clear(s.running[j:])
		s.running = s.running[:j]
	}
	return s.outs
}

// Finishing is the number of requests step b, built and not yet applied, finishes when Update or
// UpdateLazy applies it: the emitting entries of requests still running as scheduled whose one
// token reaches max_tokens or max_model_len. -1 when an entry carries drafts (how many are
// accepted is drawn when the step is applied). A request aborted while the step runs is not
// applied, so the count then overstates.
func (s *Scheduler) Finishing(b *Batch) int {
	n := 0
	for i := range b.Entries {
		switch s.finishes(&b.Entries[i]) {
		case finishesNo:
		case finishesYes:
			n++
		default:
			return -1
		}
	}
	return n
}

const (
	finishesNo = iota
	finishesYes
	finishesUnknown
)

// finishes tells whether applying entry e finishes its request (Finishing).
func (s *Scheduler) finishes(e *Entry) int {
	r := e.Req
	switch {
	case !e.Emits || r.State != Running || r.Computed != e.Start:
		return finishesNo
	case e.Drafts > 0:
		return finishesUnknown
	case r.Output+1 >= r.MaxTokens || r.NumTokens()+1 >= s.cfg.MaxModelLen:
		return finishesYes
	}
	return finishesNo
}

// growBlocks bounds the blocks a pass hands out, in a layout of one full-attention group of bt
// tokens a block, to requests scheduled tokens tokens between them: a request's tokens take the
// blocks they fill, rounded up, so at most the blocks of all the tokens, rounded up, and one more
// for each request whose tokens straddle a boundary.
func growBlocks(bt, tokens, requests int) int { return tokens/bt + 1 + requests }

// UsedFloor is, for step b built and not yet applied, the fewest KV blocks the pool can have in
// use from now until the step scheduled at b's end ends: the blocks in use less those the requests
// b finishes hold (a finish frees at most those: a block another request shares stays), or -1
// when something else could free blocks by then. In a layout of one full-attention group
// (kvcache.Manager.FullBlockTokens) only finishes and preemptions free blocks, and the pass at
// b's end grows each running request by the blocks of its tokens plus one at most: with a block
// free for every running request beyond the token budget's blocks (growBlocks), it preempts
// none (admission never does). Drafts (their acceptance drawn at b's end) give -1.
func (s *Scheduler) UsedFloor(b *Batch) int {
	bt := s.kv.FullBlockTokens()
	p := s.kv.Pool
	if bt == 0 || s.cfg.SpecTokens > 0 || p.NumFree() < growBlocks(bt, s.cfg.MaxNumBatchedTokens, len(s.running)) {
		return -1
	}
	used := p.NumBlocks() - p.NumFree()
	for i := range b.Entries {
		e := &b.Entries[i]
		switch s.finishes(e) {
		case finishesNo:
		case finishesYes:
			r := e.Req
			used -= r.table.HeldBlocks()
			if r.lz != nil {
				used -= s.owedBlocks(r)
			}
		default:
			return -1
		}
	}
	return max(used, 0)
}

// apply applies one entry of a finished step: prompt tokens computed, or tokens sampled (accepted
// drafts plus one), the request finished at max_tokens or max_model_len. It returns false for
// the entry of a request aborted while the step ran. A finished request has left the running
// queue's accounting (its blocks are freed) but is still in s.running.
func (s *Scheduler) apply(e *Entry) (Output, bool) {
	r := e.Req
	if r.State != Running || r.Computed != e.Start {
		return Output{}, false // aborted, or preempted later in the same schedule pass
	}
	prefill := min(e.Tokens-e.Drafts, r.NumTokens()-r.Computed)
	if !e.Decode {
		r.PrefilledTokens += prefill
	}
	if !e.Emits {
		r.Computed += e.Tokens
		s.kv.Commit(r.table, &r.Content, r.Computed)
		return Output{Req: r}, true
	}
	acc := s.sampleAccepted(e.Drafts, r.Output)
	r.Computed = r.NumTokens() + acc
	emitted := min(acc+1, r.MaxTokens-r.Output)
	r.Output += emitted
	s.kv.Commit(r.table, &r.Content, r.Computed)
	o := Output{Req: r, Tokens: emitted, Accepted: acc}
	switch {
	case r.Output >= r.MaxTokens:
		r.Reason = FinishedLength
	case r.NumTokens() >= s.cfg.MaxModelLen:
		r.Reason = FinishedModelLen
	default:
		r.Drafts = s.cfg.SpecTokens
	}
	if r.Reason != NotFinished {
		o.Finished = true
		r.State = Finished
		r.Drafts = 0
		s.release(r)
	}
	return o, true
}

// Shape describes the batch for the cost model.
func (b *Batch) Shape(dst *cost.StepShape) {
	dst.Reset()
	for i := range b.Entries {
		e := &b.Entries[i]
		dst.Add(cost.SeqWork{Start: e.Start, Tokens: e.Tokens, Decode: e.Decode, Emits: e.Emits})
	}
}
