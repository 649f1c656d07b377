package workload

import (
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
)

// Replica measures one engine driven by a caller that owns the clock (a fleet of replicas behind
// a router, package fleet) exactly as a run of an open-loop or trace workload measures its
// engine: the same latencies, counters, KV samples on the same grid and the same overload watch,
// so a caller that submits a run's requests at their times, calls Sample when the timer it was
// given fires and Finished when a request ends, gets the run's Metrics from Summarise.
//
// The caller keeps the order of a run's events at equal times: the engine's own events (steps,
// arrivals) before the replica's timers, and timers in the order they were set, an arrival
// counting as set when the previous arrival was handled.
type Replica struct {
	r    *runner
	mml  int
	last vtime.Time
	seen bool
}

// NewReplica measures eng, an engine of srv. every is the KV sampling interval (0: the default,
// 1 s); timer is called with the time of each KV sample to take (Sample). lastArrival, if
// positive, is the time of the stream's last arrival: the overload watch judges the queue at the
// middle and the end of the arrivals.
func NewReplica(srv *sim.Server, eng *sim.Engine, every vtime.Duration, slo *SLO, lastArrival vtime.Time, timer func(t vtime.Time)) *Replica {
	if every <= 0 {
		every = vtime.Second
	}
	p := &Replica{r: newRunnerOn(srv, eng, every, slo), mml: srv.Deployment.Engine.MaxModelLen}
	p.r.timer = timer
	if lastArrival > 0 {
		p.r.col.watch = &overloadWatch{maxNumSeqs: srv.Deployment.Engine.MaxNumSeqs, last: lastArrival}
	}
	return p
}

// ShareExact makes the replica keep at most n latencies exactly per metric (then a histogram
// within QuantileRelErr, as every run past 131,072 requests): replicas of a fleet that share the
// budget keep memory bounded whatever their number, and their merged distribution is exact as
// long as the whole fleet's requests fit one run's budget.
func (p *Replica) ShareExact(n int) {
	c := p.r.col
	for _, s := range c.sets() {
		s.limit = max(n, 1)
	}
}

// ExactBudget is how many latencies a run keeps exactly per metric.
const ExactBudget = exactLimit

// Engine is the engine measured.
func (p *Replica) Engine() *sim.Engine { return p.r.eng }

// Live is the number of requests sent and not finished.
func (p *Replica) Live() int { return p.r.live }

// Fits reports whether a request fits max_model_len (vLLM's API server refuses it otherwise).
func (p *Replica) Fits(q *Request) bool { return q.Fits(p.mml) }

// Submit sends q at the engine's time with tag as sim.RequestSpec.Tag, or counts it rejected
// (nil) when it does not fit max_model_len.
func (p *Replica) Submit(q *Request, tag int) *sim.Record {
	c := p.r.col
	c.submitted++
	if !p.Fits(q) {
		c.rejected++
		return nil
	}
	if w := c.watch; w != nil {
		now := p.r.eng.Now()
		if w.accepted == 0 {
			w.first = now
			w.mid = w.first + (w.last-w.first)/2
		}
		w.accepted++
	}
	return p.r.submit(sim.RequestSpec{PromptTokens: q.InputTokens, MaxTokens: q.OutputTokens, PromptID: q.PromptID, PromptUnique: q.PromptUnique,
		PrefixID: q.PrefixID, PrefixTokens: q.PrefixTokens, Blocks: q.Blocks, BlockSpan: q.BlockSpan, Tag: tag}, true)
}

// Finished records a request that received its last token (from Hooks.OnTokens with done).
func (p *Replica) Finished(rec *sim.Record) {
	r := p.r
	r.live--
	r.record(rec)
	c := r.col
	c.completed++
	c.inputTokens += int64(rec.Spec.PromptTokens)
	c.outputTokens += int64(rec.Tokens)
	p.last = r.eng.Now()
}

// Sample takes the KV sample due at the engine's time (the timer's).
func (p *Replica) Sample() { p.r.sample(p.r.eng) }

// Done closes the measurement when the run is over.
func (p *Replica) Done() {
	p.r.col.durationS = p.last.Seconds()
	p.r.finishStats()
	if w := p.r.col.watch; w != nil && (w.accepted < 2 || w.last <= w.first) {
		p.r.col.watch = nil
	}
}

// Summarise is the Metrics of replicas measured for a workload spec with a seed, replicas being
// the count reported; with one replica, those of Run on the same requests.
func Summarise(s *Spec, seed uint64, reps []*Replica, replicas int) *Metrics {
	parts := make([]part, len(reps))
	for i, p := range reps {
		parts[i] = part{p.r.col, 1}
	}
	return summarise(s, seed, parts, replicas)
}

// SampleInterval is the KV sampling interval of a run of s.
func (s *Spec) SampleInterval() vtime.Duration { return s.sampleInterval() }
