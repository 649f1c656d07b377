package fleet

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// openSpec is an open loop at rate req/s for n requests (process poisson, or gamma with cv).
func openSpec(t testing.TB, rate float64, n int, cv float64, in, out int) *workload.Spec {
	t.Helper()
	proc := "process = \"poisson\""
	if cv > 0 {
		proc = fmt.Sprintf("process = \"gamma\"\ncv = %g", cv)
	}
	s, err := workload.Parse([]byte(fmt.Sprintf("name = \"open\"\nkind = \"open\"\nseed = 1\n[open]\n%s\nrate = %g\nrequests = %d\n[lengths]\ninput_tokens = %d\noutput_tokens = %d\nrange_ratio = 0.5\n",
		proc, rate, n, in, out)), "open.toml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runFleet(t testing.TB, srv *sim.Server, n int, p Policy, spec *workload.Spec, seed uint64) *Result {
	t.Helper()
	st, err := spec.Stream(seed)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(Config{Groups: []Group{{Server: srv, Count: n}}, Policy: p, Seed: seed, Spec: spec}, st)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// figures are the per-replica numbers compared: throughput and latency percentiles.
func figures(m *workload.Metrics, replicas int) map[string]float64 {
	return map[string]float64{
		"output tok/s per replica": m.OutputTokS / float64(replicas),
		"TTFT p50":                 m.TTFT.P50, "TTFT p90": m.TTFT.P90, "TTFT p99": m.TTFT.P99,
		"TPOT p50": m.TPOT.P50, "TPOT p90": m.TPOT.P90, "TPOT p99": m.TPOT.P99,
	}
}

func worst(a, b map[string]float64) (string, float64) {
	var name string
	var w float64
	for k, v := range a {
		if d := math.Abs(v/b[k] - 1); d >= w {
			name, w = k, d
		}
	}
	return name, w
}

// TestSplitMatchesOneReplica: N identical replicas behind a router, fed Poisson arrivals at N x r,
// against one replica at r, per replica: output tok/s and TTFT and TPOT p50/p90/p99.
//
//   - Random routing thins a Poisson stream into N Poisson streams of rate r: each replica sees
//     what one replica at r sees, so the figures agree within 2 % (sampling noise of 80,000
//     requests; measured: within 0.5 %).
//   - Round-robin gives each replica every N-th arrival: gaps that are sums of N exponentials
//     (Erlang-N, coefficient of variation 1/sqrt(N)), smoother than Poisson. Its figures agree
//     within 2 % with one replica fed Erlang-N arrivals at r (a gamma process, cv 0.5 for N = 4),
//     not with one replica fed Poisson arrivals at r: the smoother stream queues less, and its
//     TTFT p99 is lower by more than a quarter (measured: 39 %).
func TestSplitMatchesOneReplica(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("80,000 requests four times")
	}
	srv := llama8B(t)
	const n, total, r = 4, 80000, 20.0
	poisson := figures(runFleet(t, srv, 1, RoundRobin, openSpec(t, r, total, 0, 1000, 200), 11).Fleet, 1)
	erlang := figures(runFleet(t, srv, 1, RoundRobin, openSpec(t, r, total, 0.5, 1000, 200), 11).Fleet, 1)
	random := figures(runFleet(t, srv, n, Random, openSpec(t, n*r, total, 0, 1000, 200), 12).Fleet, n)
	rr := figures(runFleet(t, srv, n, RoundRobin, openSpec(t, n*r, total, 0, 1000, 200), 12).Fleet, n)
	if k, w := worst(random, poisson); w > 0.02 {
		t.Errorf("random routing at %d x %g req/s vs one replica at %g: %s differs by %.2f %% (want <= 2 %%)\nfleet %v\none %v", n, r, r, k, 100*w, random, poisson)
	} else {
		t.Logf("random vs one replica, Poisson: worst %s %.2f %%", k, 100*w)
	}
	if k, w := worst(rr, erlang); w > 0.02 {
		t.Errorf("round-robin at %d x %g req/s vs one replica fed Erlang-%d arrivals: %s differs by %.2f %%\nfleet %v\none %v", n, r, n, k, 100*w, rr, erlang)
	} else {
		t.Logf("round-robin vs one replica, Erlang-%d: worst %s %.2f %%", n, k, 100*w)
	}
	if d := 1 - rr["TTFT p99"]/poisson["TTFT p99"]; d < 0.25 {
		t.Errorf("round-robin TTFT p99 %.1f ms vs one replica at Poisson %.1f ms: %.1f %% lower, want the smoothing to show (> 25 %%)", rr["TTFT p99"], poisson["TTFT p99"], 100*d)
	} else {
		t.Logf("round-robin vs one replica, Poisson: TTFT p99 %.1f vs %.1f ms (%.1f %% lower)", rr["TTFT p99"], poisson["TTFT p99"], 100*d)
	}
}

// multiTurn is a chat workload with sessions: each session's turns come think seconds apart, and
// turn k's prompt is the session's previous prompt plus two new 512-token spans (its history),
// behind a system prompt every session shares.
func multiTurn(sessions, turns int, rate, think float64) []workload.Request {
	var reqs []workload.Request
	start := 0.0
	for s := range sessions {
		start += 1 / rate * (0.5 + float64((s*7919)%100)/100) // spread, deterministic
		ids := []uint64{1}
		for k := range turns {
			ids = append(ids, uint64(1000+s*100+2*k), uint64(1000+s*100+2*k+1))
			q := workload.Request{At: vtime.Time(vtime.FromSeconds(start + float64(k)*think)), InputTokens: 512 * len(ids),
				OutputTokens: 150, PromptID: uint64(1<<62 | len(reqs) + 1), Blocks: append([]uint64(nil), ids...), BlockSpan: 512,
				Session: uint64(s + 1)}
			reqs = append(reqs, q)
		}
	}
	slices.SortStableFunc(reqs, func(a, b workload.Request) int { return cmp.Compare(a.At, b.At) })
	return reqs
}

// TestPrefixAwareRouting: on multi-turn chat (sessions whose prompts grow turn by turn), routing
// by expected prefix hit sends a session's turns where its history is cached: the fleet's prefix
// hit rate (prompt tokens found over looked up, as vLLM counts them) is higher than round-robin's,
// which spreads a session's turns over the replicas, and TTFT is lower. Session affinity, which
// knows the sessions, does as well.
func TestPrefixAwareRouting(t *testing.T) {
	srv := llama8B(t)
	reqs := multiTurn(600, 6, 2, 15)
	out := map[Policy]*Result{}
	for _, p := range []Policy{RoundRobin, PrefixAware, Session} {
		res, err := Run(Config{Groups: []Group{{Server: srv, Count: 4}}, Policy: p, Seed: 3}, workload.NewListStream(reqs))
		if err != nil {
			t.Fatal(err)
		}
		out[p] = res
		t.Logf("%s: prefix hit %.1f %% (%d of %d tokens), TTFT p50 %.1f ms, p99 %.1f ms", p, 100*res.PrefixHitRate, res.PrefixHits, res.PrefixQueries, res.Fleet.TTFT.P50, res.Fleet.TTFT.P99)
	}
	rr, pa := out[RoundRobin], out[PrefixAware]
	if pa.PrefixHitRate < rr.PrefixHitRate+0.2 || pa.Fleet.TTFT.P50 >= rr.Fleet.TTFT.P50 || pa.Fleet.TTFT.P99 >= rr.Fleet.TTFT.P99 {
		t.Errorf("prefix-aware: hit %.3f, TTFT p50 %.1f p99 %.1f ms; round-robin: %.3f, %.1f, %.1f: want a hit rate 20 points higher and a lower TTFT",
			pa.PrefixHitRate, pa.Fleet.TTFT.P50, pa.Fleet.TTFT.P99, rr.PrefixHitRate, rr.Fleet.TTFT.P50, rr.Fleet.TTFT.P99)
	}
	if s := out[Session]; s.PrefixHitRate < rr.PrefixHitRate+0.2 {
		t.Errorf("session affinity: hit %.3f, round-robin %.3f", s.PrefixHitRate, rr.PrefixHitRate)
	}
}

// TestLeastOutstandingUnderBursts: with bursty arrivals (gamma gaps, cv 3) near capacity, sending
// each request to the replica with the fewest in flight spreads a burst where random routing
// piles some of it on one replica: p99 TTFT is lower.
func TestLeastOutstandingUnderBursts(t *testing.T) {
	if raceEnabled {
		t.Skip("40,000 requests")
	}
	srv := llama8B(t)
	spec := openSpec(t, 4*20, 20000, 3, 1000, 200)
	lo := runFleet(t, srv, 4, LeastOutstanding, spec, 5)
	rnd := runFleet(t, srv, 4, Random, spec, 5)
	t.Logf("TTFT p99: least-outstanding %.1f ms, random %.1f ms (p50 %.1f, %.1f)", lo.Fleet.TTFT.P99, rnd.Fleet.TTFT.P99, lo.Fleet.TTFT.P50, rnd.Fleet.TTFT.P50)
	if lo.Fleet.TTFT.P99 >= 0.95*rnd.Fleet.TTFT.P99 {
		t.Errorf("least-outstanding TTFT p99 %.1f ms, random %.1f ms: want at least 5 %% lower", lo.Fleet.TTFT.P99, rnd.Fleet.TTFT.P99)
	}
}

// TestParsePolicy: every policy reads back from its name; a near miss is refused naming the
// policy it nearly spells, any other name listing them all.
func TestParsePolicy(t *testing.T) {
	for _, p := range Policies() {
		if got, err := ParsePolicy(string(p)); err != nil || got != p {
			t.Errorf("ParsePolicy(%q) = %q, %v", p, got, err)
		}
	}
	_, err := ParsePolicy("least-kvv")
	if err == nil || !strings.Contains(err.Error(), `did you mean "least-kv"?`) {
		t.Errorf("least-kvv: %v, want did you mean least-kv", err)
	}
	_, err = ParsePolicy("fastest")
	if err == nil || strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), "round-robin, random, least-outstanding, least-kv, prefix-aware, session") {
		t.Errorf("fastest: %v, want the policies listed and no guess", err)
	}
}
