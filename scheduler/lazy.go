package scheduler

import (
	"math"
	"slices"

	"github.com/servesim/servesim/model/cost"
)

// SeqCoster prices one request's share of a step (lazy mode); *cost.Model implements it.
type SeqCoster interface {
	Seq(w cost.SeqWork) cost.SeqSeconds
}

// LazyBatch is the part of a lazy-mode step that is not in Batch.Entries.
type LazyBatch struct {
	// Implicit is the number of lazy decoders in the step: one token each, verified and emitted.
	Implicit int
	// Sum is the per-request seconds (cost.Model.Seq) of every entry, explicit and implicit.
	Sum cost.SeqSeconds
	// Span > 0 says the step is the first of Span steps that are the same step again, with every
	// lazy decoder one token further each time: no explicit entry, nothing admitted, preempted or
	// starved, and no lazy decoder due before. Slope is what Sum grows by from one to the next.
	Span  int64
	Slope cost.SeqSeconds
	// Steps is the number of steps the batch stands for when UpdateLazy applies it (1 unless the
	// caller runs a span); Delivered is set by UpdateLazy: lazy decoders that received a token in
	// each of those steps.
	Steps     int
	Delivered int
	starved   []*Request
}

// segment is a request's decode-entry seconds as an affine function of its start: a + b x for
// starts x in [lo, hi), for entries of tokens tokens.
type segment struct {
	tokens, lo, hi int
	a, b           cost.SeqSeconds
}

func (g *segment) covers(start, tokens int) bool {
	return g.tokens == tokens && start >= g.lo && start < g.hi
}

func (g *segment) at(start int) cost.SeqSeconds {
	return g.a.Add(g.b.Scale(float64(start)))
}

// lazyState is the lazy-mode part of a Request; what the touch queue and a growing visit read
// of it (its touch steps, its place in the queue, the blocks it owes, whether it is lazy) is kept
// apart, packed by id (touchHot). It is visited at the step min(growAt, otherAt), or otherAt on a
// phase list (the step is tick + 1 at its scheduling).
type lazyState struct {
	req  *Request
	tick int64 // the scheduler's tick when Computed and Output were last exact
	id   int32 // index in the scheduler's lazy states and the touch queue's packed states
	k0   cost.SeqSeconds
	seg  segment
}

// getLZ gives r a lazy state (kept while it runs, reused after).
func (s *Scheduler) getLZ(r *Request) {
	if r.lz != nil {
		return
	}
	var lz *lazyState
	if k := len(s.lzFree); k > 0 {
		lz = s.lzFree[k-1]
		s.lzFree = s.lzFree[:k-1]
	} else {
		lz = &lazyState{}
		lz.id = s.touch.add(lz)
	}
	*lz = lazyState{id: lz.id, req: r}
	s.touch.hot[lz.id] = touchHot{hidx: -1, wslot: -1, ppos: -1}
	r.lz = lz
}

// hot is r's packed lazy state.
func (s *Scheduler) hot(r *Request) *touchHot { return &s.touch.hot[r.lz.id] }

// isLazy reports whether r is a lazy decoder.
func (s *Scheduler) isLazy(r *Request) bool { return r.lz != nil && s.hot(r).lazy }

// putLZ takes back r's lazy state when it leaves the running queue (a waiting request needs none).
func (s *Scheduler) putLZ(r *Request) {
	if r.lz == nil {
		return
	}
	if h := s.hot(r); h.lazy || h.owed != 0 {
		panic("scheduler: lazy state released while lazy or owing blocks: " + r.String())
	}
	r.lz.req = nil
	s.lzFree = append(s.lzFree, r.lz)
	r.lz = nil
}

// EnableLazy switches the scheduler to lazy mode (see doc.go, "Lazy mode"): ScheduleLazy and
// UpdateLazy instead of Schedule and Update. It must be called before any request is added.
// The KV-cache manager then defers hashing generated blocks (kvcache.Manager.DeferUnique), and
// its pool hands out blocks without content most recently freed first (kvcache.Pool.ReuseHot).
func (s *Scheduler) EnableLazy(c SeqCoster) {
	if len(s.running) > 0 || s.waiting.len() > 0 {
		panic("scheduler: EnableLazy on a scheduler with requests")
	}
	s.lazyOn = true
	s.coster = c
	s.kv.DeferUnique = true
	s.kv.Pool.ReuseHot = true
	if s.cfg.SpecTokens == 0 {
		// A lazy decoder then crosses a block boundary every block's worth of steps, one block
		// at a time: growLazy hands it out without touching the request's table.
		s.oweBT = s.kv.OweBlockTokens()
		if s.oweBT > 0 {
			s.touch.phase = make([][]wheelEnt, s.oweBT)
		}
	}
}

