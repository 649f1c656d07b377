package priors

import (
	"fmt"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
)

// Of returns the deployment's parameter priors and where each comes from: the generic prior
// of package param, replaced for GPU-level parameters by the GPU generation's (its collectives
// over the fabric the TP group uses; model/hardware GenerationPriors). Engine-level priors are
// the generic ones, with the per-step CPU work of the engine generation (ForEngine: V0
// before 0.8, V1 from it; a calibration of the same version replaces them);
// model-level ones too (act_passes 0: arch.Arch.ElementwisePasses counts the elementwise work the
// architecture describes). Workload-level parameters take their generic prior (a prompt per
// request: same_prompt 0); a benchmark that sends one prompt sets it (llmbench.WithSamePrompt).
func Of(d *deploy.Deployment) (param.Values, param.Provenance) {
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
	for _, x := range ForEngine(d.Engine.Name, d.Engine.Version) {
		p[x.ID] = x.Value
		prov[x.ID] = param.Origin{Kind: param.OriginPrior, Detail: fmt.Sprintf("%s prior [%.3g, %.3g]: %s", x.Generation, x.Lo, x.Hi, x.Source), Lo: x.Lo, Hi: x.Hi}
	}
	return p, prov
}
