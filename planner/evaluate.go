package planner

import (
	"fmt"
	"math"

	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/workload"
)

// Perf is a simulated configuration's performance under the question's workload.
type Perf struct {
	// Status is the workload's status ("ok"; a bench cell's "Valid" or "Requests queued").
	Status       string  `json:"status"`
	OutputTokS   float64 `json:"output_tok_s"`
	TotalTokS    float64 `json:"total_tok_s"`
	RequestsPerS float64 `json:"req_s"`
	// Latencies in ms at the median and at the objectives' quantile (Quantile).
	Quantile float64 `json:"quantile"`
	TTFTp50  float64 `json:"ttft_ms_p50"`
	TTFTq    float64 `json:"ttft_ms_q"`
	TPOTp50  float64 `json:"tpot_ms_p50"`
	TPOTq    float64 `json:"tpot_ms_q"`
	E2Eq     float64 `json:"e2e_ms_q,omitempty"`
	// UserTokS is the per-user decode rate at the median (1000 / TPOT p50); UserTokSq at the
	// quantile (1000 / TPOT at the quantile: that share of users get at least this).
	UserTokS    float64 `json:"user_tok_s"`
	UserTokSq   float64 `json:"user_tok_s_q"`
	Preemptions int     `json:"preemptions"`
	KVPeak      float64 `json:"kv_usage_peak"`
	// Goodput is the fraction of requests meeting every objective.
	Goodput float64          `json:"goodput_fraction"`
	Checks  []workload.Check `json:"checks,omitempty"`
	Met     bool             `json:"met"`
	// Overload is set when the arrivals outran the row (an open loop or trace): it names the
	// limit that binds (arrival rate above capacity, max-num-seqs, KV cache).
	Overload *workload.Overload `json:"overload,omitempty"`
}

// MissText says what the row misses, each objective as its value against its limit, and which
// limit binds when the arrivals outran it ("" when it meets every objective).
func (p *Perf) MissText() string {
	if p == nil || p.Met {
		return ""
	}
	if s := workload.MissText(p.Checks, p.Overload); s != "" {
		return s
	}
	return p.Status
}

// Queueing says that a row serves fewer of the question's simultaneous users at once than there
// are: the rest wait for a slot (max-num-seqs) or for KV-cache room, so their TTFT includes
// other users' whole answers. Users and Slots count per server (a replica, or a wide-EP engine
// over all its ranks).
type Queueing struct {
	Users int `json:"users"`
	Slots int `json:"slots"`
	// Binds is the limit: "max-num-seqs" or "KV cache".
	Binds string `json:"binds"`
}

// Text is the queueing in words: "16 of 32 users at once (max-num-seqs 16)".
func (g *Queueing) Text() string {
	return fmt.Sprintf("%d of %d users at once (%s)", g.Slots, g.Users, g.Binds)
}

// ConfidentP is the probability of meeting the objectives above which a row "meets" them: its
// objectives' limits lie outside the 80 % intervals of its predictions (on the good side). A row
// whose prediction meets them with a lower probability is "marginal".
const ConfidentP = 0.9

// Row statuses, in ranking order.
const (
	StatusOK       = "ok"       // meets every objective, with probability >= ConfidentP
	StatusMarginal = "marginal" // the prediction meets them, inside its uncertainty
	StatusMissed   = "missed"   // the prediction misses one
	StatusQueues   = "queues"   // serves fewer simultaneous users than the question has
	StatusPruned   = "pruned"
)

// statusRank orders the statuses as the ranking does.
func statusRank(s string) int {
	switch s {
	case StatusOK:
		return 0
	case StatusMarginal:
		return 1
	case StatusMissed:
		return 2
	case StatusQueues:
		return 3
	}
	return 4
}

// outcome is what evaluating one simulation class gives.
type outcome struct {
	stage, reason string
	note          string
	mml           int
	source, from  string
	kvTokens      int
	perf          *Perf
	intervals     []param.NamedInterval
	// screened: perf is from the workload's first requests only (the search's screen).
	screened bool
	prov     *param.Summary
	// queues: the row cannot hold every simultaneous user; pMeet the probability of meeting
	// every objective.
	queues *Queueing
	pMeet  float64
}

// status is the row status of a simulated outcome ("pruned" without a simulation).
func (o *outcome) status() string {
	switch {
	case o == nil || o.perf == nil:
		return StatusPruned
	case o.queues != nil:
		return StatusQueues
	case !o.perf.Met:
		return StatusMissed
	case o.pMeet < ConfidentP:
		return StatusMarginal
	}
	return StatusOK
}

