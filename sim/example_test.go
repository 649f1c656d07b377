package sim_test

import (
	"fmt"

	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vllmcmd"
	"github.com/servesim/servesim/workload"
)

// Simulate a deployment given as a `vllm serve` line on one H100 and read the result: flags the
// line leaves out take vLLM's defaults for the version, GPU and model, as `servesim simulate`
// resolves them.
func Example() {
	words, err := vllmcmd.Split("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 64")
	if err != nil {
		fmt.Println(err)
		return
	}
	s := scenario.New()
	if _, err := s.ApplyVLLM(words); err != nil {
		fmt.Println(err)
		return
	}
	s.Hardware.GPU = "H100-SXM"
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
	w, _ := workload.Preset("chat") // Poisson arrivals at 2 req/s, ~1,024 tokens in, ~256 out
	w.Open.Requests = 200
	m, err := workload.Run(srv, w, workload.Options{Seed: r.Scenario.Seed})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d of %d requests completed, %.0f output tok/s\n", m.Completed, m.Requests, m.OutputTokS)
	fmt.Printf("TTFT p50 %.0f ms, TPOT p50 %.1f ms\n", m.TTFT.P50, m.TPOT.P50)
	// The server keeps up (output = 2 req/s x ~256 tokens), and a decode step reads the 16 GB of
	// bf16 weights at about 3 TB/s (5.2 ms) plus the per-step overheads.

	// Output:
	// 200 of 200 requests completed, 514 output tok/s
	// TTFT p50 48 ms, TPOT p50 7.6 ms
}
