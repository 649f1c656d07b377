package workload

import (
	"math"
	"sort"

	"github.com/servesim/servesim/internal/stats"

	"github.com/servesim/servesim/vtime"
)

// Dist summarises a latency over requests (milliseconds). Quantiles interpolate linearly between
// order statistics (numpy's default), so P50 of an even count is the mean of the middle two, as
// the benchmark's median is. Up to 131,072 values they are exact; past that they come from a
// log-linear histogram and RelErr bounds their relative error (0.049 %); N, Mean and Max stay
// exact.
type Dist struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
	RelErr float64 `json:"rel_err,omitempty"`
	// Curve is the distribution's quantile at q = i / CurvePoints for i = 0..CurvePoints (the
	// minimum to the maximum), for figures (a CDF); not in the JSON.
	Curve []float64 `json:"-"`
}

// CurvePoints is the number of steps of Dist.Curve.
const CurvePoints = 100

// KVSample is one sample of the engine's state.
type KVSample struct {
	TimeS   float64 `json:"t_s"`
	Usage   float64 `json:"kv_usage"` // fraction of KV blocks referenced by requests
	Running int     `json:"running"`
	Waiting int     `json:"waiting"`
}

// KVSeries is the KV-cache utilisation over time, sampled every IntervalS simulated seconds. Long
// runs keep at most maxSeries samples: the interval doubles and every other sample is dropped.
// Mean and Peak are over every sample taken, before any thinning.
type KVSeries struct {
	IntervalS float64    `json:"interval_s"`
	Mean      float64    `json:"mean"`
	Peak      float64    `json:"peak"`
	Samples   []KVSample `json:"samples"`
}

// Check is one SLO objective against the run.
type Check struct {
	Name     string  `json:"name"` // ttft_ms, tpot_ms, e2e_ms, user_tok_s
	Quantile float64 `json:"quantile"`
	Value    float64 `json:"value"`
	Limit    float64 `json:"limit"`
	// Headroom is the margin as a fraction of the limit: (limit - value) / limit for latencies,
	// (value - limit) / limit for per-user tok/s. Negative: the objective is missed.
	Headroom float64 `json:"headroom"`
	Met      bool    `json:"met"`
	// Undefined: no request defines the metric (TPOT and per-user tok/s need an output of more
	// than one token, as in vLLM's benchmark); the objective is shown as n/a and counts as met,
	// as goodput counts every such request as meeting it.
	Undefined bool `json:"undefined,omitempty"`
}

// Goodput is the rate of requests that meet every objective individually.
type Goodput struct {
	Requests     int     `json:"requests"`
	Fraction     float64 `json:"fraction"`
	RequestsPerS float64 `json:"req_s"`
	OutputTokS   float64 `json:"output_tok_s"`
	Met          bool    `json:"met"` // every Check met
	Checks       []Check `json:"checks"`
}

