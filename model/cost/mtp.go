package cost

import (
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
)

// mtpLayer is the checkpoint's multi-token-prediction module (arch.Arch.MTPLayer) prepared for one
// GPU: eh_proj whole on every rank, the layer's attention projections, MLP or shared experts and
// router split like the target's, its routed experts, its attention, and the lm_head it shares.
type mtpLayer struct {
	group   arch.LayerGroup
	proj    gemm
	dense   []gemm
	moe     []moeLayers
	attn    []attnGroup
	passes  float64 // elementwise traffic per token: the layer's, and the two input norms
	kernels int     // per pass: the layer's kernels, eh_proj and the lm_head
}

// newMTPLayer prepares d's MTP module, or returns nil when the checkpoint has none.
func newMTPLayer(c *Model, d *deploy.Deployment) *mtpLayer {
	g, ok := d.Model.MTPLayer()
	if !ok {
		return nil
	}
	one := &arch.Arch{Name: d.Model.Name + " MTP", Family: d.Model.Family, Hidden: d.Model.Hidden, Vocab: d.Model.Vocab,
		EmbedDType: d.Model.EmbedDType, Layers: []arch.LayerGroup{g}, ExtraParamsPerLayer: d.Model.ExtraParamsPerLayer,
		SharesTargetEmbeddings: true}
	e := &d.Engine
	ep := e.EPSize()
	dt := g.Attn.DType
	if dt == "" {
		dt = arch.BF16
	}
	proj := float64(d.Model.MTPProjParams())
	m := &mtpLayer{group: g,
		proj:  gemm{bytes: proj * dt.BytesPerParam(), params: proj, rate: c.kern.GEMMRate(dt)},
		dense: denseGEMMs(one, c.kern, c.tp),
		moe:   moeFor(one, c.kern, c.tp, ep, c.p.RoutingConcentration()),
		attn:  attnFor(one, c.tp, e.KVDType()),
		// The layer's elementwise traffic, and RMSNorm of the embedding and of the hidden state
		// (enorm, hnorm: read and write each).
		passes:  one.ElementwisePasses(c.tp, ep) + c.p[param.ActPasses] + 4,
		kernels: one.LayerKernels() + 2,
	}
	return m
}

// MTPPass is one run of the MTP layer within a step.
type MTPPass struct {
	// Rows is the tokens the pass runs: the step's scheduled tokens in the first pass (the layer
	// builds its own cache over every new token and drafts from each request's last one), one
	// per emitting request after.
	Rows int
	// Logits is the rows of the lm_head (one per emitting request).
	Logits int
	// ExpertsRead is, summed over the MTP layer's MoE weight sets (one), the routed experts the
	// busiest rank reads; ExpertRows the rows each of them runs. Zero for a dense MTP layer.
	ExpertsRead, ExpertRows float64
	// Seconds is the pass's GPU time.
	Seconds float64
}

// MTPCost is the cost of drafting k tokens with the MTP layer in one step.
type MTPCost struct {
	// Terms are the passes' seconds by term (weights, compute, attention, all-reduce, overhead:
	// the kernels' fixed time); GPUSeconds their sum. CPU and Total are left zero: the caller
	// adds the cost to its step (as the drafter term) and overlaps the CPU as it does.
	Terms  StepCost
	Passes []MTPPass
}

// MTP returns the cost of running the checkpoint's multi-token-prediction layer k times for a
// step of shape s (vLLM's EAGLE-style proposer, vllm/v1/spec_decode/eagle.py, which runs MTP:
// the first pass over every scheduled token, each pass after over one token per emitting request;
// with fewer MTP layers than k the one layer is run again): per pass eh_proj on [norm(embedding);
// norm(hidden)], the layer's attention over each request's context, its routed experts (the
// busiest rank's coverage of the pass's tokens, as in the target's layers) and shared experts,
// two all-reduces, the lm_head on one row per emitting request and the logits' gather, and the
// fixed time of its kernels. ok is false when the model has no MTP layer (or k < 1).
func (c *Model) MTP(s *StepShape, k int) (cost MTPCost, ok bool) {
	m := c.mtp
	if m == nil || k < 1 || s.EmitSeqs == 0 {
		return MTPCost{}, m != nil && k >= 1
	}
	for i := 0; i < k; i++ {
		var st StepCost
		rows := s.EmitSeqs
		if i == 0 {
			rows = s.Tokens
		}
		r := float64(rows)
		logits := float64(s.EmitSeqs)
		c.gemmTime(m.proj, r, &st, TermWeights)
		for _, x := range m.dense {
			c.gemmTime(x, r, &st, TermWeights)
		}
		var pass MTPPass
		for j := range m.moe {
			loaded, er := m.moe[j].touch(r)
			pass.ExpertsRead += loaded * m.moe[j].layers
			pass.ExpertRows = er
		}
		c.moeTime(m.moe, r, &st)
		c.gemmTime(c.lmHead, logits, &st, TermWeights)
		st.Seconds[TermAllReduce] += c.gatherSeconds(logits*c.vocab*4) + c.allReduceSeconds(r, 2)
		st.Seconds[TermCompute] += c.kern.ElementwiseSeconds(m.passes * r * c.hidden * 2)
		for _, w := range s.Seqs {
			switch {
			case i == 0:
				c.attnTime(m.attn, w, &st, TermAttention, TermState)
			case w.Emits:
				c.attnTime(m.attn, SeqWork{Start: w.Start + w.Tokens + i - 1, Tokens: 1, Decode: true}, &st, TermAttention, TermState)
			}
		}
		st.Seconds[TermOverhead] += float64(m.kernels) * c.kern.KernelFixedSeconds()
		for t, v := range st.Seconds {
			cost.Terms.Seconds[t] += v
			pass.Seconds += v
		}
		pass.Rows, pass.Logits = rows, s.EmitSeqs
		cost.Passes = append(cost.Passes, pass)
	}
	for _, v := range cost.Terms.Seconds {
		cost.Terms.GPUSeconds += v
	}
	return cost, true
}

// HasMTP reports whether the deployment's checkpoint carries an MTP layer the model can cost.
func (c *Model) HasMTP() bool { return c.mtp != nil }
