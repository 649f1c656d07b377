package workload

import (
	"testing"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
)

func seedServer(t testing.TB) (*sim.Server, *scenario.Resolved) {
	t.Helper()
	r, err := scenario.Default().Resolve(scenario.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		t.Fatal(err)
	}
	return srv, r
}

// TestBenchCellMatchesMatrix checks that a bench workload is the cell of a one-cell matrix run
// (the tool's schedule for one context and one concurrency: warm-ups, then the cell): same
// throughput, median TTFT and median time between tokens, to the bit.
func TestBenchCellMatchesMatrix(t *testing.T) {
	srv, r := seedServer(t)
	cases := []struct {
		ctx  string
		conc int
	}{{"128K", 16}, {"8K", 2}, {"32K", 64}}
	if testing.Short() {
		cases = cases[1:2]
	}
	for _, tc := range cases {
		proto := r.Scenario.Protocol
		proto.Contexts, proto.PrefillOnly, proto.Concurrency = []string{tc.ctx}, nil, []int{tc.conc}
		res, err := llmbench.RunMatrix(srv, &proto, llmbench.Options{Seed: r.Scenario.Seed})
		if err != nil {
			t.Fatal(err)
		}
		w := res.Matrix.Decode[0]
		s := &Spec{Name: "cell", Kind: KindLLMBenchCell, Cell: BenchFromProtocol(&r.Scenario.Protocol, tc.ctx, tc.conc)}
		got, err := Run(srv, s, Options{Seed: r.Scenario.Seed})
		if err != nil {
			t.Fatal(err)
		}
		if got.OutputTokS != w.TotalTokS || got.TTFT.P50 != w.TTFTms || got.TPOT.P50 != w.TBTms || got.Status != string(w.Status) || got.Completed != w.Completed {
			t.Errorf("%s x %d: workload gives %.6g tok/s, TTFT %.6g ms, TBT %.6g ms, %s, %d completed; matrix cell %.6g, %.6g, %.6g, %s, %d",
				tc.ctx, tc.conc, got.OutputTokS, got.TTFT.P50, got.TPOT.P50, got.Status, got.Completed, w.TotalTokS, w.TTFTms, w.TBTms, w.Status, w.Completed)
		}
	}
}

func exampleServer() (uint64, *sim.Server) {
	r, err := scenario.Default().Resolve(scenario.ResolveOptions{})
	if err != nil {
		panic(err)
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		panic(err)
	}
	return r.Scenario.Seed, srv
}
