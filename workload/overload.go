package workload

import (
	"fmt"
	"math"

	"github.com/servesim/servesim/vtime"
)

// StatusOverloaded is the status of an open-loop or trace run whose arrivals outran the server:
// the arrival rate is above the rate it served and the queue of requests not yet running grew
// through the arrivals, so its latencies measure the length of the run, not the server.
const StatusOverloaded = "overloaded"

// Overload says why a run is overloaded and which limit binds.
type Overload struct {
	// ArrivalReqS is the arrival rate: accepted requests over the span of their arrivals.
	ArrivalReqS float64 `json:"arrival_req_s"`
	// ServedReqS is the completion rate from the first arrival to the last completion.
	ServedReqS float64 `json:"served_req_s"`
	// QueuedAtEnd is the number of requests sent but not running (in the API server or waiting
	// in the scheduler) at the first sample after the last arrival; PeakQueued the most in any
	// sample.
	QueuedAtEnd int `json:"queued_at_end"`
	PeakQueued  int `json:"peak_queued"`
	// Binds is the limit that holds the engine back while requests queue: "KV cache" (full or
	// preempting), "max-num-seqs" (every slot taken) or "arrival rate above capacity" (neither:
	// the engine's step time and token budget cannot keep up).
	Binds string `json:"binds"`
	// Message says all of it in a sentence.
	Message string `json:"message"`
}

// Overload thresholds: the arrival rate must exceed the served rate by overloadRatio, and the
// queue must hold at least overloadMinQueued requests at the end of the arrivals and more than
// at their midpoint. A KV cache at kvFullUsage of its blocks counts as full.
const (
	overloadRatio     = 1.1
	overloadMinQueued = 2
	kvFullUsage       = 0.95
)

// overloadWatch follows an open-loop run's queue on the KV sampling grid.
type overloadWatch struct {
	first, mid, last vtime.Time // arrival span of the accepted requests
	accepted         int
	maxNumSeqs       int
	// burst: every accepted request arrives at one instant (vllm bench throughput, a rate of inf
	// without a concurrency limit): judged by the queue at the first sample after it. origin is
	// the start of the measured run (the end of vllm bench's warm-ups), which the run's duration
	// counts from.
	burst  bool
	origin vtime.Time

	midSeen, endSeen     bool
	queuedMid, queuedEnd int
	peakQueued           int
	// Samples with a queue from the middle of the arrivals on (until the queue drains): how
	// many, how many with every max-num-seqs slot taken, the most running, the highest KV usage.
	n, full, running int
	usage            float64
}

// newOverloadWatch watches a list of open-loop requests (nil when fewer than two are accepted; a
// burst watch when they all arrive at once).
func newOverloadWatch(reqs []Request, maxModelLen, maxNumSeqs int) *overloadWatch {
	w := &overloadWatch{maxNumSeqs: maxNumSeqs}
	for i := range reqs {
		q := &reqs[i]
		if q.InputTokens+q.OutputTokens > maxModelLen {
			continue
		}
		if w.accepted == 0 {
			w.first = q.At
		}
		w.last = max(w.last, q.At)
		w.accepted++
	}
	if w.accepted < 2 {
		return nil
	}
	w.burst = w.last <= w.first
	w.mid = w.first + (w.last-w.first)/2
	return w
}

// newBurstWatch watches a vllm bench client without a concurrency limit whose measured run
// starts at origin: nil unless at least two requests that fit max_model_len arrive, all at one
// instant.
func newBurstWatch(reqs []benchReq, maxModelLen, maxNumSeqs int, origin vtime.Time) *overloadWatch {
	w := &overloadWatch{maxNumSeqs: maxNumSeqs, burst: true, origin: origin}
	for i := range reqs {
		q := &reqs[i]
		if q.InputTokens+q.OutputTokens > maxModelLen {
			continue
		}
		at := origin.Add(vtime.Duration(q.At))
		if w.accepted > 0 && at != w.first {
			return nil
		}
		w.first, w.mid, w.last = at, at, at
		w.accepted++
	}
	if w.accepted < 2 {
		return nil
	}
	return w
}

// burstBinds is an Overload's Binds for a burst.
const burstBinds = "a burst (every request at once)"

