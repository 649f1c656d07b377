package priors

import (
	"fmt"
	"slices"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
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
// Unsupported, and what no measured run on its generation covers (the shipped record,
// hardware.Generation.MeasuredSupport) is listed as unseen.
func Summarize(d *deploy.Deployment, prov *param.Provenance) param.Summary {
	return SummarizeIn(d, prov, d.Hardware.GPU.Generation.MeasuredSupport())
}

// SummarizeIn is Summarize with sup as what the measured runs on d's GPU generation cover: a
// fit's own data in place of the shipped record, so that a cross-validation fold that holds a
// model family out sees that family as unseen.
func SummarizeIn(d *deploy.Deployment, prov *param.Provenance, sup hardware.Support) param.Summary {
	s := param.Summarize(prov, Uses(d))
	g := &d.Hardware.GPU
	s.GPUData = g.Generation.MeasuredData()
	if s.GPUData == "" && s.GPUPriorsOnly() {
		s.Unsupported = true
		s.Why = fmt.Sprintf("no measured data supports %s: its GPU priors are published figures and another generation's values, with wider intervals", g.Generation.Label())
	}
	s.Unseen = UnseenIn(d, sup)
	if d.RunsVLLMV0() {
		s.ApproxEngine = "vLLM " + d.Engine.Version + " runs the V0 engine, simulated as V1's scheduler with V0's CPU costs"
	}
	return s
}

// Unseen lists what d runs that no measured run on its GPU generation covers (UnseenIn the
// shipped record, hardware.Generation.MeasuredSupport).
func Unseen(d *deploy.Deployment) []string {
	return UnseenIn(d, d.Hardware.GPU.Generation.MeasuredSupport())
}

// UnseenIn lists what d runs (Runs) that sup does not cover: its model family, each attention
// kind, and the tensor-core class of its main weight format, as "model family glm_moe_dsa on
// Hopper (H100, H200, H20)". On a generation no end-to-end measured run covers (sup empty) all of
// them are unseen.
func UnseenIn(d *deploy.Deployment, sup hardware.Support) []string {
	on := " on " + d.Hardware.GPU.Generation.Label()
	r := Runs(d)
	var out []string
	for _, f := range r.Families {
		if !slices.Contains(sup.Families, f) {
			out = append(out, "model family "+f+on)
		}
	}
	for _, k := range r.Kinds {
		if !slices.Contains(sup.Kinds, k) {
			out = append(out, "attention "+k+on)
		}
	}
	for _, f := range r.Formats {
		if !slices.Contains(sup.Formats, f) {
			out = append(out, "weights "+f+on)
		}
	}
	return out
}

// Runs is what d runs in the terms of hardware.Support: its model family, its attention kinds in
// layer order, and the format most of its weights run at on its GPU (the tensor-core class, or
// "DTYPE weight-only"; every model keeps small bf16 parts: the lm_head, routers, norms). A
// measured run of d covers exactly this.
func Runs(d *deploy.Deployment) hardware.Support {
	g := &d.Hardware.GPU
	var r hardware.Support
	if f := d.Model.Family; f != "" {
		r.Families = []string{f}
	}
	for _, lg := range d.Model.Layers {
		if k := string(lg.Attn.Kind); !slices.Contains(r.Kinds, k) {
			r.Kinds = append(r.Kinds, k)
		}
	}
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
	if main != "" {
		r.Formats = []string{main}
	}
	return r
}
