package deploy

import (
	"fmt"

	"github.com/servesim/servesim/model/param"
)

// CustomAllReduce reports whether vLLM runs the deployment's tensor-parallel all-reduces with its
// custom kernel (for messages up to 8 MiB; NCCL otherwise), and the rule that decided (vLLM
// vllm/distributed/device_communicators/custom_all_reduce.py, CustomAllreduce.__init__): off
// for one rank and with --disable-custom-all-reduce; only for 2, 4, 6 or 8 ranks; on PCIe
// (no NVLink, or a group larger than the NVLink domain) only for 2 ranks ("not supported on more
// than two PCIe-only GPUs").
func (d *Deployment) CustomAllReduce() (bool, string) {
	tp := d.Engine.TensorParallel
	g := &d.Hardware.GPU
	switch {
	case tp <= 1:
		return false, "one rank: no all-reduce"
	case d.Engine.DisableCustomAllReduce:
		return false, "--disable-custom-all-reduce: NCCL"
	case tp != 2 && tp != 4 && tp != 6 && tp != 8:
		return false, fmt.Sprintf("custom all-reduce supports 2, 4, 6 or 8 ranks, not %d: NCCL", tp)
	case g.CollectiveFabric(tp).Kind == "pcie" && tp > 2:
		return false, fmt.Sprintf("%d PCIe-connected ranks: vLLM disables its custom all-reduce on more than two PCIe-only GPUs, NCCL", tp)
	}
	return true, fmt.Sprintf("vLLM's custom all-reduce for messages up to 8 MiB over %s, NCCL above", g.CollectiveFabric(tp).Kind)
}

// Priors returns the deployment's parameter priors and where each comes from: the generic prior
// of package param, replaced for GPU-level parameters by the GPU generation's (its collectives
// over the fabric the TP group uses; model/hardware GenerationPriors). Engine-level priors are
// the generic ones, with the per-step CPU work of the engine generation (EnginePriors: V0
// before 0.8, V1 from it; a calibration of the same version replaces them);
// model-level ones too (act_passes 0: arch.Arch.ElementwisePasses counts the elementwise work the
// architecture describes). Workload-level parameters take their generic prior (a prompt per
// request: same_prompt 0); a benchmark that sends one prompt sets it (bench.WithSamePrompt).
func (d *Deployment) Priors() (param.Values, param.Provenance) {
	p := param.Priors()
	var prov param.Provenance
	for _, def := range param.Defs() {
		prov[def.ID] = param.Origin{Kind: param.OriginPrior, Detail: "generic prior"}
	}
	g := &d.Hardware.GPU
	ps, note := g.Priors(d.Engine.TensorParallel)
	if note != "" {
		for _, def := range param.Defs() {
			if def.Level == param.LevelGPU {
				prov[def.ID].Detail = "generic prior (" + note + ")"
			}
		}
	}
	for _, x := range ps {
		p[x.ID] = x.Value
		prov[x.ID] = param.Origin{Kind: param.OriginPrior, Detail: fmt.Sprintf("%s prior [%.3g, %.3g]: %s", g.Generation.Label(), x.Lo, x.Hi, x.Source),
			Lo: x.Lo, Hi: x.Hi}
	}
	for _, def := range param.Defs() {
		switch def.Level {
		case param.LevelEngine:
			prov[def.ID].Detail = "generic vLLM prior (any version)"
		case param.LevelWorkload:
			prov[def.ID] = param.Origin{Kind: param.OriginWorkload, Detail: "set by what runs: 0 for workloads of different prompts, 1 for the llm-inference-bench matrix and bench cells (one prompt per cell)"}
		}
	}
	for _, x := range EnginePriors(d.Engine.Name, d.Engine.Version) {
		p[x.ID] = x.Value
		prov[x.ID] = param.Origin{Kind: param.OriginPrior, Detail: fmt.Sprintf("%s prior [%.3g, %.3g]: %s", x.Generation, x.Lo, x.Hi, x.Source), Lo: x.Lo, Hi: x.Hi}
	}
	return p, prov
}