// Metrics is what a workload run measured, all from simulated time.
type Metrics struct {
	Workload string `json:"workload"`
	Kind     Kind   `json:"kind"`
	Seed     uint64 `json:"seed"`
	// Status is "ok", or the benchmark's cell status for bench runs ("Valid", "Requests queued",
	// "Over capacity").
	Status   string `json:"status"`
	Replicas int    `json:"replicas"`

	Requests  int `json:"requests"`  // submitted (bench: every stream request, restarts included)
	Completed int `json:"completed"` // finished (bench: inside the window)
	Rejected  int `json:"rejected"`  // longer than max_model_len, refused as vLLM's API server does
	Cancelled int `json:"cancelled"` // cut at the end of a bench window

	// DurationS is the measured span: from the start to the last completion (bench: the window).
	DurationS    float64 `json:"duration_s"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	OutputTokS   float64 `json:"output_tok_s"`
	TotalTokS    float64 `json:"total_tok_s"` // input + output of completed requests, plus bench window output
	RequestsPerS float64 `json:"req_s"`

	TTFT  Dist `json:"ttft_ms"`  // send to first token
	TPOT  Dist `json:"tpot_ms"`  // (last - first token) / (tokens - 1), per request (the benchmark's time between tokens)
	ITL   Dist `json:"itl_ms"`   // gaps between streamed deliveries (a delivery may carry several tokens)
	E2E   Dist `json:"e2e_ms"`   // send to last token, finished requests
	Queue Dist `json:"queue_ms"` // arrival at the engine to first admission (vLLM's queue time)
	// UserTokS is the per-request decode rate 1000 / TPOT at the median (the benchmark's per
	// request tok/s).
	UserTokS float64 `json:"user_tok_s"`

	Preemptions       int `json:"preemptions"`
	PreemptedRequests int `json:"preempted_requests"`

	KV      KVSeries `json:"kv_cache"`
	SLO     *SLO     `json:"slo,omitempty"`
	Goodput *Goodput `json:"goodput,omitempty"`
	// Overload is set when an open-loop or trace run's arrivals outran the server (Status is
	// then StatusOverloaded); it names the limit that binds.
	Overload *Overload `json:"overload,omitempty"`

	Steps int64 `json:"engine_steps"`
	// VerifierSteps counts, summed over the measured requests (bench: inside the window), the
	// steps that delivered tokens: OutputTokens / VerifierSteps is the mean acceptance length
	// (1 + accepted drafts per verify step, as vLLM reports it) and VerifierSteps / DurationS the
	// verifier step rate. Not written (JSON "-"): the transcripts keep their fields.
	VerifierSteps int64   `json:"-"`
	SimTimeS      float64 `json:"sim_time_s"`
}

// reqSample is one request's latencies (ms; NaN when not defined).
type reqSample struct {
	ttft, tpot, e2e, queue float64
	output                 int
}

// collector accumulates one replica's raw observations. Per-request latencies go into bounded
// distributions, pendLen requests at a time (hold); whether a request meets the objectives is
// decided as it comes.
type collector struct {
	// What every request changes comes first, in a few cache lines: a fleet's replicas take turns
	// in the caches, and a replica's turn reads these from beyond them.
	requests        int // recorded requests
	slo             *SLO
	good            int   // recorded requests meeting every objective
	goodOut, allOut int64 // their output tokens, and every recorded request's
	inputTokens     int64 // completed requests
	outputTokens    int64 // completed requests (bench: window tokens)
	submitted       int
	completed       int
	preemptions     int
	preempted       int
	watch           *overloadWatch // open loop: the queue over the arrivals (overload.go)
	// The latest finished requests' latencies, up to pendLen requests, wait in pend (by metric,
	// in the order of sets, NaNs left out; npend of each) and go into the distributions together:
	// the distributions' counters, out of the caches at a replica's turn, are then fetched side
	// by side instead of one at a time (LogHist.AddEach). Inter-token gaps wait likewise for the
	// ITL histogram: gaps[:ngaps], n tokens each.
	npend                  [4]int
	held                   int
	ngaps                  int
	ttft, tpot, e2e, queue sampleSet
	itl                    stats.IntHist
	verifierSteps          int64 // their verifier steps (bench: the window's)
	rejected               int
	cancelled              int
	durationS              float64
	kv                     kvSampler
	steps                  int64
	simEnd                 vtime.Time
	status                 string
	windowInputTokens      int64
	pend                   [4][pendLen]float64
	gaps                   [pendLen]itlGap
}

// itlGap is n tokens delivered gap nanoseconds after their previous ones.
type itlGap struct {
	gap int64
	n   uint64
}

// holdGap records n inter-token gaps of gap nanoseconds, adding them with the gaps held before
// once pendLen are held.
func (c *collector) holdGap(gap int64, n uint64) {
	c.gaps[c.ngaps] = itlGap{gap, n}
	if c.ngaps++; c.ngaps == pendLen {
		c.flushGaps()
	}
}

func (c *collector) flushGaps() {
	for _, g := range c.gaps[:c.ngaps] {
		c.itl.Add(g.gap, g.n)
	}
	c.ngaps = 0
}

// pendLen is how many finished requests' latencies a collector holds before adding them.
const pendLen = 32

// sets are the latency distributions, in pend's order.
func (c *collector) sets() [4]*sampleSet { return [4]*sampleSet{&c.ttft, &c.tpot, &c.e2e, &c.queue} }

// hold records a finished request's latencies, adding them with the requests held before once
// pendLen are held.
func (c *collector) hold(s *reqSample) {
	for m, v := range [4]float64{s.ttft, s.tpot, s.e2e, s.queue} {
		if !math.IsNaN(v) {
			c.pend[m][c.npend[m]] = v
			c.npend[m]++
		}
	}
	if c.held++; c.held == pendLen {
		c.flush()
	}
}

// flush adds the latencies and gaps held to the distributions; summarise calls it first.
func (c *collector) flush() {
	c.flushGaps()
	for m, set := range c.sets() {
		set.addEach(c.pend[m][:c.npend[m]])
		c.npend[m] = 0
	}
	c.held = 0
}

// part is a replica's collector and how many replicas behaved identically.
type part struct {
	c    *collector
	mult int
}

// summarise turns replica collectors into Metrics.
func summarise(s *Spec, seed uint64, parts []part, replicas int) *Metrics {
	m := &Metrics{Workload: s.Name, Kind: s.Kind, Seed: seed, Replicas: replicas, Status: "ok"}
	var ttftS, tpotS, e2eS, queueS sampleSet
	var requests, good int
	var goodOut, allOut int64
	itl := newITLHist()
	var kvMean, kvW float64
	var series *kvSampler
	for _, p := range parts {
		c := p.c
		c.flush()
		k := p.mult
		m.Requests += k * c.submitted
		m.Completed += k * c.completed
		m.Rejected += k * c.rejected
		m.Cancelled += k * c.cancelled
		m.InputTokens += int64(k) * (c.inputTokens + c.windowInputTokens)
		m.OutputTokens += int64(k) * c.outputTokens
		m.VerifierSteps += int64(k) * c.verifierSteps
		m.Preemptions += k * c.preemptions
		m.PreemptedRequests += k * c.preempted
		m.DurationS = math.Max(m.DurationS, c.durationS)
		m.Steps += int64(k) * c.steps
		m.SimTimeS = math.Max(m.SimTimeS, c.simEnd.Seconds())
		ttftS.merge(&c.ttft, k)
		tpotS.merge(&c.tpot, k)
		e2eS.merge(&c.e2e, k)
		queueS.merge(&c.queue, k)
		requests += k * c.requests
		good += k * c.good
		goodOut += int64(k) * c.goodOut
		allOut += int64(k) * c.allOut
		itl.Merge(&c.itl, uint64(k))
		if c.kv.n > 0 {
			kvMean += float64(k) * c.kv.sum / float64(c.kv.n)
			kvW += float64(k)
			m.KV.Peak = math.Max(m.KV.Peak, c.kv.peak)
		}
		if series == nil || len(c.kv.samples) > len(series.samples) {
			series = &c.kv
		}
		if c.status != "" {
			m.Status = c.status
		}
	}
	if kvW > 0 {
		m.KV.Mean = kvMean / kvW
	}
	for _, p := range parts {
		if o := p.c.watch.overload(p.c.completed, p.c.durationS, p.c.preemptions); o != nil && m.Overload == nil {
			m.Overload = o
			m.Status = StatusOverloaded
		}
	}
	if series != nil {
		m.KV.IntervalS = series.interval.Seconds()
		m.KV.Samples = mergeSeries(parts)
	}
	if m.DurationS > 0 {
		m.OutputTokS = float64(m.OutputTokens) / m.DurationS
		m.TotalTokS = float64(m.InputTokens+m.OutputTokens) / m.DurationS
		m.RequestsPerS = float64(m.Completed) / m.DurationS
	}
	ttft, tpot, e2e, queue := ttftS.summary(), tpotS.summary(), e2eS.summary(), queueS.summary()
	m.TTFT, m.TPOT, m.E2E, m.Queue = ttft.dist(), tpot.dist(), e2e.dist(), queue.dist()
	m.ITL = intDist(&itl)
	if m.TPOT.N > 0 && m.TPOT.P50 > 0 {
		m.UserTokS = 1000 / m.TPOT.P50
	}
	if s.SLO.Any() {
		slo := s.SLO
		m.SLO = &slo
		q := slo.Q()
		g := &Goodput{Met: true}
		add := func(name string, d *summary, limit float64, rate bool) {
			if limit <= 0 {
				return
			}
			c := Check{Name: name, Quantile: q, Limit: limit}
			if d.n() == 0 && (name == "tpot_ms" || name == "user_tok_s") && requests > 0 {
				// Every request had a one-token output: TPOT is not defined, not missed.
				c.Undefined, c.Met = true, true
				g.Checks = append(g.Checks, c)
				return
			}
			if d.n() == 0 {
				c.Value = math.Inf(1)
				if rate {
					c.Value = 0
				}
			} else {
				c.Value = d.quantile(q)
			}
			if rate {
				if c.Value > 0 && !math.IsInf(c.Value, 0) {
					c.Value = 1000 / c.Value
				} else {
					c.Value = 0
				}
				c.Headroom = (c.Value - limit) / limit
			} else {
				c.Headroom = (limit - c.Value) / limit
			}
			if math.IsInf(c.Value, 0) {
				c.Value, c.Headroom = 0, -1
			}
			c.Met = c.Headroom >= 0
			g.Met = g.Met && c.Met
			g.Checks = append(g.Checks, c)
		}
		add("ttft_ms", ttft, slo.TTFTms, false)
		add("tpot_ms", tpot, slo.TPOTms, false)
		add("e2e_ms", e2e, slo.E2Ems, false)
		add("user_tok_s", tpot, slo.UserTokS, true)
		// Goodput scales the measured rates by the share of requests (and of their output
		// tokens) that meet every limit; for closed, open and trace runs this is exactly the
		// good requests and their tokens per second of the measured span.
		g.Requests = good
		if requests > 0 {
			g.Fraction = float64(g.Requests) / float64(requests)
			g.RequestsPerS = m.RequestsPerS * g.Fraction
		}
		if allOut > 0 {
			g.OutputTokS = m.OutputTokS * float64(goodOut) / float64(allOut)
		}
		if m.Overload != nil {
			// The objectives hold for the offered load or not at all: a run whose arrivals
			// outran the server misses them, whatever the latencies of the requests it served.
			g.Met = false
		}
		m.Goodput = g
	}
	return m
}

// meets reports whether one request meets every objective. A request that never got a token
// misses; a one-token request has no TPOT and meets the TPOT and rate objectives.
func meets(r *reqSample, s *SLO) bool {
	if math.IsNaN(r.ttft) {
		return false
	}
	if s.TTFTms > 0 && r.ttft > s.TTFTms {
		return false
	}
	if !math.IsNaN(r.tpot) {
		if s.TPOTms > 0 && r.tpot > s.TPOTms {
			return false
		}
		if s.UserTokS > 0 && (r.tpot <= 0 || 1000/r.tpot < s.UserTokS) {
			return false
		}
	}
	if s.E2Ems > 0 && (math.IsNaN(r.e2e) || r.e2e > s.E2Ems) {
		return false
	}
	return true
}

// DistOf is the distribution of samples (any order; NaNs left out), as a run's metrics are
// summarised: mean, p50, p90, p99, max and the quantile curve.
func DistOf(samples []float64) Dist {
	s := make([]float64, 0, len(samples))
	for _, v := range samples {
		if !math.IsNaN(v) {
			s = append(s, v)
		}
	}
	sort.Float64s(s)
	return dist(s)
}

func dist(sorted []float64) Dist {
	d := Dist{N: len(sorted)}
	if len(sorted) == 0 {
		return d
	}
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	d.Mean = sum / float64(len(sorted))
	d.P50 = stats.Quantile(sorted, 0.5)
	d.P90 = stats.Quantile(sorted, 0.9)
	d.P99 = stats.Quantile(sorted, 0.99)
	d.Max = sorted[len(sorted)-1]
	d.Curve = make([]float64, CurvePoints+1)
	for i := range d.Curve {
		d.Curve[i] = stats.Quantile(sorted, float64(i)/CurvePoints)
	}
	return d
}

// itlSub is log2 of the inter-token gaps' sub-buckets per power of two (nanoseconds): 128, so a
// bucket is at most 1/128 = 0.8 % wide. Quantiles are bucket midpoints; the mean and max are
// exact. It keeps millions of inter-token gaps in a few kilobytes.
const itlSub = 7

func newITLHist() stats.IntHist { return stats.IntHist{Bins: stats.IntBins{Sub: itlSub}} }

// intDist is the distribution of a histogram of nanoseconds, in milliseconds.
func intDist(h *stats.IntHist) Dist {
	d := Dist{N: int(h.N())}
	if h.N() == 0 {
		return d
	}
	d.Mean = float64(h.Sum()) / float64(h.N()) / 1e6
	d.P50 = h.Quantile(0.5) / 1e6
	d.P90 = h.Quantile(0.9) / 1e6
	d.P99 = h.Quantile(0.99) / 1e6
	d.Max = float64(h.Max()) / 1e6
	d.Curve = make([]float64, CurvePoints+1)
	for i := range d.Curve {
		d.Curve[i] = h.Quantile(float64(i)/CurvePoints) / 1e6
	}
	return d
}

// maxSeries bounds the KV samples kept per run.
const maxSeries = 1000

// kvSampler keeps the KV usage series of one replica.
type kvSampler struct {
	interval vtime.Duration
	samples  []KVSample
	n        int
	sum      float64
	peak     float64
	stride   int // keep every stride-th sample
	tick     int
}

func (k *kvSampler) add(t vtime.Time, usage float64, running, waiting int) {
	k.n++
	k.sum += usage
	k.peak = math.Max(k.peak, usage)
	if k.stride == 0 {
		k.stride = 1
	}
	k.tick++
	if (k.tick-1)%k.stride != 0 {
		return
	}
	k.samples = append(k.samples, KVSample{TimeS: t.Seconds(), Usage: usage, Running: running, Waiting: waiting})
	if len(k.samples) >= 2*maxSeries {
		j := 0
		for i := 0; i < len(k.samples); i += 2 {
			k.samples[j] = k.samples[i]
			j++
		}
		k.samples = k.samples[:j]
		k.stride *= 2
	}
}

// mergeSeries averages the replicas' series sample by sample (weighted by multiplicity) when
// they share a grid; otherwise it returns the longest.
func mergeSeries(parts []part) []KVSample {
	if len(parts) == 1 {
		return parts[0].c.kv.samples
	}
	longest := 0
	stride := parts[0].c.kv.stride
	for i, p := range parts {
		if len(p.c.kv.samples) > len(parts[longest].c.kv.samples) {
			longest = i
		}
		if p.c.kv.stride != stride {
			return parts[longest].c.kv.samples
		}
	}
	n := len(parts[longest].c.kv.samples)
	out := make([]KVSample, n)
	w := make([]float64, n)
	for _, p := range parts {
		k := float64(p.mult)
		for i, s := range p.c.kv.samples {
			out[i].TimeS = s.TimeS
			out[i].Usage += k * s.Usage
			out[i].Running += p.mult * s.Running
			out[i].Waiting += p.mult * s.Waiting
			w[i] += k
		}
	}
	for i := range out {
		if w[i] > 0 {
			out[i].Usage /= w[i]
		}
	}
	return out
}
