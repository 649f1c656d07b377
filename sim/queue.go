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
// reproducible. It is container/heap's algorithm on a typed slice, so events are not boxed.
type eventQueue []event

func (q eventQueue) Len() int { return len(q) }

func (q eventQueue) less(i, j int) bool {
	a, b := &q[i], &q[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.class != b.class {
		return a.class < b.class
	}
	return a.seq < b.seq
}

func (q *eventQueue) push(ev event) {
	*q = append(*q, ev)
	h := *q
	for j := len(h) - 1; j > 0; {
		i := (j - 1) / 2
		if !h.less(j, i) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

func (q *eventQueue) pop() event {
	h := *q
	n := len(h) - 1
	h[0], h[n] = h[n], h[0]
	for i := 0; ; {
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
		h[i], h[j] = h[j], h[i]
		i = j
	}
	ev := h[n]
	h[n] = event{}
	*q = h[:n]
	return ev
}

func (q eventQueue) peek() *event { return &q[0] }

// newRand returns the engine's seeded source (PCG, math/rand/v2).
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x73657276657369))
}
