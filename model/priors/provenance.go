package priors

import (
	"fmt"
	"slices"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
)

// Uses says which parameter groups the deployment's predictions depend on: collectives with
// more than one tensor-parallel, expert-parallel, pipeline or lockstep data-parallel rank,
// acceptance with speculative decoding, the ngram drafter's CPU cost with method ngram, routing
// for MoE models.
func Uses(d *deploy.Deployment) param.Uses {
	e := &d.Engine
	return param.Uses{Collectives: e.TensorParallel > 1 || e.EPSize() > 1 || e.PipelineParallel > 1 || d.LockstepRanks() > 1,
		Speculative: e.SpecTokens() > 0, MoE: d.Model.IsMoE(),
		Ngram: e.SpecTokens() > 0 && e.Speculative.Method == "ngram"}
}

// Summarize is the provenance summary of parameters resolved for d (param.Summarize over the
// groups d uses), with the measured data its GPU generation's priors rest on; a prediction whose
// GPU-level groups are all priors for a generation no measured data supports is marked
// Unsupported.
func Summarize(d *deploy.Deployment, prov *param.Provenance) param.Summary {
	s := param.Summarize(prov, Uses(d))
	g := &d.Hardware.GPU
	s.GPUData = g.Generation.MeasuredData()
	if s.GPUData == "" && s.GPUPriorsOnly() {
		s.Unsupported = true
		s.Why = fmt.Sprintf("no measured data supports %s: its GPU priors are published figures and another generation's values, with wider intervals", g.Generation.Label())
	}
	s.Unseen = Unseen(d)
	if d.RunsVLLMV0() {
		s.ApproxEngine = "vLLM " + d.Engine.Version + " runs the V0 engine, simulated as V1's scheduler with V0's CPU costs"
	}
	return s
}

// Unseen lists what d runs that no measured run on its GPU generation covers
// (hardware.Generation.MeasuredSupport): its model family, each attention kind, and the tensor-core
// class of each weight format, as "model family glm_moe_dsa on Hopper (H100, H200, H20)". A
// generation without measured runs gives none (its predictions are unsupported as a whole).
func Unseen(d *deploy.Deployment) []string {
	g := &d.Hardware.GPU
	sup := g.Generation.MeasuredSupport()
	if len(sup.Families) == 0 {
		return nil
	}
	on := " on " + g.Generation.Label()
	var out []string
	if f := d.Model.Family; f != "" && !slices.Contains(sup.Families, f) {
		out = append(out, "model family "+f+on)
	}
	for _, lg := range d.Model.Layers {
		k := string(lg.Attn.Kind)
		if !slices.Contains(sup.Kinds, k) && !slices.Contains(out, "attention "+k+on) {
			out = append(out, "attention "+k+on)
		}
	}
	// The format most of the weights run at (every model keeps small bf16 parts: the lm_head,
	// routers, norms).
	by := map[string]float64{}
	var main string
	for _, w := range d.Model.WeightSets() {
		if w.Part == arch.PartEmbedding {
			continue
		}
		class, weightOnly := g.GEMMClass(w.DType)
		f := string(class)
		if weightOnly {
			f = string(w.DType) + " weight-only"
		}
		by[f] += float64(w.Params) * float64(max(w.Layers, 1)) * float64(max(w.Experts, 1))
		if main == "" || by[f] > by[main] {
			main = f
		}
	}
	if main != "" && !slices.Contains(sup.Formats, main) {
		out = append(out, "weights "+main+on)
	}
	return out
}
