package planner

import (
	"testing"
	"time"

	"servesim/bench"
	"servesim/scenario"
	"servesim/sim"
)

func TestScratchCell(t *testing.T) {
	r, err := scenario.Default().Resolve(scenario.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		start := time.Now()
		srv, err := sim.NewServer(r.Deployment, r.Params)
		if err != nil {
			t.Fatal(err)
		}
		t1 := time.Since(start)
		p := bench.SeedProtocol()
		p.Contexts = []string{"128K"}
		p.PrefillOnly = nil
		p.Concurrency = []int{16}
		res, err := bench.RunMatrix(srv, &p, bench.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("server %v total %v steps %d %+v", t1, time.Since(start), res.Steps, res.Matrix.Decode[0])
	}
}
