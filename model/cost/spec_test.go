package cost

import (
	"math"
	"testing"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/hf"
	"github.com/servesim/servesim/model/param"
)

// r1 is DeepSeek-R1 (61 layers: 3 dense, 58 MoE, one MTP layer) on 8 x H200, TP 8.
func r1(t *testing.T, extraMoE int, spec deploy.Speculative) *deploy.Deployment {
	t.Helper()
	a, _, err := hf.Builtin("deepseek-ai/DeepSeek-R1")
	if err != nil {
		t.Fatal(err)
	}
	m := *a
	m.Layers = append([]arch.LayerGroup(nil), a.Layers...)
	for i := range m.Layers {
		if m.Layers[i].FFN.Kind == arch.FFNMoE {
			m.Layers[i].Count += extraMoE
		}
	}
	g, err := hardware.BuiltinCatalog().Find("H200")
	if err != nil {
		t.Fatal(err)
	}
	e := deploy.DefaultEngineConfig()
	e.TensorParallel, e.MaxModelLen, e.MaxNumSeqs, e.Speculative = 8, 163840, 64, spec
	return &deploy.Deployment{Model: &m, Hardware: hardware.Machine{GPU: g, Count: 8}, Engine: e}
}

// decodes is n decode entries of tokens tokens at context ctx.
func decodes(n, ctx, tokens int) *StepShape {
	var s StepShape
	for i := 0; i < n; i++ {
		s.Add(SeqWork{Start: ctx, Tokens: tokens, Decode: true, Emits: true})
	}
	return &s
}

// layerCost is the step time one more MoE layer adds to the target for the shape: its weights or
// GEMMs, elementwise traffic, two all-reduces and every request's attention on it.
func layerCost(t *testing.T, s *StepShape) float64 {
	p := param.Priors()
	base := New(r1(t, 0, deploy.Speculative{}), p).Step(s)
	more := New(r1(t, 1, deploy.Speculative{}), p).Step(s)
	if more.Seconds[TermPadding] != 0 || base.Seconds[TermPadding] != 0 {
		t.Fatalf("the shape of %d tokens is padded: choose a CUDA-graph size", s.Tokens)
	}
	return more.GPUSeconds - base.GPUSeconds
}

// TestMTPCostIsOneMoELayerPerDraft checks the mtp method's drafting (the checkpoint's MTP layer,
// mtp.go) against hand arithmetic: each of its k passes costs what one more MoE decoder layer of
// the target costs at the pass's rows (the first pass over every scheduled token, each later one
// over one token per request, attention at the drafted position), plus what the MTP module adds
// around the layer: eh_proj (2 hidden x hidden in the layer's attention weight format, whole on
// every rank), the RMSNorms of the embedding and the hidden state (two elementwise passes each,
// read and write), the target's lm_head on one row per request (vocab-parallel: vocab x hidden /
// TP bf16 weights), the fp32 logits gathered over the TP ranks, and the fixed time of the two more
// kernels (eh_proj, lm_head; the kernel fixed time of the cost model). Four requests at 8K
// decode, weights-bound (H200 at mem_bw_eff).
func TestMTPCostIsOneMoELayerPerDraft(t *testing.T) {
	const n, ctx = 4, 8192
	p := param.Priors()
	a, _, _ := hf.Builtin("deepseek-ai/DeepSeek-R1")
	h, vocab := float64(a.Hidden), float64(a.Vocab)
	g, _ := hardware.BuiltinCatalog().Find("H200")
	bw := g.BandwidthBytesPerS() * p[param.MemBWEff]
	plain := New(r1(t, 0, deploy.Speculative{}), p)
	ml, _ := a.MTPLayer()
	projDT := ml.Attn.DType
	if projDT == "" {
		projDT = arch.BF16
	}
	k := plain.Kernels()
	// Around the layer, per pass of r rows: eh_proj and the lm_head's slice (weights-bound), the
	// norms' elementwise traffic, the logits' gather (an all-gather of n x vocab fp32 values: the
	// cost model's collective primitive, checked in its own test) and two kernels' fixed time.
	around := func(r float64) float64 {
		return 2*h*h*projDT.BytesPerParam()/bw + vocab*h/8*2/bw + k.ElementwiseSeconds(4*r*h*2) +
			plain.gatherSeconds(n*vocab*4) + 2*k.KernelFixedSeconds()
	}
	drafter := func(k int) float64 {
		c := New(r1(t, 0, deploy.Speculative{Method: "mtp", NumTokens: k}), p)
		return c.Step(decodes(n, ctx, 1+k)).Seconds[TermDrafter]
	}
	// k = 1: one pass over the 4 x 2 verified tokens.
	want1 := layerCost(t, decodes(n, ctx, 2)) + around(2*n)
	if got := drafter(1); math.Abs(got-want1) > 1e-9*want1 {
		t.Errorf("k = 1: MTP drafter %.6f ms, want one MoE layer at 8 rows + eh_proj, norms, head, gather and fixed time = %.6f ms", got*1e3, want1*1e3)
	}
	// k = 3 (the layer reused): the first pass over 4 x 4 tokens, then two over one token per
	// request, attending at 8K + 4 and 8K + 5.
	want3 := layerCost(t, decodes(n, ctx, 4)) + layerCost(t, decodes(n, ctx+4, 1)) + layerCost(t, decodes(n, ctx+5, 1)) + around(4*n) + 2*around(n)
	if got := drafter(3); math.Abs(got-want3) > 1e-9*want3 {
		t.Errorf("k = 3: MTP drafter %.6f ms, want three MoE layers (16, 4, 4 rows) + 3 x (eh_proj, norms, head, gather, fixed time) = %.6f ms", got*1e3, want3*1e3)
	}
	// And what a pass costs, for the record: about one of the 58 MoE layers.
	t.Logf("MTP k = 1 at 4 x 8K: %.3f ms per step (one MoE layer %.3f ms)", drafter(1)*1e3, layerCost(t, decodes(n, ctx, 2))*1e3)
}
