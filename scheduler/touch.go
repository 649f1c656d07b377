package scheduler

import (
	"math"
	"math/bits"
	"slices"
)

// touchQueue holds the lazy requests by touch step, and gives back those due at a step in
// running order (touch step, then admission order). Most touches are a block of tokens ahead
// (a decoder grows its blocks every block-size steps), so near ones sit in a timing wheel of
// wheelSize slots, one per step, found through a bitmap; farther ones (a request's finish) wait in
// a heap and move to the wheel as it turns. Pushing and removing are constant time; the requests
// due at a step are sorted by admission order when they come out (a few per step), by the order
// kept in their wheel entries. The queue names lazy states by id, and keeps what it and a growing
// visit read of each (touchHot) packed by id apart from the states: with many engines
// interleaved a request's own state is out of the processor's caches, and a decoder that only
// grows a block is served without reading it or its request.
type touchQueue struct {
	lz   []*lazyState           // by id
	hot  []touchHot             // by id
	base int64                  // the wheel covers steps base .. base+wheelSize-1
	full [wheelSize / 64]uint64 // bit s: wheel[s] is not empty
	far  touchHeap
	n    int
	// phase[p] lists, under block tokens bt (Scheduler.oweBT), the lazy decoders whose blocks
	// grow at every step s with s mod bt == p, a block at a time without their tables
	// (Scheduler.growPhase): they are queued at their other touch only.
	phase [][]wheelEnt
	wheel [wheelSize][]wheelEnt // last: a step reads one slot of it
}

// touchHot is the part of a lazy state the touch queue and a growing visit read: its touch
// steps, its place in the queue, the blocks it owes and whether it is lazy.
type touchHot struct {
	growAt  int64 // the step whose scheduling must grow its blocks (it stays lazy for that)
	otherAt int64 // the step at which it must be explicit again
	hidx    int32 // index in the far heap, -1 outside
	wslot   int32 // slot in the wheel, -1 outside
	wpos    int32 // index in that slot
	// owed counts the blocks grown for it while lazy and not yet in its table
	// (kvcache.Manager.OweBlock): named when it turns explicit, as it does before it leaves.
	owed int32
	// ppos is its index in the phase list of growAt, -1 outside: then growAt and owed are as of
	// the first boundary (Scheduler.phaseSteps).
	ppos int32
	lazy bool
}

// touchAt is the step at which the lazy state must be visited: the earlier of its two, or its
// other touch for a decoder on a phase list (it grows without a visit).
func (h *touchHot) touchAt() int64 {
	if h.ppos >= 0 {
		return h.otherAt
	}
	return min(h.growAt, h.otherAt)
}

const wheelSize = 256 // a power of two, larger than usual block sizes

// wheelEnt is a lazy state in a wheel slot, by id, with its request's admission order.
type wheelEnt struct {
	order int64
	id    int32
}

func (q *touchQueue) len() int { return q.n }

// add makes room for lazy state lz (a new id) and returns its id.
func (q *touchQueue) add(lz *lazyState) int32 {
	q.lz = append(q.lz, lz)
	q.hot = append(q.hot, touchHot{hidx: -1, wslot: -1, ppos: -1})
	q.far.hot = &q.hot
	return int32(len(q.lz) - 1)
}

// push queues id, of a request of admission order order, at its touch step (the next step if
// that has passed).
func (q *touchQueue) push(id int32, order int64) {
	h := &q.hot[id]
	at := max(h.touchAt(), q.base)
	q.n++
	if at >= q.base+wheelSize {
		h.wslot = -1
		q.far.push(id, at, order)
		return
	}
	s := int32(at & (wheelSize - 1))
	h.wslot, h.wpos = s, int32(len(q.wheel[s]))
	q.wheel[s] = append(q.wheel[s], wheelEnt{order: order, id: id})
	q.full[s/64] |= 1 << (s % 64)
}

// queued reports whether id is in the queue.
func (q *touchQueue) queued(id int32) bool { return q.hot[id].wslot >= 0 || q.hot[id].hidx >= 0 }

// remove takes id out of the queue.
func (q *touchQueue) remove(id int32) {
	h := &q.hot[id]
	switch {
	case h.wslot >= 0:
		s := h.wslot
		w := q.wheel[s]
		last := len(w) - 1
		if int(h.wpos) != last {
			w[h.wpos] = w[last]
			q.hot[w[last].id].wpos = h.wpos
		}
		q.wheel[s] = w[:last]
		if last == 0 {
			q.full[s/64] &^= 1 << (s % 64)
		}
		h.wslot = -1
	case h.hidx >= 0:
		q.far.remove(int(h.hidx))
	default:
		return
	}
	q.n--
}

