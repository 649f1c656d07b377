package planner_test

import (
	"fmt"

	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/planner"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/workload"
)

// ExampleRun plans the seed model on MI300Xs with its own NVFP4 checkpoint only: vLLM runs NVFP4
// on AMD GPUs neither natively nor weight-only, so every layout is pruned with that reason instead
// of an invented speed (on an H100 the checkpoint would run weight-only, through Marlin).
func ExampleRun() {
	r, _ := scenario.Default().Resolve(scenario.ResolveOptions{Uncalibrated: true})
	mi, _ := hardware.BuiltinCatalog().Find("MI300X")
	w := &workload.Spec{Name: "cell", Kind: workload.KindLLMBenchCell, Cell: workload.BenchFromProtocol(&r.Scenario.Protocol, "128K", 16)}
	q := &planner.Question{Model: r.Deployment.Model, ModelRef: "glm-5.3-flash", Workload: w, Base: r.Deployment.Engine,
		GPUs: []hardware.GPU{mi}, Seed: 1, Space: planner.Space{Counts: []int{8}, Weights: []string{"native"}}}
	p, err := planner.Run(q, planner.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, row := range p.Results {
		fmt.Printf("%s: %s: %.60s\n", row.Config.Label(), row.Stage, row.Reason)
	}
	// Output:
	// 8 x MI300X TP8 EP: format: glm-5.3-flash weights in nvfp4: vLLM does not run NVFP4 (Mod
	// 8 x MI300X TP8: format: glm-5.3-flash weights in nvfp4: vLLM does not run NVFP4 (Mod
	// 8 x MI300X TP4 DP2 EP8: format: glm-5.3-flash weights in nvfp4: vLLM does not run NVFP4 (Mod
	// 8 x MI300X TP4 DP2: format: glm-5.3-flash weights in nvfp4: vLLM does not run NVFP4 (Mod
	// 8 x MI300X TP2 DP4 EP8: format: glm-5.3-flash weights in nvfp4: vLLM does not run NVFP4 (Mod
	// 8 x MI300X TP2 DP4: format: glm-5.3-flash weights in nvfp4: vLLM does not run NVFP4 (Mod
	// 8 x MI300X TP1 DP8 EP8: format: glm-5.3-flash weights in nvfp4: vLLM does not run NVFP4 (Mod
	// 8 x MI300X TP1 DP8: format: glm-5.3-flash weights in nvfp4: vLLM does not run NVFP4 (Mod
}
