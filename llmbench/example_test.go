package llmbench_test

import (
	"fmt"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
)

// ExampleRunMatrix simulates a slice of the seed protocol: one context, two concurrencies.
func ExampleRunMatrix() {
	s := scenario.Default()
	r, err := s.Resolve(scenario.ResolveOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		fmt.Println(err)
		return
	}
	proto := s.Protocol
	proto.Contexts, proto.PrefillOnly, proto.Concurrency = []string{"8K"}, nil, []int{1, 64}
	res, err := llmbench.RunMatrix(srv, &proto, llmbench.Options{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range res.Matrix.Decode {
		fmt.Printf("%s x %d: %s, %d completed in the %.0f s window\n", c.Context, c.Concurrency, c.Status, c.Completed, c.MeasuredS)
	}
	// Output:
	// 8K x 1: Valid, 1 completed in the 30 s window
	// 8K x 64: Requests queued, 0 completed in the 30 s window
}
