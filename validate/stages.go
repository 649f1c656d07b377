package validate

import (
	"fmt"
	summary "github.com/servesim/servesim/internal/stats"
	"math"
	"sort"

	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// Constant-rate stages (inference-perf's "constant" load type): requests sent evenly spaced,
// 1/rate apart, for each stage in turn; stage k+1's first request is sent 1/rate_k after stage
// k's last, so the server carries stage k's backlog into stage k+1. The stages of an experiment
// run as one simulation on one engine (with the API server's per-request time), and each
// request counts in the stage it was sent in, as inference-perf attributes it.

// stageRequest is one request of a stage run.
type stageRequest struct {
	at     vtime.Time
	stage  int
	rec    *sim.Record
	prefix uint64
}

// stageStats is what one stage measured, client side.
type stageStats struct {
	sent, completed         int
	firstSend, lastEnd      vtime.Time
	ttftMS, e2eMS, tpotMS   []float64 // per completed request, sorted
	earlyTTFTMS, lateTTFTMS float64   // medians of the first and last tenth of the stage's sends
	stageS                  float64   // the stage's send span, requests / rate
	generated               int
}

// stageSpec is the n-th request (from 0) of a stage run: lengths = input, output, shared prefix.
// Without a prompt pool (perGroup 0) every prompt is new beyond its group's prefix, the group
// being n mod groups; with one, request n sends prompt p = n mod (groups x perGroup), whose group
// is p / perGroup, so equal prompts share their whole content (and the prefix cache serves it).
func stageSpec(n int, lengths [3]int, groups, perGroup int) sim.RequestSpec {
	const promptBase, prefixBase = 1 << 62, 1 << 61
	in, out, prefix := lengths[0], lengths[1], lengths[2]
	spec := sim.RequestSpec{PromptTokens: in, MaxTokens: out, PromptID: promptBase | uint64(n+1), Tag: n}
	group := n % max(groups, 1)
	if perGroup > 0 {
		p := n % (max(groups, 1) * perGroup)
		spec.PromptID = promptBase | uint64(p+1)
		group = p / perGroup
	}
	if prefix > 0 {
		spec.PrefixID = prefixBase | uint64(group+1)
		spec.PrefixTokens = prefix
	}
	return spec
}

// runStages simulates the stages on srv. lengths = input, output, shared prefix; groups is the
// number of distinct shared prefixes (request i uses i mod groups). With perGroup > 0 the client
// sends a fixed pool of groups x perGroup prompts in turn, group by group (inference-perf's
// shared_prefix data: request i sends prompt p = i mod (groups x perGroup), of group p / perGroup),
// so a prompt repeats with its whole content; else every request's prompt beyond the prefix is new.
func runStages(srv *sim.Server, stages []Stage, lengths [3]int, groups, perGroup int, seed uint64) ([]stageStats, error) {
	in, out := lengths[0], lengths[1]
	if in+out > srv.Deployment.Engine.MaxModelLen {
		return nil, fmt.Errorf("%d input + %d output tokens exceed max_model_len %d", in, out, srv.Deployment.Engine.MaxModelLen)
	}
	total := 0
	for _, s := range stages {
		if s.Requests < 0 || total+s.Requests > workload.MaxRequests {
			return nil, fmt.Errorf("the stages send more than %d requests, the most servesim simulates per run", workload.MaxRequests)
		}
		total += s.Requests
	}
	reqs := make([]stageRequest, 0, total)
	var t float64 // seconds
	for k, s := range stages {
		gap := 1 / s.RatePerS
		for i := 0; i < s.Requests; i++ {
			reqs = append(reqs, stageRequest{at: vtime.Time(vtime.FromSeconds(t)), stage: k})
			t += gap
		}
	}
	e := srv.NewEngine(seed)
	next := 0
	var arrive func(*sim.Engine)
	arrive = func(e *sim.Engine) {
		for next < len(reqs) && reqs[next].at <= e.Now() {
			reqs[next].rec = e.Submit(stageSpec(next, lengths, groups, perGroup))
			next++
		}
		if next < len(reqs) {
			e.At(reqs[next].at, arrive)
		}
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("no request")
	}
	e.At(reqs[0].at, arrive)
	if err := e.RunUntilIdle(); err != nil {
		return nil, err
	}
	st := make([]stageStats, len(stages))
	for k := range st {
		st[k].firstSend = -1
		st[k].stageS = float64(stages[k].Requests) / stages[k].RatePerS
	}
	perStage := make([][]float64, len(stages)) // TTFT in send order
	for i := range reqs {
		q := &reqs[i]
		s := &st[q.stage]
		s.sent++
		if s.firstSend < 0 {
			s.firstSend = q.rec.Send
		}
		ttft := math.NaN()
		if q.rec.FirstToken >= 0 {
			ttft = q.rec.FirstToken.Sub(q.rec.Send).Seconds() * 1e3
		}
		perStage[q.stage] = append(perStage[q.stage], ttft)
		if !q.rec.Finished {
			continue
		}
		s.completed++
		s.generated += q.rec.Tokens
		s.lastEnd = max(s.lastEnd, q.rec.End)
		s.ttftMS = append(s.ttftMS, ttft)
		s.e2eMS = append(s.e2eMS, q.rec.End.Sub(q.rec.Send).Seconds()*1e3)
		if q.rec.Tokens >= 2 {
			s.tpotMS = append(s.tpotMS, q.rec.LastToken.Sub(q.rec.FirstToken).Seconds()*1e3/float64(q.rec.Tokens-1))
		}
	}
	for k := range st {
		s := &st[k]
		sort.Float64s(s.ttftMS)
		sort.Float64s(s.e2eMS)
		sort.Float64s(s.tpotMS)
		v := perStage[k]
		n := max(len(v)/10, 1)
		s.earlyTTFTMS = summary.Median(v[:n])
		s.lateTTFTMS = summary.Median(v[len(v)-n:])
	}
	return st, nil
}

// overloadGrowth is the rule of a predicted overloaded stage: the median TTFT of the requests
// sent in the stage's last tenth exceeds that of its first tenth by more than this fraction of the
// stage's length (the queue grew through the stage: the arrival rate is above the served rate).
const overloadGrowth = 0.05

// prediction turns a stage's statistics into the row's metrics. counted is the output length the
// client counted per request (throughput and the derived TPOT use it, as the row does).
func (s *stageStats) prediction(counted float64, derivedTPOT bool) *Prediction {
	p := &Prediction{Completed: s.completed, Requests: s.sent}
	span := s.lastEnd.Sub(s.firstSend).Seconds()
	if span > 0 {
		p.OutputTokS = float64(s.completed) * counted / span
		p.DurationS = span
	}
	p.TTFTMeanMS, p.TTFTMedianMS = summary.Mean(s.ttftMS), summary.Quantile(s.ttftMS, 0.5)
	p.TTFTP90MS, p.TTFTP99MS = summary.Quantile(s.ttftMS, 0.9), summary.Quantile(s.ttftMS, 0.99)
	p.E2EMeanMS, p.E2EMedianMS, p.E2EP99MS = summary.Mean(s.e2eMS), summary.Quantile(s.e2eMS, 0.5), summary.Quantile(s.e2eMS, 0.99)
	p.TPOTMeanMS, p.TPOTMedianMS, p.TPOTP99MS = summary.Mean(s.tpotMS), summary.Quantile(s.tpotMS, 0.5), summary.Quantile(s.tpotMS, 0.99)
	if derivedTPOT && counted > 1 {
		p.TPOTMeanMS = (p.E2EMeanMS - p.TTFTMeanMS) / (counted - 1)
		p.TPOTMedianMS, p.TPOTP99MS = math.NaN(), math.NaN()
	}
	over := s.lateTTFTMS-s.earlyTTFTMS > overloadGrowth*s.stageS*1e3
	p.Overloaded = &over
	p.OverloadWhy = fmt.Sprintf("median TTFT %.0f ms in the stage's first tenth, %.0f ms in its last (rule: growth > %.0f%% of the %.0f s stage)",
		s.earlyTTFTMS, s.lateTTFTMS, 100*overloadGrowth, s.stageS)
	return p
}
