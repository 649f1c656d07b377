package deploy

import (
	"fmt"

	"github.com/servesim/servesim/model/param"
)

// ParamUses says which parameter groups the deployment's predictions depend on: collectives with
// more than one tensor-parallel, expert-parallel, pipeline or lockstep data-parallel rank,
// acceptance with speculative decoding, the ngram drafter's CPU cost with method ngram, routing
// for MoE models.
func (d *Deployment) ParamUses() param.Uses {
	e := &d.Engine
	return param.Uses{Collectives: e.TensorParallel > 1 || e.EPSize() > 1 || e.PipelineParallel > 1 || d.LockstepRanks() > 1,
		Speculative: e.SpecTokens() > 0, MoE: d.Model.IsMoE(),
		Ngram: e.SpecTokens() > 0 && e.Speculative.Method == "ngram"}
}

// Provenance is the provenance summary of parameters resolved for d (param.Summarize over the
// groups d uses), with the measured data its GPU generation's priors rest on; a prediction whose
// GPU-level groups are all priors for a generation no measured data supports is marked
// Unsupported.
func (d *Deployment) Provenance(prov *param.Provenance) param.Summary {
	s := param.Summarize(prov, d.ParamUses())
	g := &d.Hardware.GPU
	s.GPUData = g.Generation.MeasuredData()
	if s.GPUData == "" && s.GPUPriorsOnly() {
		s.Unsupported = true
		s.Why = fmt.Sprintf("no measured data supports %s: its GPU priors are published figures and another generation's values, with wider intervals", g.Generation.Label())
	}
	if d.RunsVLLMV0() {
		s.ApproxEngine = "vLLM " + d.Engine.Version + " runs the V0 engine, simulated as V1's scheduler with V0's CPU costs"
	}
	return s
}