// observe takes one sample: queued requests (sent, not running), running ones, KV usage.
func (w *overloadWatch) observe(t vtime.Time, queued, running int, usage float64) {
	w.peakQueued = max(w.peakQueued, queued)
	if !w.midSeen && t >= w.mid {
		w.midSeen = true
		if t < w.last {
			w.queuedMid = queued
		}
	}
	if t >= w.mid && queued > 0 {
		w.n++
		w.running = max(w.running, running)
		w.usage = math.Max(w.usage, usage)
		if w.maxNumSeqs > 0 && running >= w.maxNumSeqs {
			w.full++
		}
	}
	if !w.endSeen && t >= w.last {
		w.endSeen = true
		w.queuedEnd = queued
	}
}

// overload judges the run (nil: not overloaded). completed requests finished by lastDoneS (s);
// preemptions is the run's count.
func (w *overloadWatch) overload(completed int, lastDoneS float64, preemptions int) *Overload {
	if w == nil || completed == 0 || !w.endSeen {
		return nil
	}
	if w.burst {
		if w.queuedEnd < overloadMinQueued {
			return nil // the burst ran at once (or nearly): its latencies are the server's
		}
		at := w.first.Sub(w.origin).Seconds()
		served := float64(completed) / math.Max(lastDoneS-at, 1e-9)
		return &Overload{ServedReqS: served, QueuedAtEnd: w.queuedEnd, PeakQueued: w.peakQueued, Binds: burstBinds,
			Message: fmt.Sprintf("all %s requests arrive at once (t = %s s) and %s of them were still queued (not running) at the next sample; the server took %s s to serve them (%s req/s). The latencies measure the queue of the burst, not the server: its throughput is the figure to read",
				commas(int64(w.accepted)), fmt.Sprintf("%g", at), commas(int64(w.queuedEnd)), fmt.Sprintf("%.4g", lastDoneS-at), rate3(served))}
	}
	span := w.last.Sub(w.first).Seconds()
	arrival := float64(w.accepted-1) / span
	served := float64(completed) / math.Max(lastDoneS-w.first.Seconds(), span)
	if !(arrival > overloadRatio*served) || w.queuedEnd < overloadMinQueued || w.queuedEnd <= w.queuedMid {
		return nil
	}
	o := &Overload{ArrivalReqS: arrival, ServedReqS: served, QueuedAtEnd: w.queuedEnd, PeakQueued: w.peakQueued}
	var why string
	switch {
	case preemptions > 0 || w.usage >= kvFullUsage:
		o.Binds = "KV cache"
		why = fmt.Sprintf("the KV cache binds: %.0f%% of its blocks in use, %s preemptions, %d running (max-num-seqs %d)",
			100*w.usage, commas(int64(preemptions)), w.running, w.maxNumSeqs)
	case w.n > 0 && 2*w.full >= w.n:
		o.Binds = "max-num-seqs"
		why = fmt.Sprintf("max-num-seqs (%d) binds: every slot is taken while the KV cache is %.0f%% used", w.maxNumSeqs, 100*w.usage)
	default:
		o.Binds = "arrival rate above capacity"
		why = fmt.Sprintf("the engine's step time and token budget bind: at most %d running (max-num-seqs %d), the KV cache %.0f%% used",
			w.running, w.maxNumSeqs, 100*w.usage)
	}
	o.Message = fmt.Sprintf("arrival rate %s req/s is above the %s req/s served; %s requests were queued (not running) at the last arrival; %s. The latencies measure the queue, not the server",
		rate3(arrival), rate3(served), commas(int64(w.queuedEnd)), why)
	return o
}

// Short says it in a few words for tables: "does not keep up: 2.11 of 9.98 req/s served".
func (o *Overload) Short() string {
	if o.Binds == burstBinds {
		return fmt.Sprintf("a burst: %s requests queued at once, %s req/s served", commas(int64(o.QueuedAtEnd)), rate3(o.ServedReqS))
	}
	return fmt.Sprintf("does not keep up: %s of %s req/s served", rate3(o.ServedReqS), rate3(o.ArrivalReqS))
}

// rate3 writes a rate with 3 significant digits, thousands separated from 1,000 on.
func rate3(v float64) string {
	if v >= 1000 {
		return commas(int64(math.Round(v)))
	}
	return fmt.Sprintf("%.3g", v)
}