// due appends to dst the lazy states due at or before step, in running order, and takes them
// out. Steps before step that were skipped (a span) had none due. An empty dst's array may be
// traded for a slot's: the caller keeps only the slice returned.
func (q *touchQueue) due(step int64, dst []wheelEnt) []wheelEnt {
	for ; q.base <= step; q.base++ {
		s := int32(q.base & (wheelSize - 1))
		if w := q.wheel[s]; len(w) > 0 {
			slices.SortFunc(w, func(a, b wheelEnt) int { return int(a.order - b.order) })
			for _, e := range w {
				q.hot[e.id].wslot = -1
			}
			q.n -= len(w)
			if len(dst) == 0 {
				// The slot's array becomes dst and dst's the slot's: no copy, and the entries
				// just sorted are those the caller reads.
				dst, q.wheel[s] = w, dst[:0]
			} else {
				dst = append(dst, w...)
				q.wheel[s] = w[:0]
			}
			q.full[s/64] &^= 1 << (s % 64)
		}
		// The step leaving the wheel makes room for one more: bring in the far touches it
		// covers now.
		for q.far.len() > 0 && q.far.minAt() < q.base+1+wheelSize {
			order := q.far.s[0].order
			id := q.far.pop()
			h := &q.hot[id]
			at := max(h.touchAt(), q.base+1)
			s := int32(at & (wheelSize - 1))
			h.wslot, h.wpos = s, int32(len(q.wheel[s]))
			q.wheel[s] = append(q.wheel[s], wheelEnt{order: order, id: id})
			q.full[s/64] |= 1 << (s % 64)
		}
		if q.n == 0 {
			q.base = step
		}
	}
	return dst
}

// minAt is the earliest touch step queued (math.MaxInt64 if none).
func (q *touchQueue) minAt() int64 {
	at := int64(math.MaxInt64)
	if q.far.len() > 0 {
		at = q.far.minAt()
	}
	// The first non-empty wheel slot at or after base, in wheel order.
	b := int(q.base & (wheelSize - 1))
	for k := 0; k <= wheelSize/64; k++ {
		word := (b/64 + k) % (wheelSize / 64)
		bitsw := q.full[word]
		if k == 0 {
			bitsw &^= (1 << (b % 64)) - 1 // slots before base in the first word
		} else if k == wheelSize/64 {
			bitsw &= (1 << (b % 64)) - 1 // wrapped around: only those before base
		}
		if bitsw != 0 {
			s := word*64 + bits.TrailingZeros64(bitsw)
			off := int64((s - b + wheelSize) % wheelSize)
			return min(at, q.base+off)
		}
	}
	return at
}

// touchHeap holds the touches beyond the wheel, ordered by step. A slot holds its keys and the id
// of a lazy state, not a pointer: sifting neither visits the requests nor pays the garbage
// collector's write barrier.
type touchHeap struct {
	s   []touchSlot
	hot *[]touchHot // the queue's, by id
}

type touchSlot struct {
	at, order int64
	id        int32
}

func (h *touchHeap) len() int     { return len(h.s) }
func (h *touchHeap) minAt() int64 { return h.s[0].at }
func (h *touchHeap) less(i, j int) bool {
	a, b := &h.s[i], &h.s[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.order < b.order
}

func (h *touchHeap) swap(i, j int) {
	h.s[i], h.s[j] = h.s[j], h.s[i]
	hot := *h.hot
	hot[h.s[i].id].hidx, hot[h.s[j].id].hidx = int32(i), int32(j)
}

func (h *touchHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

func (h *touchHeap) down(i int) bool {
	i0, n := i, len(h.s)
	for {
		j := 2*i + 1
		if j >= n {
			break
		}
		if k := j + 1; k < n && h.less(k, j) {
			j = k
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}

func (h *touchHeap) push(id int32, at, order int64) {
	(*h.hot)[id].hidx = int32(len(h.s))
	h.s = append(h.s, touchSlot{at: at, order: order, id: id})
	h.up(len(h.s) - 1)
}

func (h *touchHeap) pop() int32 {
	return h.remove(0)
}

func (h *touchHeap) remove(i int) int32 {
	n := len(h.s) - 1
	id := h.s[i].id
	if i != n {
		h.swap(i, n)
	}
	h.s = h.s[:n]
	if i != n && !h.down(i) {
		h.up(i)
	}
	(*h.hot)[id].hidx = -1
	return id
}

// joinPhase puts id, of admission order order, on the phase list of its growAt.
func (q *touchQueue) joinPhase(id int32, order int64) {
	h := &q.hot[id]
	l := &q.phase[h.growAt%int64(len(q.phase))]
	h.ppos = int32(len(*l))
	*l = append(*l, wheelEnt{order: order, id: id})
}

// leavePhase takes id off its phase list (if on one); growAt is still the list's step then.
func (q *touchQueue) leavePhase(id int32) {
	h := &q.hot[id]
	if h.ppos < 0 {
		return
	}
	l := &q.phase[h.growAt%int64(len(q.phase))]
	last := len(*l) - 1
	if int(h.ppos) != last {
		(*l)[h.ppos] = (*l)[last]
		q.hot[(*l)[last].id].ppos = h.ppos
	}
	*l = (*l)[:last]
	h.ppos = -1
}

// nextPhase is the first step after step at which a phase list's decoders grow (math.MaxInt64
// if none is listed).
func (q *touchQueue) nextPhase(step int64) int64 {
	bt := int64(len(q.phase))
	for k := int64(1); k <= bt; k++ {
		if len(q.phase[(step+k)%bt]) > 0 {
			return step + k
		}
	}
	return math.MaxInt64
}
