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
	small   float64 // per pass: the fixed time of its small kernels (Kernels.SmallKernelSeconds)
	// moeLayers is the layer's MoE layers (1 or 0), for the data-parallel exchange.
	moeLayers float64
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
		proj:  c.kern.newGEMM(dt, proj),
		dense: denseGEMMs(one, c.kern, c.tp),
		// Its experts are placed like the target's (over the lockstep data-parallel ranks too).
		moe:  moeFor(one, c.kern, c.tp*d.LockstepRanks(), ep, c.p.RoutingConcentration()),
		attn: withDCP(attnFor(one, c.tp, e.KVDType()), one, c.tp, e.DCP(), e.KVDType()),
		// The layer's elementwise traffic, and RMSNorm of the embedding and of the hidden state
		// (enorm, hnorm: read and write each).
		passes:  one.ElementwisePasses(c.tp, ep) + c.p[param.ActPasses] + 4,
		kernels: one.LayerKernels() + 2,
		small:   c.kern.SmallKernelSeconds(one),
	}
	for _, x := range m.moe {
		m.moeLayers += x.layers
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
// busiest rank's coverage of the pass's tokens, as in the target's layers; with lockstep
// data-parallel ranks the tokens of all of them, and their exchange) and shared experts, two
// all-reduces, the lm_head on one row per emitting request and the logits' gather, and the fixed
// time of its kernels. The first pass runs even when no request emits (it writes the layer's
// cache for the scheduled tokens, whose hidden states exist only in this step); the later ones
// need an emitting request. ok is false when the model has no MTP layer (or k < 1).
//
// With speculative method mtp, Step and the fast mode (StepTotals, Seq) add the same passes to
// the drafter term (mtpTotals, mtpSeq).
func (c *Model) MTP(s *StepShape, k int) (cost MTPCost, ok bool) {
	m := c.mtp
	if m == nil || k < 1 || len(s.Seqs) == 0 {
		return MTPCost{}, m != nil && k >= 1
	}
	for i := 0; i < k; i++ {
		rows := mtpRows(i, s.Tokens, s.EmitSeqs)
		if rows == 0 {
			break
		}
		var st StepCost
		var pass MTPPass
		pass.ExpertsRead, pass.ExpertRows = c.mtpPassTotals(float64(rows), float64(s.EmitSeqs), &st)
		for _, w := range s.Seqs {
			c.mtpPassAttn(w, i, &st, TermAttention, TermState)
		}
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

// mtpRows is the rows of pass i (from 0) of a step of tokens scheduled tokens and emit emitting
// requests.
func mtpRows(i, tokens, emit int) int {
	if i == 0 {
		return tokens
	}
	return emit
}

// mtpPassTotals adds the batch-wide part of one MTP pass over r rows with logits rows of the
// lm_head: eh_proj, the layer's GEMMs and routed experts, the lm_head, the logits' gather, two
// all-reduces, the elementwise traffic and the kernels' fixed time. It returns, summed over the
// layer's MoE weight sets, the routed experts the busiest rank reads and the rows each runs.
func (c *Model) mtpPassTotals(r, logits float64, st *StepCost) (read, rows float64) {
	m := c.mtp
	c.gemmTime(m.proj, r, st, TermWeights)
	for _, x := range m.dense {
		c.gemmTime(x, r, st, TermWeights)
	}
	e := r * c.moeRanks
	for j := range m.moe {
		loaded, er := m.moe[j].touch(e)
		read += loaded * m.moe[j].layers
		rows = er
	}
	c.moeTime(m.moe, e, st)
	if c.ranks > 1 {
		st.Seconds[TermAllReduce] += c.dpExchangeLayers(r, m.moeLayers)
	}
	c.gemmTime(c.lmHead, logits, st, TermWeights)
	st.Seconds[TermAllReduce] += c.gatherSeconds(logits*c.vocab*4) + c.allReduceSeconds(r, 2)
	st.Seconds[TermCompute] += c.kern.ElementwiseSeconds(m.passes * r * c.hidden * 2)
	st.Seconds[TermOverhead] += float64(m.kernels)*c.kern.KernelFixedSeconds() + m.small
	return read, rows
}

// mtpPassAttn adds request w's attention in MTP pass i (from 0): over its scheduled tokens in the
// first, over one token after them in each later one when it emits.
func (c *Model) mtpPassAttn(w SeqWork, i int, st *StepCost, term, stateTerm Term) {
	switch {
	case i == 0:
		c.attnTime(c.mtp.attn, w, st, term, stateTerm)
	case w.Emits:
		c.attnTime(c.mtp.attn, SeqWork{Start: w.Start + w.Tokens + i - 1, Tokens: 1, Decode: true}, st, term, stateTerm)
	}
}

// mtpDrafts reports whether the engine drafts with the checkpoint's MTP layer (speculative
// method mtp; k above the checkpoint's n_predict runs the layer again, as vLLM does).
func (c *Model) mtpDrafts() bool {
	return c.mtp != nil && c.specK > 0 && c.d.Engine.Speculative.Method == "mtp"
}

// mtpTotals adds the batch-wide part of the mtp method's k passes to the drafter term.
func (c *Model) mtpTotals(n *StepCounts, st *StepCost) {
	if n.Seqs == 0 {
		return
	}
	var d StepCost
	for i := 0; i < c.specK; i++ {
		rows := mtpRows(i, n.Tokens, n.EmitSeqs)
		if rows == 0 {
			break
		}
		c.mtpPassTotals(float64(rows), float64(n.EmitSeqs), &d)
	}
	for _, v := range d.Seconds {
		st.Seconds[TermDrafter] += v
	}
}

// mtpSeq is request w's share of the mtp method's passes: its attention on the MTP layer.
func (c *Model) mtpSeq(w SeqWork) float64 {
	var d StepCost
	for i := 0; i < c.specK; i++ {
		c.mtpPassAttn(w, i, &d, TermDrafter, TermDrafter)
	}
	return d.Seconds[TermDrafter]
}

// mtpStep adds the mtp method's whole drafting of a step (Step's walk).
func (c *Model) mtpStep(s *StepShape, st *StepCost) {
	n := s.Counts()
	c.mtpTotals(&n, st)
	for _, w := range s.Seqs {
		st.Seconds[TermDrafter] += c.mtpSeq(w)
	}
}

// HasMTP reports whether the deployment's checkpoint carries an MTP layer the model can cost.
func (c *Model) HasMTP() bool { return c.mtp != nil }
