package sim

import (
	"math/rand/v2"

	"github.com/servesim/servesim/vtime"
)

// Event classes, in processing order at equal times: a finished step is applied before new
// arrivals are queued, and client timers see both.
const (
	classStep = iota
	classArrival
	classTimer
)

type event struct {
	at    vtime.Time
	class int
	seq   uint64
	rec   *Record
	fn    func(*Engine)
}

// eventQueue is a binary min-heap ordered by (time, class, sequence): a total order, so runs are
// reproducible. It is container/heap's algorithm on typed slots holding only the keys and the index
// of the event's payload (record, callback) in a slab, so sifting moves no pointers: events are
// neither boxed nor subject to the garbage collector's write barrier.
type eventQueue struct {
	h    []queueSlot
	pay  []eventPayload
	free []int32
}

type queueSlot struct {
	at    vtime.Time
	seq   uint64
	class int32
	pay   int32
}

type eventPayload struct {
	rec *Record
	fn  func(*Engine)
}

func (q *eventQueue) Len() int { return len(q.h) }

func (q *eventQueue) less(i, j int) bool {
	a, b := &q.h[i], &q.h[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.class != b.class {
		return a.class < b.class
	}
	return a.seq < b.seq
}

func (q *eventQueue) push(ev event) {
	var p int32
	if k := len(q.free); k > 0 {
		p = q.free[k-1]
		q.free = q.free[:k-1]
	} else {
		p = int32(len(q.pay))
		q.pay = append(q.pay, eventPayload{})
	}
	q.pay[p] = eventPayload{rec: ev.rec, fn: ev.fn}
	q.h = append(q.h, queueSlot{at: ev.at, seq: ev.seq, class: int32(ev.class), pay: p})
	h := q.h
	for j := len(h) - 1; j > 0; {
		i := (j - 1) / 2
		if !q.less(j, i) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

func (q *eventQueue) pop() event {
	h := q.h
	n := len(h) - 1
	h[0], h[n] = h[n], h[0]
	for i := 0; ; {
		j := 2*i + 1
		if j >= n {
			break
		}
		if k := j + 1; k < n && q.less(k, j) {
			j = k
		}
		if !q.less(j, i) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
	s := h[n]
	q.h = h[:n]
	pl := q.pay[s.pay]
	q.pay[s.pay] = eventPayload{}
	q.free = append(q.free, s.pay)
	return event{at: s.at, class: int(s.class), seq: s.seq, rec: pl.rec, fn: pl.fn}
}

// peekAt is the time of the next event.
func (q *eventQueue) peekAt() vtime.Time { return q.h[0].at }

// newSource returns the engine's seeded source (PCG, math/rand/v2).
func newSource(seed uint64) *rand.PCG {
	return rand.NewPCG(seed, pcgStream)
}

// seedSource restarts src as newSource(seed) would start it.
func seedSource(src *rand.PCG, seed uint64) { src.Seed(seed, pcgStream) }

const pcgStream = 0x73657276657369
