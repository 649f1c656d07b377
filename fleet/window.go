package fleet

import (
	"fmt"
	"slices"

	"github.com/servesim/servesim/internal/workpool"
	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// Routing ahead. Round-robin and random routing look at no replica: with every replica serving
// from the start (no autoscaler) and no cap on outstanding requests, where each request goes
// depends only on the requests before it. The router then routes a window of requests at once,
// and each replica runs through the window alone, on its own, the replicas spread over workers:
// a replica's state stays in the processor's caches for the window instead of being evicted by
// the other replicas' between two of its steps, and the work is split over the cores.
//
// What each replica is given and when is what the event loop (run.go) would give it. The loop
// handles the fleet's events in (time, sequence of setting) order, running an engine up to t
// before any event at t. A replica's events are its arrivals and its KV samples; the others'
// do not touch it. At equal times the sequence decides; the arrival events are numbered (one per
// distinct arrival time, set when the previous one is handled), and a sample set while handling
// arrival event k comes before arrival events k+1 on, while one set by the previous sample at time
// s comes after every arrival event set before that sample was handled: those at times before s,
// and the one at s if it came first. So replaying a replica's arrivals and samples in that order,
// each after running its engine up to the event's time, gives it exactly what the loop gives it.
//
// The replica's share of the series (finishes, TTFT, engine waiting at samples) is counted apart
// and merged after the window: counts and sums of integers, equal in any order. The result does
// not depend on the number of workers. Engine events (ReplicaResult.Events) may be fewer than in
// the event loop: an engine's span of identical steps ends at every time its run is stopped at,
// and here only its own events stop it.

// With a refresh interval the other policies route ahead too: between two refreshes the router
// reads only its view, set at the last refresh and counted forward by its own sends. A window
// then holds arrivals of one refresh interval only (a long interval is split into windows of the
// usual size, which change nothing the router reads); after the last window of an interval every
// replica runs up to the next refresh time, if it has an event by then, as the loop runs every
// engine before the refresh there (which comes before any other event at its time), and the
// views are read.

// canRouteAhead reports whether routing never looks at a replica's state now (see above).
func (c *Config) canRouteAhead() bool {
	return (c.Policy == RoundRobin || c.Policy == Random || c.RefreshS > 0) && c.ReplicaCap == 0 && c.Autoscale == nil && !c.eventByEvent
}

// routedReq is a request routed ahead, or held for a busy replica by the event loop: sent at at
// (its arrival event's time, arrival event k when routed ahead), with tag as its record's tag.
type routedReq struct {
	q   workload.Request
	tag int
	at  vtime.Time
	k   int64
}

// window is the arrival events of one window: base before it, at[i] the time of event base+i;
// end is the first arrival time after the window (vtime.Never after the last).
type window struct {
	base int64
	at   []vtime.Time
	end  vtime.Time
}

// handledBefore is how many arrival events the loop handles before a sample at t (t in the
// window) set before arrival event idx: those at earlier times, and the one at t if it was set
// first.
func (w *window) handledBefore(t vtime.Time, idx int64) int64 {
	i, found := slices.BinarySearch(w.at, t)
	n := w.base + int64(i)
	if found && n < idx {
		n++
	}
	return n
}

// seriesShare is a replica's part of the series over one window, by bucket: the buckets it
// touched (a window spans one or two), kept from window to window with their storage.
type seriesShare struct {
	width vtime.Duration
	b     []shareBucket
}

// shareBucket is bucket i's share: its TTFTs (ms) go into the series' distribution at the merge.
type shareBucket struct {
	i         int
	completed int
	ttft      []float64
	waitSum   float64
	waitN     int
}

func (s *seriesShare) at(t vtime.Time) *shareBucket {
	i := int(int64(t) / int64(s.width))
	for k := len(s.b) - 1; k >= 0; k-- {
		if s.b[k].i == i {
			return &s.b[k]
		}
	}
	if len(s.b) < cap(s.b) {
		s.b = s.b[:len(s.b)+1]
	} else {
		s.b = append(s.b, shareBucket{})
	}
	b := &s.b[len(s.b)-1]
	*b = shareBucket{i: i, ttft: b.ttft[:0]}
	return b
}

// replicasPerWorker is the fewest replicas per worker routing ahead by foresight when
// Config.Workers is 0.
const replicasPerWorker = 16

// windowRequests is how many requests a window holds: some hundreds per replica (their state
// stays cached), at least a few thousand.
func windowRequests(replicas int) int { return max(4096, 256*replicas) }

// eventClock numbers the arrival events routed ahead: one per distinct arrival time, as the event
// loop sets them.
type eventClock struct {
	cur     vtime.Time // the last event's time
	n       int64      // events so far
	started bool
}

// isNew reports whether an arrival at t is a new arrival event.
func (c *eventClock) isNew(t vtime.Time) bool { return !c.started || t > c.cur }

// openEvent starts the arrival event at t in window w, reporting progress at the one before.
func (r *run) openEvent(c *eventClock, w *window, t vtime.Time) {
	if c.started {
		r.progress(c.cur)
	}
	c.cur, c.started = t, true
	w.at = append(w.at, t)
	c.n++
}

// startWindows readies routing ahead (the replicas' shares of the series, the crew, which the
// caller stops) and returns how many requests a window holds at most.
func (r *run) startWindows() int {
	for _, x := range r.reps {
		x.share.width = r.width
	}
	workers := workpool.Workers(r.cfg.Workers)
	if r.ahead && r.cfg.Workers <= 0 {
		// Routing ahead with an exact view, a worker for every replicasPerWorker replicas at
		// most: its windows are about a step floor long, and a smaller fleet's hold too few
		// replicas to share (a second worker would spin for nothing).
		workers = min(workers, max(len(r.reps)/replicasPerWorker, 1))
	}
	r.crew = newCrew(workers, len(r.reps))
	if r.cfg.window > 0 {
		return r.cfg.window
	}
	return windowRequests(len(r.reps))
}

// loopWindowed is loop when routing ahead.
func (r *run) loopWindowed() error {
	size := r.startWindows()
	defer r.crew.stop()
	var w window
	var ec eventClock
	r.haveNext = r.read()
	slotEnd := vtime.Time(-1) // the end of the refresh interval being routed (-1: none yet)
	for {
		w.base, w.at = ec.n, w.at[:0]
		n := 0
		if r.refresh > 0 && r.haveNext && (slotEnd < 0 || r.next.At >= slotEnd) {
			// Every replica is at the refresh before the window's first arrival.
			r.refreshView()
			slotEnd = r.slot(r.next.At) + vtime.Time(r.refresh)
		}
		for r.haveNext {
			if ec.isNew(r.next.At) {
				if n >= size || (r.refresh > 0 && r.next.At >= slotEnd) {
					break
				}
				r.openEvent(&ec, &w, r.next.At)
			}
			q := r.next
			r.now = ec.cur
			r.routeAhead(&q, ec.cur, ec.n-1)
			n++
			r.haveNext = r.read()
		}
		w.end = vtime.Never
		if r.haveNext {
			w.end = r.next.At
			if r.refresh > 0 && r.next.At >= slotEnd {
				// The next window starts a refresh interval: the replicas run up to its refresh.
				w.end = r.slot(r.next.At)
			}
		} else if ec.started {
			r.progress(ec.cur)
		}
		if !r.haveNext {
			if err := r.stream.Err(); err != nil {
				return err
			}
		}
		if err := r.replayAll(&w); err != nil {
			return err
		}
		if !r.haveNext {
			return nil
		}
	}
}

// routeAhead routes q, of arrival event k at t, to a replica's window.
func (r *run) routeAhead(q *workload.Request, t vtime.Time, k int64) {
	r.arrival(t)
	x := r.rt.pick(r.serving(), r.upLoad, q)
	x.ops = append(x.ops, routedReq{q: *q, tag: int(r.routed - 1), at: t, k: k})
	if x.rep.Fits(q) {
		// What the loop's send does for a request the replica takes (it refuses one longer
		// than max_model_len at once).
		x.index.add(q)
		x.ld.view++
	}
	x.routed++
}

// replayAll runs every replica through window w and merges their shares of the series.
func (r *run) replayAll(w *window) error {
	// Only replicas with something before w.end run (a short refresh interval makes windows of a
	// request or two); one runs here, more over the workers.
	busy := r.busy[:0]
	for _, x := range r.reps {
		if w.end == vtime.Never || len(x.ops) > 0 || (x.sampleSeq != 0 && x.sampleAt < w.end) || (r.refresh > 0 && x.eng.NextEvent() <= w.end) {
			busy = append(busy, x)
		}
	}
	r.busy = busy
	return r.runWindow(busy, w)
}

// runWindow replays the replicas of busy through window w and merges their shares of the series.
func (r *run) runWindow(busy []*replica, w *window) error {
	if r.replayFn == nil {
		// One function for every window (a closure made per window is an allocation per
		// arrival when windows are an arrival long).
		r.replayFn = func(x *replica) { r.replay(x, r.win) }
	}
	r.win = w
	r.windows++
	r.crew.run(busy, r.replayFn)
	for _, x := range busy {
		if x.err != nil {
			return x.err
		}
		r.now = max(r.now, x.last)
		for k := range x.share.b {
			b := &x.share.b[k]
			p := r.point(vtime.Time(int64(b.i) * int64(r.width)))
			p.Completed += b.completed
			for _, v := range b.ttft {
				p.ttft.add(v)
			}
			p.waitSum += b.waitSum
			p.waitN += b.waitN
		}
		x.share.b = x.share.b[:0]
	}
	return nil
}

// replay runs replica x through window w: its arrivals and KV samples before w.end in the event
// loop's order, each after running the engine up to its time; after the last window, until idle.
func (r *run) replay(x *replica, w *window) {
	ops := x.ops
	prevK := int64(-1)
	for i := 0; x.err == nil; {
		sample := x.sampleSeq != 0 && x.sampleAt < w.end
		if i < len(ops) {
			o := &ops[i]
			if !sample || o.at < x.sampleAt || (o.at == x.sampleAt && o.k < x.sampleIdx) {
				if o.k != prevK {
					// A new arrival event: the engine runs up to it (requests of one event go
					// in together).
					r.runTo(x, o.at)
					prevK = o.k
				}
				x.armIdx = o.k + 1
				x.rep.Submit(&o.q, o.tag)
				x.last = max(x.last, o.at)
				i++
				continue
			}
		} else if !sample {
			break
		}
		t := x.sampleAt
		r.runTo(x, t)
		prevK = -1
		x.armIdx = w.handledBefore(t, x.sampleIdx) + 1
		x.sampleSeq = 0
		x.rep.Sample()
		s := x.eng.Scheduler()
		b := x.share.at(t)
		b.waitSum += float64(s.NumWaiting() + x.eng.Pending())
		b.waitN++
		x.last = max(x.last, t)
	}
	clear(ops)
	x.ops = ops[:0]
	if (r.refresh > 0 || r.ahead) && w.end != vtime.Never && x.err == nil && x.eng.NextWake() <= w.end {
		// The loop's refresh at w.end: the engine runs up to it after every arrival event
		// before it is handled and the next is set (a sample set now comes after that one).
		// Routing ahead exactly (ahead.go), every step ending in the window is applied and the
		// one running after it foreseen.
		x.armIdx = w.base + int64(len(w.at)) + 1
		r.runTo(x, w.end)
	}
	if w.end == vtime.Never && x.err == nil {
		if err := x.eng.RunUntilIdle(); err != nil {
			x.err = err
		}
		x.last = max(x.last, x.eng.Now())
	}
	if r.ahead {
		// What the router reads next, noted here where the engine's state is in this worker's
		// caches (ahead.go).
		x.live = x.rep.Live()
		x.pendAt, x.pendFin = x.eng.Finishing()
		x.wake = x.eng.NextWake()
		x.kv = x.kvUsage()
		x.kvLow = x.eng.KVFloor()
	}
}

// runTo runs x's engine up to t.
func (r *run) runTo(x *replica, t vtime.Time) {
	if err := x.eng.RunUntil(t); err != nil && x.err == nil {
		x.err = fmt.Errorf("replica %s: %w", x.name, err)
	}
}
