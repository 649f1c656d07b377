package arch

import (
	"testing"
)

// TestKVSpecTP checks the per-GPU split: GQA with fewer KV heads than ranks keeps one head per
// rank; MLA is not split by TP.
func TestKVSpecTP(t *testing.T) {
	gqa := Attention{Kind: AttnGQA, Heads: 64, KVHeads: 8, HeadDim: 128, VHeadDim: 128}
	if s := gqa.Mixer().KVSpec(16, BF16); s.BytesPerToken != 1*256*2 {
		t.Errorf("GQA on TP 16: %v B/token, want 512", s.BytesPerToken)
	}
	mla := Attention{Kind: AttnMLA, Heads: 128, KVLoraRank: 512, QKRopeDim: 64, VHeadDim: 128}
	if s := mla.Mixer().KVSpec(8, BF16); s.BytesPerToken != 576*2 {
		t.Errorf("MLA on TP 8: %v B/token, want 1,152", s.BytesPerToken)
	}
}

func TestSumMinPos(t *testing.T) {
	for _, c := range []struct {
		s, t, k int
		want    float64
	}{
		{0, 4, 0, 1 + 2 + 3 + 4},
		{10, 2, 0, 11 + 12},
		{0, 4, 2, 1 + 2 + 2 + 2},
		{5, 3, 2, 6},
		{1, 3, 3, 2 + 3 + 3},
	} {
		if got := sumMinPos(c.s, c.t, c.k); got != c.want {
			t.Errorf("sumMinPos(%d, %d, %d) = %v, want %v", c.s, c.t, c.k, got, c.want)
		}
	}
}

// TestKinds checks the registry: every kind normalises from a minimal description, reads back as
// its own kind, and an unknown kind is an error listing the known ones.
func TestKinds(t *testing.T) {
	minimal := map[AttnKind]Attention{
		AttnGQA:       {Heads: 4, KVHeads: 2, HeadDim: 8},
		AttnMLA:       {Heads: 4, KVLoraRank: 16, VHeadDim: 8},
		AttnSparseMLA: {Heads: 4, KVLoraRank: 16, VHeadDim: 8, IndexHeads: 2, IndexHeadDim: 8, IndexTopK: 4},
		AttnLinear:    {StateHeads: 4, StateKeyDim: 8, StateValDim: 8},
	}
	for _, d := range kinds() {
		at, ok := minimal[d.kind]
		if !ok {
			t.Errorf("kind %q has no case here", d.kind)
			continue
		}
		at.Kind = d.kind
		a := Arch{Name: "x", Hidden: 32, Vocab: 10, Layers: []LayerGroup{{Count: 1, Attn: at, FFN: FFN{Kind: FFNDense, Intermediate: 64}}}}
		if err := a.Normalize(); err != nil {
			t.Errorf("%s: %v", d.kind, err)
			continue
		}
		m := a.Layers[0].Attn.Mixer()
		if m.Kind() != d.kind || a.Layers[0].Attn.ProjParams != m.ProjParams(32) || m.ProjParams(32) <= 0 {
			t.Errorf("%s: mixer kind %s, proj params %d (mixer says %d)", d.kind, m.Kind(), a.Layers[0].Attn.ProjParams, m.ProjParams(32))
		}
	}
	a := Arch{Name: "x", Hidden: 32, Vocab: 10, Layers: []LayerGroup{{Count: 1, Attn: Attention{Kind: "mamba"}, FFN: FFN{Kind: FFNDense, Intermediate: 64}}}}
	want := `model "x": layers[0].attention.kind = "mamba": want gqa, mla, sparse_mla or linear`
	if err := a.Normalize(); err == nil || err.Error() != want {
		t.Errorf("unknown kind: err = %v, want %s", err, want)
	}
}

// TestWeightSets checks the one walk over the weights against the counts it feeds: Params' total
// is the sum of the sets, and the routed-expert sets carry experts and top-k.
func TestWeightSets(t *testing.T) {
	for _, name := range BuiltinNames() {
		a, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, w := range a.WeightSets() {
			total += w.Total()
			if w.Part == PartRoutedExperts && (w.Experts < 2 || w.ActiveExperts < 1 || w.ActiveExperts > w.Experts) {
				t.Errorf("%s: routed experts %+v", name, w)
			}
			if w.Part != PartRoutedExperts && (w.Experts != 1 || w.ActiveExperts != 1) {
				t.Errorf("%s: %+v: want one copy", name, w)
			}
		}
		if c := a.Params(); c.Total != total {
			t.Errorf("%s: Params().Total = %d, sets sum to %d", name, c.Total, total)
		}
	}
}

// TestElementwiseKernels counts a DeepSeek-style layer's small kernels by hand: two fused
// add-norms; MLA's latent norms, rotary and cache write (4) and, with fp8 projections, three
// activation quantisations; an MoE with a shared expert: routing, permutation, activation,
// combine, the shared activation and add (6), with four more quantisations for fp8 experts and
// shared weights. Nothing quantises when the weights are bf16; the DSA indexer adds 4 + 2.
func TestElementwiseKernels(t *testing.T) {
	layer := func(kind AttnKind, dt DType) *Arch {
		at := Attention{Kind: kind, Heads: 128, KVLoraRank: 512, QKRopeDim: 64, QKNopeDim: 128, VHeadDim: 128, QLoraRank: 1536,
			IndexHeads: 64, IndexHeadDim: 128, IndexTopK: 2048, DType: dt}
		return &Arch{Layers: []LayerGroup{{Count: 2, Attn: at, FFN: FFN{Kind: FFNMoE, Experts: 256, TopK: 8, ExpertIntermediate: 2048,
			SharedExperts: 1, SharedIntermediate: 2048, DType: dt, ExpertDType: dt}}}}
	}
	fp8 := func(d DType) bool { return d == FP8 }
	for _, c := range []struct {
		a    *Arch
		want int
	}{
		{layer(AttnMLA, FP8), 2 * (2 + 4 + 6 + 3 + 2 + 2)},
		{layer(AttnMLA, BF16), 2 * (2 + 4 + 6)},
		{layer(AttnSparseMLA, FP8), 2 * (2 + 8 + 6 + 5 + 2 + 2)},
	} {
		if got := c.a.ElementwiseKernels(fp8); got != c.want {
			t.Errorf("%s %s: %d small kernels, want %d", c.a.Layers[0].Attn.Kind, c.a.Layers[0].Attn.DType, got, c.want)
		}
	}
}
