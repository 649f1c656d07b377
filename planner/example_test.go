package planner_test

import (
	"fmt"

	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/planner"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/workload"
)

// ExampleRun plans the seed model on H100s with its own NVFP4 checkpoint only: the GPUs have no
// FP4 tensor cores, so every layout is pruned with that reason instead of an invented speed.
func ExampleRun() {
	r, _ := scenario.Default().Resolve(scenario.ResolveOptions{Uncalibrated: true})
	h100, _ := hardware.BuiltinCatalog().Find("H100")
	w := &workload.Spec{Name: "cell", Kind: workload.KindBench, Bench: workload.BenchFromProtocol(&r.Scenario.Protocol, "128K", 16)}
	q := &planner.Question{Model: r.Deployment.Model, ModelRef: "glm-5.3-flash", Workload: w, Base: r.Deployment.Engine,
		GPUs: []hardware.GPU{h100}, Seed: 1, Space: planner.Space{Counts: []int{8}, Weights: []string{"native"}}}
	p, err := planner.Run(q, planner.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, row := range p.Results {
		fmt.Printf("%s: %s: %.60s\n", row.Config.Label(), row.Stage, row.Reason)
	}
	// Output:
	// 8 x H100-SXM TP8 EP: format: glm-5.3-flash weights in nvfp4: H100-SXM has no nvfp4 tensor
	// 8 x H100-SXM TP8: format: glm-5.3-flash weights in nvfp4: H100-SXM has no nvfp4 tensor
	// 8 x H100-SXM TP4 DP2 EP: format: glm-5.3-flash weights in nvfp4: H100-SXM has no nvfp4 tensor
	// 8 x H100-SXM TP4 DP2: format: glm-5.3-flash weights in nvfp4: H100-SXM has no nvfp4 tensor
	// 8 x H100-SXM TP2 DP4 EP: format: glm-5.3-flash weights in nvfp4: H100-SXM has no nvfp4 tensor
	// 8 x H100-SXM TP2 DP4: format: glm-5.3-flash weights in nvfp4: H100-SXM has no nvfp4 tensor
	// 8 x H100-SXM TP1 DP8: format: glm-5.3-flash weights in nvfp4: H100-SXM has no nvfp4 tensor
}
