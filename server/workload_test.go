package server

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/servesim/servesim/workload"
)

// TestWorkloadOverHTTP sends an open and a closed loop over HTTP and compares what the client
// measured with the same workload simulated in process ('servesim simulate'): the same requests
// complete with the same tokens, and throughput and latencies agree within the timing noise of a
// clock run twice as fast as the wall clock on a shared machine (a generous 15 %, or 60 ms of
// simulated time for latencies). A request longer than max_model_len is refused by both.
func TestWorkloadOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two workloads over HTTP")
	}
	const speed = 2
	for _, spec := range []*workload.Spec{
		{Name: "open", Kind: workload.KindOpen, Open: workload.Open{Process: "poisson", RatePerS: 8, Requests: 24},
			Lengths: workload.Lengths{InputTokens: 512, OutputTokens: 64, RangeRatio: 0.5, PrefixTokens: 256, PrefixGroups: 2}},
		{Name: "closed", Kind: workload.KindClosed, Closed: workload.Closed{Requests: 16, Concurrency: 4},
			Lengths: workload.Lengths{InputTokens: 1024, OutputTokens: 48, RangeRatio: 0.25}},
	} {
		t.Run(spec.Name, func(t *testing.T) {
			cfg := testConfig(t, speed)
			if err := spec.Validate(); err != nil {
				t.Fatal(err)
			}
			want, err := workload.Run(cfg.Server, spec, workload.Options{Seed: cfg.Seed})
			if err != nil {
				t.Fatal(err)
			}
			reqs, err := spec.Requests(spec.SeedFor(workload.Options{Seed: cfg.Seed}))
			if err != nil {
				t.Fatal(err)
			}
			conc := 0
			if spec.Kind == workload.KindClosed {
				conc = spec.Closed.Concurrency
			}
			r := serve(t, cfg)
			c := NewClient(r.url, speed)
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			got, err := c.RunWorkload(ctx, reqs, conc, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Completed != want.Completed || got.Rejected != want.Rejected || got.OutputTokens != want.OutputTokens || got.InputTokens != want.InputTokens {
				t.Errorf("completed %d, rejected %d, tokens %d in / %d out over HTTP; simulated %d, %d, %d / %d",
					got.Completed, got.Rejected, got.InputTokens, got.OutputTokens, want.Completed, want.Rejected, want.InputTokens, want.OutputTokens)
			}
			const tol, floorMS = 0.15, 30 * speed
			for _, m := range []struct {
				name      string
				got, want float64
				floor     float64
			}{
				{"output tok/s", got.OutputTokS, want.OutputTokS, 0},
				{"TTFT p50 ms", got.TTFT.P50, want.TTFT.P50, floorMS},
				{"TPOT p50 ms", got.TPOT.P50, want.TPOT.P50, floorMS},
				{"E2E p50 ms", got.E2E.P50, want.E2E.P50, floorMS},
			} {
				if !Agrees(m.got, m.want, tol, m.floor) {
					t.Errorf("%s: %.1f over HTTP, %.1f simulated", m.name, m.got, m.want)
				}
			}
			t.Logf("%s: tok/s %.1f / %.1f, TTFT p50 %.1f / %.1f ms, TPOT p50 %.2f / %.2f ms", spec.Name,
				got.OutputTokS, want.OutputTokS, got.TTFT.P50, want.TTFT.P50, got.TPOT.P50, want.TPOT.P50)
		})
	}
}

// TestWorkloadRejected: a request longer than max_model_len is counted as refused (vLLM's 400),
// as the simulation counts it, and the others complete.
func TestWorkloadRejected(t *testing.T) {
	cfg := testConfig(t, 50)
	r := serve(t, cfg)
	c := NewClient(r.url, 50)
	defer c.Close()
	mml := cfg.Server.Deployment.Engine.MaxModelLen
	reqs := []workload.Request{{InputTokens: 16, OutputTokens: 8, PromptID: 1}, {InputTokens: mml, OutputTokens: 8, PromptID: 2}, {InputTokens: 32, OutputTokens: 4, PromptID: 3}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := c.RunWorkload(ctx, reqs, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Requests != 3 || got.Completed != 2 || got.Rejected != 1 || got.OutputTokens != 12 {
		t.Errorf("sent %d, completed %d, rejected %d, output tokens %d; want 3, 2, 1, 12", got.Requests, got.Completed, got.Rejected, got.OutputTokens)
	}
}

// TestCompareWorkload: the verdict of the workload check: equal counts, throughput within the
// tolerance, latencies within it or the timing noise, p99s only from P99MinRequests requests.
func TestCompareWorkload(t *testing.T) {
	base := func(n int) (*WorkloadResult, *workload.Metrics) {
		d := workload.Dist{N: n, P50: 100, P90: 200, P99: 300}
		g := &WorkloadResult{Requests: n, Completed: n, OutputTokens: 1000, OutputTokS: 50, TTFT: d, TPOT: d, E2E: d}
		w := &workload.Metrics{Requests: n, Completed: n, OutputTokens: 1000, OutputTokS: 50, TTFT: d, TPOT: d, E2E: d}
		return g, w
	}
	for _, c := range []struct {
		name   string
		n      int
		change func(g *WorkloadResult)
		fails  bool
	}{
		{"equal", 100, func(g *WorkloadResult) {}, false},
		{"a request fewer", 100, func(g *WorkloadResult) { g.Completed-- }, true},
		{"tok/s 4 % off", 100, func(g *WorkloadResult) { g.OutputTokS = 52 }, false},
		{"tok/s 6 % off", 100, func(g *WorkloadResult) { g.OutputTokS = 53 }, true},
		{"TTFT p50 10 % off", 100, func(g *WorkloadResult) { g.TTFT.P50 = 110 }, true},
		{"TTFT p50 off within the noise at 10x", 100, func(g *WorkloadResult) { g.TTFT.P50 = 119 }, false},
		{"p99 30 % off, 100 requests", 100, func(g *WorkloadResult) { g.E2E.P99 = 390 }, false},
		{"p99 30 % off, 1000 requests", 1000, func(g *WorkloadResult) { g.E2E.P99 = 390 }, true},
	} {
		g, w := base(c.n)
		c.change(g)
		speed := 1.0
		if c.name == "TTFT p50 off within the noise at 10x" {
			speed = 10
		}
		var out bytes.Buffer
		err := CompareWorkload(&out, speed, "w", g, w, 0.05)
		if (err != nil) != c.fails {
			t.Errorf("%s: error %v, want failure %v\n%s", c.name, err, c.fails, out.String())
		}
	}
}
