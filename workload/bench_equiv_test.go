package workload

import (
	"testing"

	"github.com/servesim/servesim/bench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/protocol"
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

// TestBenchCellMatchesMatrix checks that a bench workload is the matrix's cell: same throughput,
// median TTFT and median time between tokens, to the bit.
func TestBenchCellMatchesMatrix(t *testing.T) {
	srv, r := seedServer(t)
	proto := r.Scenario.Protocol
	jobs, err := bench.Plan(srv, &proto)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		ctx  string
		conc int
	}{{"128K", 16}, {"8K", 2}, {"32K", 64}}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, tc := range cases {
		var job *protocol.Job
		for i := range jobs {
			if jobs[i].Phase == matrix.Decode && jobs[i].Label == tc.ctx && jobs[i].Concurrency == tc.conc {
				job = &jobs[i]
			}
		}
		if job == nil {
			t.Fatalf("no job %s x %d", tc.ctx, tc.conc)
		}
		want, err := bench.RunJob(srv, &proto, *job, r.Scenario.Seed)
		if err != nil {
			t.Fatal(err)
		}
		s := &Spec{Name: "cell", Kind: KindBench, Bench: BenchFromProtocol(&proto, tc.ctx, tc.conc)}
		got, err := Run(srv, s, Options{Seed: r.Scenario.Seed})
		if err != nil {
			t.Fatal(err)
		}
		w := want.Cell
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
