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

// eventQueue is a min-heap ordered by (time, class, sequence): a total order, so runs are
// reproducible.
type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	a, b := &q[i], &q[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.class != b.class {
		return a.class < b.class
	}
	return a.seq < b.seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	n := len(old)
	ev := old[n-1]
	old[n-1] = event{}
	*q = old[:n-1]
	return ev
}
func (q eventQueue) peek() *event { return &q[0] }

// newSource returns the engine's seeded source (PCG, math/rand/v2).
func newSource(seed uint64) *rand.PCG {
	return rand.NewPCG(seed, pcgStream)
}

// seedSource restarts src as newSource(seed) would start it.
func seedSource(src *rand.PCG, seed uint64) { src.Seed(seed, pcgStream) }

const pcgStream = 0x73657276657369