// Lazy reports whether lazy mode is on.
func (s *Scheduler) Lazy() bool { return s.lazyOn }

// canLazy: decoders advance implicitly only without speculative decoding, where every step gives
// every decoder one token; with drafts, acceptance is drawn per request and step (Update) from the
// one seeded source, in batch order, so every decoder stays explicit.
func (s *Scheduler) canLazy() bool { return s.cfg.SpecTokens == 0 }

// Current returns a request's computed and output tokens as of the last applied step (Computed
// and Output lag behind while the request is lazy).
func (s *Scheduler) Current(r *Request) (computed, output int) {
	if !s.isLazy(r) {
		return r.Computed, r.Output
	}
	adv := int(s.tick - r.lz.tick)
	return r.Computed + adv, r.Output + adv
}

// Tick is the number of steps applied in lazy mode.
func (s *Scheduler) Tick() int64 { return s.tick }

// runningIndex is r's index in s.running, which is sorted by admission order.
func (s *Scheduler) runningIndex(r *Request) int { return s.runningIndexFrom(r, 0) }

// runningIndexFrom is runningIndex for a request known to be at index from or later: a galloping
// search, since a pass visits requests in running order, usually a few apart.
func (s *Scheduler) runningIndexFrom(r *Request, from int) int {
	n := len(s.runOrder)
	lo, hi := from, from
	for step := 1; hi < n && s.runOrder[hi] < r.order; step *= 2 {
		lo = hi + 1
		hi += step
	}
	hi = min(hi+1, n)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.runOrder[m] < r.order {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == n || s.running[lo] != r {
		panic("scheduler: running request not in the running queue: " + r.String())
	}
	return lo
}

// removeRunning takes r out of the running queue, moving whichever side of it is shorter (the
// slices then start one entry further into their arrays; appending reallocates as usual).
func (s *Scheduler) removeRunning(r *Request) {
	i := s.runningIndex(r)
	n := len(s.running)
	if i < n/2 {
		copy(s.running[1:i+1], s.running[:i])
		s.running[0] = nil
		s.running = s.running[1:]
		copy(s.runOrder[1:i+1], s.runOrder[:i])
		s.runOrder = s.runOrder[1:]
		return
	}
	copy(s.running[i:], s.running[i+1:])
	s.running[n-1] = nil
	s.running = s.running[:n-1]
	copy(s.runOrder[i:], s.runOrder[i+1:])
	s.runOrder = s.runOrder[:n-1]
}

func (s *Scheduler) removeActive(r *Request) {
	for i, x := range s.active {
		if x == r {
			copy(s.active[i:], s.active[i+1:])
			s.active[len(s.active)-1] = nil
			s.active = s.active[:len(s.active)-1]
			return
		}
	}
}

// addActive inserts r into s.active, keeping admission order.
func (s *Scheduler) addActive(r *Request) {
	i := len(s.active)
	s.active = append(s.active, r)
	for ; i > 0 && s.active[i-1].order > r.order; i-- {
		s.active[i] = s.active[i-1]
	}
	s.active[i] = r
}

// fitTol is the largest relative error of a segment's seconds at its interior check points. The
// kinds' formulas are maxima and minima of lines in the start (roofline, sliding window, top-k),
// so segments split at their kinds' kinks; between them an affine fit is exact up to rounding.
const fitTol = 1e-6

// fit returns the longest segment from start, at most to horizon, on which the decode-entry
// seconds of tokens tokens are affine within fitTol: it checks the fit at three interior points
// and halves the segment until they agree.
func (s *Scheduler) fit(start, tokens, horizon int) segment {
	at := func(x int) cost.SeqSeconds {
		return s.coster.Seq(cost.SeqWork{Start: x, Tokens: tokens, Decode: true, Emits: true})
	}
	v0 := at(start)
	for l := max(horizon-start, 1); ; l = (l + 1) / 2 {
		if l <= 1 {
			return segment{tokens: tokens, lo: start, hi: start + 1, a: v0}
		}
		v1 := at(start + l)
		b := v1.Sub(v0).Scale(1 / float64(l))
		a := v0.Sub(b.Scale(float64(start)))
		g := segment{tokens: tokens, lo: start, hi: start + l + 1, a: a, b: b}
		ok := true
		for _, q := range [...]int{l / 4, l / 2, l - l/4} {
			if q <= 0 || q >= l {
				continue
			}
			if !near(at(start+q), g.at(start+q)) {
				ok = false
				break
			}
		}
		if ok {
			return g
		}
	}
}

func near(want, got cost.SeqSeconds) bool {
	c := func(w, g float64) bool { return math.Abs(w-g) <= fitTol*math.Abs(w)+1e-18 }
	return c(want.Attention, got.Attention) && c(want.State, got.State) && c(want.Drafter, got.Drafter)
}

// entrySeconds is the per-request seconds of an explicit entry: from the request's segment for a
// decode entry (fitted when it does not cover the start), else the cost model's.
func (s *Scheduler) entrySeconds(e *Entry) cost.SeqSeconds {
	if !e.Decode || !e.Emits {
		return s.coster.Seq(cost.SeqWork{Start: e.Start, Tokens: e.Tokens, Decode: e.Decode, Emits: e.Emits})
	}
	r := e.Req
	s.getLZ(r)
	if !r.lz.seg.covers(e.Start, e.Tokens) {
		r.lz.seg = s.fit(e.Start, e.Tokens, s.horizon(r, e.Tokens))
	}
	return r.lz.seg.at(e.Start)
}

// horizon is the largest start a decode entry of r can have.
func (s *Scheduler) horizon(r *Request, tokens int) int {
	return min(r.PromptTokens()+r.MaxTokens+tokens, s.cfg.MaxModelLen)
}

// register makes a running decoder lazy as of the current tick: it will get one token per step
// without being visited until its touch step, the first at which scheduling or applying it has
// something else to do: a block to allocate, a block to release or a state to cache (Commit),
// its last token (max_tokens or max_model_len), or its cost segment's end.
func (s *Scheduler) register(r *Request) {
	start := r.Computed // the start of its next entry
	s.getLZ(r)
	if !r.lz.seg.covers(start, 1) {
		r.lz.seg = s.fit(start, 1, s.horizon(r, 1))
	}
	// In the step scheduled at tick T its start is start + T - tick.
	h := s.hot(r)
	h.lazy, r.lz.tick = true, s.tick
	r.lz.k0 = r.lz.seg.at(start).Sub(r.lz.seg.b.Scale(float64(s.tick)))
	s.k0 = s.k0.Add(r.lz.k0)
	s.k1 = s.k1.Add(r.lz.seg.b)
	s.nLazy++
	// j counts steps from now: step tick + j schedules start + j - 1 and applies start + j.
	j := int64(math.MaxInt64 / 4)
	if c := r.table.CommitLimit(); c < math.MaxInt {
		j = min(j, int64(max(c-start, 1)))
	}
	j = min(j, int64(r.MaxTokens-r.Output), int64(s.cfg.MaxModelLen-r.NumTokens()))
	j = min(j, int64(r.lz.seg.hi-start+1))
	h.otherAt = s.tick + max(j, 1)
	h.growAt = s.tick + s.growIn(r, start)
	s.joinPhase(r.lz.id, r.order)
	s.touch.push(r.lz.id, r.order)
	s.noteChurn()
}

// growIn is how many steps from now a lazy decoder whose next entry starts at start must grow
// its blocks: Grow(start + j) has work when start + j exceeds what its blocks cover.
func (s *Scheduler) growIn(r *Request, start int) int64 {
	if f := r.table.GrowLimit(); f >= start {
		return int64(f - start + 1)
	}
	return 1
}

// growLazy grows the blocks of lazy decoder id (of admission order order) for the step being
// scheduled, exactly as scheduling it would (preempting the newest running requests while the
// pool is short), without making it explicit: it keeps its implicit token. It returns false when
// the request preempted itself. A block handed out unnamed reads only the decoder's packed state.
func (s *Scheduler) growLazy(id int32, order int64, b *Batch) bool {
	h := &s.touch.hot[id]
	phased := h.ppos >= 0
	s.settle(h)
	if bt := s.oweBT; bt > 0 && h.growAt == s.tick+1 && s.kv.OweBlock() {
		// The one block it needs at this boundary, handed out without touching its table; the
		// next boundary is a block further (on a phase list, queued at its other touch still).
		h.owed++
		h.growAt += int64(bt)
		if !phased {
			s.touch.push(id, order)
		}
		return true
	}
	if phased {
		// Its blocks grow through its table: it leaves its list, and is queued again below.
		s.touch.leavePhase(id)
		s.touch.remove(id)
	}
	r := s.touch.lz[id].req
	s.nameOwed(r)
	start := r.Computed + int(s.tick-r.lz.tick)
	for !s.kv.Grow(r.table, start+1) {
		if victim := s.preemptLast(b); victim == r {
			return false
		}
	}
	s.hot(r).growAt = s.tick + s.growIn(r, start)
	s.joinPhase(id, order)
	s.touch.push(id, order)
	return true
}

// joinPhase puts lazy decoder id, of admission order order, on the phase list of its growAt when
// its blocks grow a block at a time without its table (oweBT) and its next boundary is at most a
// block away: from then on it grows with its phase's decoders, at every block's worth of steps,
// without a visit (ScheduleLazy), as long as the pool hands out blocks without content.
func (s *Scheduler) joinPhase(id int32, order int64) {
	if bt := int64(s.oweBT); bt > 0 && s.touch.hot[id].growAt-s.tick <= bt {
		s.touch.joinPhase(id, order)
	}
}

// phaseSteps is how many of its phase's boundaries the lazy decoder of packed state h has grown
// at since its growAt and owed were written: on a phase list, every boundary up to s.grown, the
// last step scheduled.
func (s *Scheduler) phaseSteps(h *touchHot) int64 {
	if h.ppos < 0 || s.grown < h.growAt {
		return 0
	}
	return (s.grown-h.growAt)/int64(s.oweBT) + 1
}

// settle brings h's growAt and owed up to date (on a phase list, they lag).
func (s *Scheduler) settle(h *touchHot) {
	if k := s.phaseSteps(h); k > 0 {
		h.owed += int32(k)
		h.growAt += k * int64(s.oweBT)
	}
}

// owedBlocks is how many blocks lazy request r has been handed out without its table.
func (s *Scheduler) owedBlocks(r *Request) int {
	h := s.hot(r)
	return int(h.owed) + int(s.phaseSteps(h))
}

// blocksBound bounds the blocks the step being scheduled can take for its explicit running
// requests and for grows lazy decoders growing through their tables (a token each): those of
// the tokens each has left, or of the token budget between them (growBlocks).
func (s *Scheduler) blocksBound(grows int) int {
	bt, left, n := s.oweBT, growBlocks(s.oweBT, grows, grows), grows
	for _, r := range s.active {
		if r.State == Running {
			left += growBlocks(bt, r.NumTokens()-r.Computed+r.Drafts, 1)
			n++
		}
	}
	return min(left, growBlocks(bt, s.cfg.MaxNumBatchedTokens, n))
}

// nameOwed puts the blocks grown for a lazy request without touching its table into it.
func (s *Scheduler) nameOwed(r *Request) {
	h := s.hot(r)
	s.settle(h)
	if h.owed > 0 {
		s.kv.NameOwed(r.table, int(h.owed))
		h.owed = 0
	}
}

// unlazy brings a lazy request's counts up to the current tick and makes it explicit.
func (s *Scheduler) unlazy(r *Request) {
	s.nameOwed(r)
	adv := int(s.tick - r.lz.tick)
	r.Computed += adv
	r.Output += adv
	s.hot(r).lazy = false
	r.lz.tick = s.tick
	s.k0 = s.k0.Sub(r.lz.k0)
	s.k1 = s.k1.Sub(r.lz.seg.b)
	s.nLazy--
	s.touch.remove(r.lz.id)
	s.touch.leavePhase(r.lz.id)
	s.noteChurn()
	if s.OnMaterialise != nil && adv > 0 {
		s.OnMaterialise(r, adv)
	}
}

// noteChurn re-adds the lazy decoders' sums from scratch once the set has changed as many times
// as it has members, so rounding in the running sums stays bounded (amortised constant time).
func (s *Scheduler) noteChurn() {
	s.churn++
	if s.churn < max(64, 2*s.nLazy) {
		return
	}
	s.churn = 0
	s.k0, s.k1 = cost.SeqSeconds{}, cost.SeqSeconds{}
	if s.nLazy == 0 {
		return
	}
	for _, r := range s.running {
		if s.isLazy(r) {
			s.k0 = s.k0.Add(r.lz.k0)
			s.k1 = s.k1.Add(r.lz.seg.b)
		}
	}
}

// serveImplicit accounts for the count lazy decoders at running indices from .. from+count-1,
// one token each while the budget lasts; those the budget does not reach are starved: made
// explicit, without an entry in this step. It returns the budget left. With no budget the range
// may also hold explicit requests the pass did not reach (it stopped): they are just not
// scheduled, as in Schedule.
func (s *Scheduler) serveImplicit(from, count, budget int, b *Batch) int {
	count = max(count, 0)
	served := min(count, max(budget, 0))
	for i := from + served; i < from+count; i++ {
		r := s.running[i]
		if !s.isLazy(r) {
			continue
		}
		s.unlazy(r)
		b.Lazy.starved = append(b.Lazy.starved, r)
	}
	return budget - served
}

// budgetCovers reports whether budget tokens exceed what the running requests could take in a
// step: a token for each lazy decoder, and for each explicit request all its known tokens and
// drafts.
func (s *Scheduler) budgetCovers(budget int) bool {
	d := s.nLazy
	for _, r := range s.active {
		if r.State == Running {
			d += r.NumTokens() - r.Computed + r.Drafts
			if d >= budget {
				return false
			}
		}
	}
	return d < budget
}

// ScheduleLazy builds the next step like Schedule, visiting only explicit requests (those not
// lazy, and lazy ones due at this step); every other lazy decoder takes one token of the budget
// in its place in the running order. b.Lazy says how many and what they cost.
func (s *Scheduler) ScheduleLazy(b *Batch) {
	b.reset()
	step := s.tick + 1
	grow := s.growScratch[:0] // lazy decoders that only have blocks to grow, in running order
	s.dueScratch = s.touch.due(step, s.dueScratch[:0])
	for _, e := range s.dueScratch {
		if s.touch.hot[e.id].otherAt > step {
			grow = append(grow, e)
			continue
		}
		r := s.touch.lz[e.id].req
		s.unlazy(r)
		s.addActive(r)
	}
	budget := s.cfg.MaxNumBatchedTokens
	if s.nLazy == 0 {
		// Every running request is explicit: Schedule's loop.
		for i := 0; i < len(s.running) && budget > 0; i++ {
			n, ok := s.scheduleRunning(s.running[i], budget, b)
			if !ok {
				break
			}
			budget -= n
		}
	} else {
		// The explicit requests and the lazy ones with blocks to grow, merged in running order;
		// the other lazy decoders between them take one token each. When the budget covers
		// everything every running request could take (covers), no decoder is starved and no
		// prefill chunk is cut by it, so where the implicit decoders stand does not matter: they
		// are counted once at the end instead of found between the visits.
		covers := s.budgetCovers(budget)
		if s.touch.phase != nil {
			if ph := s.touch.phase[step%int64(s.oweBT)]; len(ph) > 0 {
				if covers && s.kv.Pool.AnonymousAhead(len(ph)+s.blocksBound(len(grow))) {
					// Every decoder of the phase takes its block without a visit, as its
					// visit would (no other allocation of the pass can make one fail): it
					// counts as grown once s.grown reaches step.
					for range ph {
						if !s.kv.OweBlock() {
							panic("scheduler: a phase's block not handed out as foreseen")
						}
					}
				} else {
					// Visited in running order, as a due touch would be.
					grow = append(grow, ph...)
					slices.SortFunc(grow, func(a, b wheelEnt) int { return int(a.order - b.order) })
				}
			}
		}
		visited := 0 // running requests visited (covers only)
		prev, stopped := -1, false
		for i, g := 0, 0; i < len(s.active) || g < len(grow); {
			var r *Request // nil for a lazy decoder served without reading it
			var e wheelEnt
			lazy := false
			if g < len(grow) && (i == len(s.active) || grow[g].order < s.active[i].order) {
				e, lazy = grow[g], true
				g++
				if !s.touch.hot[e.id].lazy {
					continue // preempted in this pass
				}
			} else {
				r = s.active[i]
				i++
				if r.State != Running {
					continue // preempted in this pass
				}
			}
			if !covers {
				if lazy {
					r = s.touch.lz[e.id].req
				}
				p := s.runningIndexFrom(r, prev+1)
				budget = s.serveImplicit(prev+1, p-prev-1, budget, b)
				prev = p
				if budget <= 0 {
					stopped = true
					if lazy {
						s.serveImplicit(p, 1, 0, b) // not reached: starved
					}
					break
				}
			}
			if lazy {
				if !s.growLazy(e.id, e.order, b) {
					stopped = true
					break
				}
				budget--
				visited++
				continue
			}
			n, ok := s.scheduleRunning(r, budget, b)
			if !ok {
				stopped = true // r preempted itself: it was the last running request
				break
			}
			budget -= n
			visited++
		}
		// Lazy decoders popped for growing that the pass did not reach go back to the heap.
		for _, e := range grow {
			if s.touch.hot[e.id].lazy && !s.touch.queued(e.id) {
				s.touch.push(e.id, e.order)
			}
		}
		// The lazy decoders after the last explicit request; with the pass stopped, none of
		// them is reached. (Covered, every running request not visited is an implicit decoder
		// and took its token: a request visited stays running, as preemption takes the last
		// running request, and a pass stops only when that was the one visited.)
		switch rest := len(s.running) - prev - 1; {
		case covers:
			budget -= len(s.running) - visited
		case stopped:
			s.serveImplicit(prev+1, rest, 0, b)
		default:
			budget = s.serveImplicit(prev+1, rest, budget, b)
		}
	}
	s.growScratch = grow
	s.grown = step
	s.admit(budget, b)
	b.Lazy.Implicit = s.nLazy
	b.NumTokens += s.nLazy
	sum := s.k0.Add(s.k1.Scale(float64(s.tick)))
	for i := range b.Entries {
		sum = sum.Add(s.entrySeconds(&b.Entries[i]))
	}
	b.Lazy.Sum = sum
	if len(b.Entries) == 0 && len(b.Preempted) == 0 && len(b.Lazy.starved) == 0 && s.nLazy > 0 {
		// Blocks grown for lazy decoders at the start of this step change nothing in the
		// steps after it until the next touch: it may head a span.
		b.Lazy.Span = math.MaxInt64
		if s.touch.len() > 0 {
			b.Lazy.Span = s.touch.minAt() - step
		}
		if s.touch.phase != nil {
			b.Lazy.Span = min(b.Lazy.Span, s.touch.nextPhase(step)-step)
		}
		b.Lazy.Slope = s.k1
	}
}

// UpdateLazy applies a step built by ScheduleLazy, b.Lazy.Steps times when it is the first of a
// span (b.Lazy.Span), and returns the explicit entries' outputs; every lazy decoder received one
// token per step (b.Lazy.Delivered of them). Explicit requests that now decode become lazy.
func (s *Scheduler) UpdateLazy(b *Batch) []Output {
	m := max(b.Lazy.Steps, 1)
	if m > 1 && (b.Lazy.Span < int64(m) || len(b.Entries) > 0) {
		panic("scheduler: UpdateLazy of several steps that are not a span")
	}
	b.Lazy.Delivered = s.nLazy
	s.tick += int64(m)
	s.outs = s.outs[:0]
	for i := range b.Entries {
		o, ok := s.apply(&b.Entries[i])
		if !ok {
			continue
		}
		s.outs = append(s.outs, o)
		if o.Finished {
			s.removeRunning(o.Req)
			s.removeActive(o.Req)
		}
	}
	if s.canLazy() {
		j := 0
		for _, r := range s.active {
			if r.State == Running && !r.Prefilling() {
				s.register(r)
				continue
			}
			s.active[j] = r
			j++
		}
		clear(s.active[j:])
		s.active = s.active[:j]
		for _, r := range b.Lazy.starved {
			if r.State == Running && !s.isLazy(r) {
				s.register(r)
			}
		}
	} else {
		for _, r := range b.Lazy.starved {
			if r.State == Running {
				s.addActive(r)
			}
		}
	}
	if len(b.Entries) > 0 || b.Lazy.Delivered > 0 {
		s.Steps += int64(m)
	}
	return s.outs
}
