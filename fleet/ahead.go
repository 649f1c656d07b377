package fleet

import (
	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// Routing ahead with an exact view. Least-outstanding, prefix-aware and session routing read, of
// the replicas, only how many requests each has outstanding (the rest is the router's own). That
// number changes by the router's sends and by finishes, and a replica finishes requests only at
// the end of a step: when an engine schedules a step it can tell how many requests the step will
// finish (sim.Engine.Foresee: without speculative decoding, a request's last token is known in
// advance), and no step is shorter than the engine's floor. So from the earliest end e of the
// steps running, no replica finishes a request it has not foreseen before e + floor: the step
// after each running one ends later, and a request sent now to an idle replica finishes at the
// earliest a floor after it is sent. The router routes every arrival before then with the counts
// the loop would see (each running step's foreseen finishes taken off once its end has passed),
// and the replicas run through the window on every CPU, as routing ahead without a view does
// (window.go), before the next window's earliest step end is known. The engines check what was
// foreseen: a step that finishes otherwise, or is shorter than the floor, stops the run with an
// error rather than leave routing that the loop would not have done.
//
// The results are those of the event loop but for the engines' event counts (window.go). A
// window holds few arrivals (a floor is a few milliseconds of a busy fleet's arrivals), so the
// replicas' state is no more cached than in the loop; what it buys is the other CPUs.

// canForesee reports whether the router can route ahead of the replicas exactly (see above).
func (c *Config) canForesee() bool {
	if c.eventByEvent || c.RefreshS > 0 || c.ReplicaCap > 0 || c.Autoscale != nil {
		return false
	}
	switch c.Policy {
	case LeastOutstanding, PrefixAware, Session:
	default:
		return false
	}
	for _, g := range c.Groups {
		if g.Server.Deployment.Engine.SpecTokens() > 0 {
			return false
		}
	}
	// One replica: nothing to spread, and the loop's engine events are those of a run alone.
	return c.Replicas() > 1
}

// loopAhead is loop when the router foresees the replicas' finishes.
func (r *run) loopAhead() error {
	floor := vtime.Duration(vtime.Never)
	for _, x := range r.reps {
		if err := x.eng.Foresee(); err != nil {
			return err
		}
		floor = min(floor, x.eng.StepFloor())
	}
	size := r.startWindows()
	defer r.crew.stop()
	var w window
	var ec eventClock
	sampleMin := vtime.Time(0) // no replica has a KV sample before this
	var epoch int64            // the window's number (replica.mark)
	r.haveNext = r.read()
	for {
		// Until a floor after the earliest running step's end, no finish is unforeseen.
		end := vtime.Never
		if t, _ := r.eh.min(); t != vtime.Never {
			end = t.Add(floor)
		}
		epoch++
		busy, pend := r.busy[:0], r.pend[:0]
		for {
			t, x := r.eh.min()
			if x == nil || t >= end {
				break
			}
			r.eh.remove(x)
			x.mark = epoch
			busy = append(busy, x)
			if x.pendFin > 0 {
				pend = append(pend, x) // in the order of their steps' ends
			}
		}
		due := 0 // pend[:due] have had their foreseen finishes taken off
		w.base, w.at = ec.n, w.at[:0]
		n := 0
		for r.haveNext && r.next.At < end {
			if ec.isNew(r.next.At) {
				if n >= size {
					break
				}
				r.openEvent(&ec, &w, r.next.At)
				for ; due < len(pend) && pend[due].pendAt <= ec.cur; due++ {
					pend[due].ld.out -= int32(pend[due].pendFin)
				}
			}
			q := r.next
			x := r.rt.pick(r.serving(), r.upLoad, &q)
			r.sendAhead(&q, ec, x)
			if x.mark != epoch && (x.pendAt == vtime.Never || x.pendAt < end || x.sampleSeq == 0) {
				// (A replica busy past the window with its KV sample armed only queues q: it is
				// given q when it next runs, at q's time, as the event loop holds requests for a
				// busy replica. Unarmed, q arms it: the sample must be known here, to be taken in
				// its window.)
				x.mark = epoch
				busy = append(busy, x)
			}
			n++
			if x.pendAt == vtime.Never {
				// Idle: its first step starts once q reaches it, and ends a floor after at the
				// earliest.
				end = min(end, ec.cur.Add(floor))
			}
			r.haveNext = r.read()
		}
		w.end = end
		if r.haveNext {
			w.end = min(end, r.next.At)
		} else {
			if err := r.stream.Err(); err != nil {
				return err
			}
			w.end = vtime.Never
			if ec.started {
				r.progress(ec.cur)
			}
		}
		r.pend = pend
		if err := r.runAhead(busy, &w, epoch, &sampleMin); err != nil {
			return err
		}
		if !r.haveNext {
			return nil
		}
	}
}

// Routing least-kv ahead. Least-kv reads every replica's KV-cache usage, which changes when its
// engine schedules a step (at a step's end, or at an idle engine's arrival), by what that step
// frees and admits and grows: nothing foresees it. But a replica's usage stays as it is until its
// next wake, and the router needs the usage of the one it picks only: every other needs only to
// be no lower. Under Foresee an engine bounds its usage from below until a floor after its
// running step's end (sim.Engine.KVFloor: what that step's finishes leave, when nothing else can
// free a block by then). So the router routes, arrival time after arrival time, on the usage of
// every replica whose wake has not come, while the replicas whose wake has come (or that an
// arrival woke from idle) count at their floor, as long as the pick is one with a known usage
// strictly below every floor and no floor has expired. When the pick is itself at its floor, it
// alone runs up to the arrival time, on the router's goroutine (its requests so far are all
// routed), and is known again; the first arrival time where another replica's floor may beat the
// pick, or a floor expires, ends the window. Every replica with an event up to the window's end (or at it: the loop runs
// the engines before the arrival there) then runs up to it on its own, the replicas spread over
// the workers, as routing ahead does (window.go). Without foresight (speculative decoding: what a
// step accepts is drawn at its end) no floor is known, and a window ends at the first arrival
// time after a replica's wake.

// canRouteKV reports whether least-kv routes ahead (see above): an exact
// view, and none of what makes the router act between arrivals (a replica cap's queue sends on
// finishes, an autoscaler adds and drains replicas).
func (c *Config) canRouteKV() bool {
	if c.eventByEvent || c.RefreshS > 0 || c.ReplicaCap > 0 || c.Autoscale != nil || c.Policy != LeastKV {
		return false
	}
	return c.Replicas() > 1
}

// Replicas is the number of replicas the fleet starts with (each group's count times its
// deployment's data-parallel replicas).
func (c *Config) Replicas() int {
	n := 0
	for _, g := range c.Groups {
		n += g.Count * max(g.Server.Replicas, 1)
	}
	return n
}

// sendAhead routes q, of the arrival event ec is at, to replica x's window, counting it
// outstanding there as the loop's send does (a request longer than max_model_len is refused at
// once).
func (r *run) sendAhead(q *workload.Request, ec eventClock, x *replica) {
	r.now = ec.cur
	r.arrival(ec.cur)
	x.ops = append(x.ops, routedReq{q: *q, tag: int(r.routed - 1), at: ec.cur, k: ec.n - 1})
	if q.Fits(x.maxLen) {
		x.index.add(q)
		x.ld.out++
	}
	x.routed++
}

// loopKV is loop for least-kv routing ahead (see above).
func (r *run) loopKV() error {
	floor := vtime.Duration(vtime.Never)
	for _, x := range r.reps {
		if r.cfg.noFloors || x.eng.Foresee() != nil {
			// No floors (a busy replica's kvLow is 0): a window ends at the first arrival
			// time after a replica's wake.
			floor = 0
			break
		}
		floor = min(floor, x.eng.StepFloor())
	}
	size := r.startWindows()
	defer r.crew.stop()
	var w window
	var ec eventClock
	sampleMin := vtime.Time(0) // no replica has a KV sample before this
	var epoch int64            // the window's number (replica.mark, replica.bounded)
	var woken []*replica       // the replicas an arrival time wakes from idle
	var fl floors
	r.haveNext = r.read()
	for {
		epoch++
		w.base, w.at = ec.n, w.at[:0]
		// The replicas counted at their floor: none yet (every replica has run up to the
		// window's start).
		fl = floors{list: fl.list[:0], low: 2, until: vtime.Never, epoch: epoch, busy: r.busy[:0]}
		n := 0
		for r.haveNext {
			t := r.next.At
			// A replica whose wake has come by t counts at its floor, which holds until a floor
			// after its running step's end.
			for {
				tw, x := r.eh.min()
				if x == nil || tw > t {
					break
				}
				r.eh.remove(x)
				fl.add(x, x.pendAt.Add(floor))
			}
			x := r.rt.pick(r.serving(), r.upLoad, &r.next)
			if x.bounded == epoch && t < fl.until && n < size {
				// The pick is at its floor: it alone runs up to t, here, and is known again.
				r.replay(x, &window{base: w.base, at: w.at, end: t})
				fl.drop(x)
				x.ld.out, x.ld.kv = int32(x.live), x.kv
				r.eh.fix(x, x.wake)
				continue
			}
			if len(fl.list) > 0 && (x.ld.kv >= fl.low || t >= fl.until) || n >= size {
				// t needs the replicas run up to it: the pick may be beaten by a replica at its
				// floor, or be one (its usage counted at its floor, no lower than low), or a
				// floor has expired.
				break
			}
			// The requests of one arrival time, each picked as the loop picks it: their
			// usage is the same for all (a replica woken from idle by one schedules at t).
			r.openEvent(&ec, &w, t)
			woken = woken[:0]
			for r.haveNext && r.next.At == t {
				q := r.next
				if x == nil {
					x = r.rt.pick(r.serving(), r.upLoad, &q)
				}
				if x.pendAt == vtime.Never {
					woken = append(woken, x)
				}
				r.sendAhead(&q, ec, x)
				if x.mark != epoch && x.sampleSeq == 0 {
					// Unarmed, q arms its KV sample, which must be known to be taken in its
					// window. (Armed, it only queues q, and runs when its step ends.)
					x.mark = epoch
					fl.busy = append(fl.busy, x)
				}
				n++
				x = nil
				r.haveNext = r.read()
			}
			for _, y := range woken {
				if y.bounded != epoch {
					fl.add(y, t.Add(floor)) // its step starts at t, a floor long at least
				}
			}
		}
		busy := fl.busy
		w.end = vtime.Never
		if r.haveNext {
			w.end = r.next.At
		} else {
			if err := r.stream.Err(); err != nil {
				return err
			}
			if ec.started {
				r.progress(ec.cur)
			}
		}
		// Every replica with an event up to the window's end runs to it.
		for {
			t, x := r.eh.min()
			if x == nil || t > w.end {
				break
			}
			r.eh.remove(x)
			if x.mark != epoch {
				x.mark = epoch
				busy = append(busy, x)
			}
		}
		if err := r.runAhead(busy, &w, epoch, &sampleMin); err != nil {
			return err
		}
		if !r.haveNext {
			return nil
		}
	}
}

// floors is what a window of least-kv routing ahead counts at their floor (see above): the
// replicas, the lowest floor, when the first expires; and the window's replicas to run.
type floors struct {
	list  []*replica
	low   float64
	until vtime.Time
	epoch int64
	busy  []*replica
}

// add counts x at its floor until until (replica.kvUntil).
func (f *floors) add(x *replica, until vtime.Time) {
	x.bounded = f.epoch
	x.kvUntil = until
	x.ld.kv = x.kvLow
	f.list = append(f.list, x)
	f.low = min(f.low, x.kvLow)
	f.until = min(f.until, until)
	if x.mark != f.epoch {
		x.mark = f.epoch
		f.busy = append(f.busy, x)
	}
}

// drop stops counting x at its floor.
func (f *floors) drop(x *replica) {
	x.bounded = 0
	f.low, f.until = 2, vtime.Never
	j := 0
	for _, y := range f.list {
		if y != x {
			f.list[j] = y
			j++
			f.low = min(f.low, y.kvLow)
			f.until = min(f.until, y.kvUntil)
		}
	}
	clear(f.list[j:])
	f.list = f.list[:j]
}

// runAhead runs window w, routed ahead with an exact view, on busy and the replicas with a KV
// sample due before its end (every replica after the last window), marking them with the window's
// epoch; it then notes what the router reads of each (what the replay left: its outstanding
// requests, which it foresaw, and its KV usage), the earliest sample pending after the window
// (sampleMin: no scan for samples before it) and the engines' next wakes.
func (r *run) runAhead(busy []*replica, w *window, epoch int64, sampleMin *vtime.Time) error {
	if w.end > *sampleMin {
		// KV samples due in the window (their grid is coarse: a scan now and then).
		*sampleMin = vtime.Never
		for _, x := range r.reps {
			if x.sampleSeq == 0 {
				continue
			}
			if x.sampleAt < w.end || w.end == vtime.Never {
				if x.mark != epoch {
					x.mark = epoch
					busy = append(busy, x)
				}
			} else {
				*sampleMin = min(*sampleMin, x.sampleAt)
			}
		}
	}
	if w.end == vtime.Never {
		for _, x := range r.reps {
			if x.mark != epoch {
				x.mark = epoch
				busy = append(busy, x)
			}
		}
	}
	r.busy = busy
	if err := r.runWindow(busy, w); err != nil {
		return err
	}
	for _, x := range busy {
		x.ld.out, x.ld.kv = int32(x.live), x.kv
		if x.sampleSeq != 0 {
			*sampleMin = min(*sampleMin, x.sampleAt)
		}
		r.eh.fix(x, x.wake)
	}
	return nil
}