// server builds one replica's server for a candidate. When one max_model_len request does not fit
// the KV cache it tries the workload's own need (rounded up to 1,024 tokens) and says so. It
// returns the server, the max_model_len used, a note, the parameter source and description.
func (q *Question) server(l *layout, cfg Config) (srv *sim.Server, mml int, note, src, from string, err error) {
	d, err := q.deployment(l, &cfg)
	if err != nil {
		return nil, 0, "", "", "", err
	}
	p, src, from, err := q.layoutParams(l, d)
	if err != nil {
		return nil, 0, "", src, from, err
	}
	srv, err = sim.NewServer(d, p)
	if err != nil {
		need := q.needModelLen()
		if need > 0 && need < cfg.MaxModelLen {
			cfg2 := cfg
			cfg2.MaxModelLen = need
			if d2, err2 := q.deployment(l, &cfg2); err2 == nil {
				if srv2, err2 := sim.NewServer(d2, p); err2 == nil {
					srv2.StepByStep = q.StepByStep
					return srv2, need, fmt.Sprintf("max_model_len lowered to %d: one %d-token request does not fit the KV cache", need, cfg.MaxModelLen), src, from, nil
				}
			}
		}
		return nil, 0, "", src, from, err
	}
	srv.StepByStep = q.StepByStep
	return srv, cfg.MaxModelLen, "", src, from, nil
}

// evaluate builds the candidate's server and simulates the workload on it.
func (q *Question) evaluate(c *candidate) outcome { return q.evaluateSpec(c, q.Workload) }

// evaluateSpec builds the candidate's server and simulates spec (the workload or its screen).
func (q *Question) evaluateSpec(c *candidate, spec *workload.Spec) outcome {
	l := c.lay
	var o outcome
	srv, mml, note, src, from, err := q.server(l, c.config)
	o.mml, o.note, o.source, o.from = mml, note, src, from
	if err != nil {
		o.mml = c.config.MaxModelLen
		o.stage, o.reason = StageMemory, err.Error()
		return o
	}
	o.kvTokens = srv.Layout.KVCacheSizeTokens
	if b := benchCell(spec); b != nil {
		proto := b.Protocol()
		tokens, err := proto.FitContext(b.Context, o.mml)
		reps := c.config.Replicas()
		conc := (b.Concurrency + reps - 1) / reps
		if err != nil {
			o.stage, o.reason = StageMemory, fmt.Sprintf("context %s does not fit max_model_len %d with %d output tokens", b.Context, o.mml, proto.MaxOutput)
			return o
		}
		if proto.OverCapacity(conc, tokens, o.kvTokens) {
			o.stage = StageCapacity
			o.reason = fmt.Sprintf("over capacity: %d streams per replica x (%d + %d) tokens = %d > kv_cache_size_tokens %d",
				conc, tokens, proto.MaxOutput, int64(conc)*int64(tokens+proto.MaxOutput), o.kvTokens)
			return o
		}
	}
	m, err := workload.Run(srv, spec, workload.Options{Seed: q.Seed, Replicas: c.config.Replicas()})
	if err != nil {
		o.stage, o.reason = StageSimulation, err.Error()
		return o
	}
	o.perf = perfOf(m)
	o.queues = q.queueing(c, srv, o.mml)
	sigma := func(param.Metric) float64 { return 0 }
	if q.Provenance != nil {
		s := q.layoutProvenance(l, srv.Deployment)
		o.prov = &s
		o.intervals = provenanceIntervals(&s, o.perf)
		sigma = func(m param.Metric) float64 { return param.DefaultWidths().Sigma(&s, m) }
	} else if q.Uncertainty != nil {
		sigma = func(m param.Metric) float64 { return param.DefaultWidths()[param.Class(src)][m] }
		for _, x := range []struct {
			n string
			v float64
		}{{"output_tok_s", o.perf.OutputTokS}, {"ttft_ms_q", o.perf.TTFTq}, {"tpot_ms_q", o.perf.TPOTq}, {"user_tok_s", o.perf.UserTokS}} {
			if lo, hi, ok := q.Uncertainty.Interval(sourceOf(src), x.n, x.v); ok {
				o.intervals = append(o.intervals, hookInterval(x.n, x.v, lo, hi))
			}
		}
	}
	o.pMeet = pMeet(o.perf.Checks, sigma)
	return o
}

// pMeet is the probability that every objective is met, from each check's prediction and the
// log-scale width sigma of its metric's error (param.WidthTable.Sigma: the central 80 % interval
// is the prediction x/ exp(1.28 sigma)): for a latency limit L and prediction v, P(measured <= L)
// = Phi(ln(L / v) / sigma); for a per-user rate, Phi(ln(v / L) / sigma). The objectives' errors
// are taken as independent (their product): the parameters they share make them positively
// correlated, for which the product is a lower bound. With no width (no interval model) it is 1
// or 0, the prediction's own verdict. No objective: 1.
func pMeet(checks []workload.Check, sigma func(param.Metric) float64) float64 {
	p := 1.0
	for _, c := range checks {
		if c.Undefined {
			continue
		}
		m := param.MetricTPOT
		switch c.Name {
		case "ttft_ms":
			m = param.MetricTTFT
		case "e2e_ms":
			m = param.MetricE2E
		}
		var margin float64 // ln of the margin, positive when met
		switch {
		case c.Value <= 0 || c.Limit <= 0:
			margin = math.Inf(1)
			if !c.Met {
				margin = math.Inf(-1)
			}
		case c.Name == "user_tok_s":
			margin = math.Log(c.Value / c.Limit)
		default:
			margin = math.Log(c.Limit / c.Value)
		}
		sg := sigma(m)
		var pi float64
		switch {
		case sg <= 0 || math.IsInf(margin, 0):
			pi = 0
			if margin >= 0 {
				pi = 1
			}
		default:
			pi = 0.5 * math.Erfc(-margin/(sg*math.Sqrt2))
		}
		p *= pi
	}
	return p
}

// queueing says whether the row makes some of the question's simultaneous users wait (nil when
// it holds them all, or the workload has no fixed number of users: an open loop or a trace,
// whose overload perfOf reports). Users per server are the workload's concurrency dealt over the
// replicas; the slots are max-num-seqs (per data-parallel rank of a wide-EP engine, as vLLM's
// is) and the requests the KV cache holds at once at the workload's mean request length (a
// shared prefix counted once per group).
func (q *Question) queueing(c *candidate, srv *sim.Server, mml int) *Queueing {
	users := q.Workload.MaxConcurrency()
	if users <= 0 {
		return nil
	}
	reps := c.config.Replicas()
	users = (users + reps - 1) / reps
	if n := q.Workload.Closed.Requests; q.Workload.Kind == workload.KindClosed && n > 0 {
		users = min(users, (n+reps-1)/reps)
	}
	ranks := srv.Deployment.LockstepRanks()
	slots := c.config.MaxNumSeqs * ranks
	binds := fmt.Sprintf("max-num-seqs %d", c.config.MaxNumSeqs)
	if ranks > 1 {
		binds = fmt.Sprintf("max-num-seqs %d per rank x %d ranks", c.config.MaxNumSeqs, ranks)
	}
	if private, shared := requestTokens(q.Workload, mml); private > 0 {
		kv := srv.Layout.KVCacheSizeTokens
		if n := max(kv-shared, 0) / private; n < slots {
			slots = n
			binds = fmt.Sprintf("KV cache: %s tokens hold %d requests of %d tokens", commas(int64(kv)), n, private+shared)
		}
	}
	if slots >= users {
		return nil
	}
	return &Queueing{Users: users, Slots: slots, Binds: binds}
}

// requestTokens is the KV a workload's request holds at its end, on average: the tokens of its
// own (private) and those of a prefix it shares with others (counted once per group); 0 when the
// workload does not say (not a closed loop of given lengths or a benchmark cell).
func requestTokens(w *workload.Spec, mml int) (private, shared int) {
	switch w.Kind {
	case workload.KindLLMBenchCell:
		p := w.Cell.Protocol()
		t, err := p.FitContext(w.Cell.Context, mml)
		if err != nil {
			return 0, 0
		}
		return t + p.MaxOutput, 0
	case workload.KindClosed:
		l := w.Lengths
		if l.InputTokens <= 0 {
			return 0, 0
		}
		in := l.InputTokens
		switch {
		case l.SamePrompt:
			shared, in = in, 0
		case l.PrefixTokens > 0:
			shared, in = l.PrefixTokens*max(l.PrefixGroups, 1), in-l.PrefixTokens
		}
		return in + l.OutputTokens, shared
	}
	return 0, 0
}

func perfOf(m *workload.Metrics) *Perf {
	q := 0.9
	if m.SLO != nil {
		q = m.SLO.Q()
	}
	p := &Perf{Status: m.Status, OutputTokS: m.OutputTokS, TotalTokS: m.TotalTokS, RequestsPerS: m.RequestsPerS, Quantile: q,
		TTFTp50: m.TTFT.P50, TPOTp50: m.TPOT.P50, UserTokS: m.UserTokS, Preemptions: m.Preemptions, KVPeak: m.KV.Peak, Met: true, Overload: m.Overload}
	// The quantile of each metric: exact from the checks when an objective names it, else the
	// summary quantile nearest at or above it.
	p.TTFTq = distAt(m.TTFT, q)
	p.TPOTq = distAt(m.TPOT, q)
	p.E2Eq = distAt(m.E2E, q)
	if g := m.Goodput; g != nil {
		p.Goodput = g.Fraction
		p.Checks = g.Checks
		p.Met = g.Met
		for _, c := range g.Checks {
			switch c.Name {
			case "ttft_ms":
				p.TTFTq = c.Value
			case "tpot_ms":
				p.TPOTq = c.Value
			case "e2e_ms":
				p.E2Eq = c.Value
			}
		}
	}
	if p.TPOTq > 0 {
		p.UserTokSq = 1000 / p.TPOTq
	}
	if p.Overload != nil {
		// A row that does not keep up with the question's arrivals does not answer it, with or
		// without objectives.
		p.Met = false
	}
	return p
}

// distAt reads the summary quantile nearest at or above q (p50, p90, p99, or the max).
func distAt(d workload.Dist, q float64) float64 {
	if d.N == 0 {
		return 0
	}
	switch {
	case q <= 0.5:
		return d.P50
	case q <= 0.9:
		return d.P90
	case q <= 0.99:
		return d.P99
	}
	return d.Max
}

func headroomMin(p *Perf) float64 {
	h := math.Inf(1)
	for _, c := range p.Checks {
		if !c.Undefined {
			h = math.Min(h, c.Headroom)
		}
	}
	if math.IsInf(h, 1) {
		return 0
	}
	return h
}
