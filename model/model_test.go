package model

import (
	"math"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/param"
)

func seedDeployment(t testing.TB) *Deployment {
	t.Helper()
	a, err := BuiltinArch("glm-5.3-flash")
	if err != nil {
		t.Fatal(err)
	}
	dr, err := BuiltinArch("glm-5.3-flash-dflash2")
	if err != nil {
		t.Fatal(err)
	}
	g, err := BuiltinCatalog().Find("rtx-pro-6000")
	if err != nil {
		t.Fatal(err)
	}
	e := DefaultEngine()
	e.TensorParallel, e.ExpertParallel, e.MaxModelLen, e.GPUMemoryUtilization = 4, true, 1<<20, 0.92
	e.KVCacheDType, e.MaxNumSeqs = "fp8", 32
	e.Speculative = Speculative{Method: "dflash", NumTokens: 7}
	return &Deployment{Model: a, Drafter: dr, Hardware: Hardware{GPU: g, Count: 4}, Engine: e}
}

func TestGLMParams(t *testing.T) {
	d := seedDeployment(t)
	c := d.Model.Params()
	// reference/glm-5.3-flash.md: routed experts 42 x 288 x 25.2 M = about 304 B, total about
	// 313 B, active about 16 B per token.
	if got := float64(c.RoutedExperts) / 1e9; math.Abs(got-304.4) > 1 {
		t.Errorf("routed experts %.1f B, want about 304.4 B", got)
	}
	if got := float64(c.Total) / 1e9; math.Abs(got-313) > 3 {
		t.Errorf("total %.1f B, want about 313 B", got)
	}
	if got := float64(c.Active) / 1e9; got < 15 || got > 18 {
		t.Errorf("active %.1f B, want about 16 B", got)
	}
	// NVFP4 experts under EP 4: 304.4 B x 0.5625 / 4 = about 42.8 GB per GPU.
	w := d.WeightsPerGPU()
	if got := w.RoutedExperts / 1e9; math.Abs(got-42.8) > 0.5 {
		t.Errorf("routed experts per GPU %.2f GB, want about 42.8 GB", got)
	}
}

func TestKVSpecs(t *testing.T) {
	d := seedDeployment(t)
	p := param.Priors()
	specs := d.KVSpecs(&p)
	byName := map[string]KVSpec{}
	for _, s := range specs {
		byName[s.Name] = s
	}
	// fp8_ds_mla: 512 latent + 16 scale + 128 rope bytes, plus a 132-byte indexer key per 4 tokens.
	if s := byName["sparse_mla"]; s.Layers != 11 || s.BytesPerToken != 656+33 {
		t.Errorf("sparse MLA spec %+v, want 11 layers x 689 B/token", s)
	}
	// KDA state per GPU: 16 heads x 128 x 128 x 4 B + conv 3 x 6,144 x 2 B.
	if s := byName["linear"]; s.Layers != 34 || s.StateBytes != 16*128*128*4+3*6144*2 {
		t.Errorf("linear spec %+v, want 34 layers x 1,085,440 B", s)
	}
	// Drafter GQA bf16: 8 KV heads / 4 ranks x 256 x 2 B, sliding 2,048.
	if s := byName["drafter_gqa"]; s.Layers != 5 || s.BytesPerToken != 1024 || s.Kind != SpecSliding {
		t.Errorf("drafter spec %+v, want 5 sliding layers x 1,024 B/token", s)
	}
	// GQA with fewer KV heads than ranks keeps one head per rank; MLA is not split by TP.
	gqa := Attention{Kind: AttnGQA, Heads: 64, KVHeads: 8, HeadDim: 128, VHeadDim: 128}
	if s := kvSpecFor(&gqa, 16, BF16, ""); s.BytesPerToken != 1*256*2 {
		t.Errorf("GQA on TP 16: %v B/token, want 512", s.BytesPerToken)
	}
	mla := Attention{Kind: AttnMLA, Heads: 128, KVLoraRank: 512, QKRopeDim: 64, VHeadDim: 128}
	if s := kvSpecFor(&mla, 8, BF16, ""); s.BytesPerToken != 576*2 {
		t.Errorf("MLA on TP 8: %v B/token, want 1,152", s.BytesPerToken)
	}
}

func TestDeploymentValidate(t *testing.T) {
	d := seedDeployment(t)
	if err := d.Validate(); err != nil {
		t.Fatalf("seed deployment: %v", err)
	}
	bad := *d
	bad.Engine.TensorParallel = 3
	bad.Hardware.Count = 3
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "does not divide") {
		t.Errorf("TP 3: err = %v, want a heads-divisibility error", err)
	}
	bad = *d
	bad.Hardware.Count = 8
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "hardware.count = 8") {
		t.Errorf("count mismatch: err = %v", err)
	}
	bad = *d
	h100, _ := BuiltinCatalog().Find("H100-SXM")
	bad.Hardware.GPU = h100
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "nvfp4") {
		t.Errorf("NVFP4 on H100: err = %v, want a format error", err)
	}
}

func TestMemoryFitError(t *testing.T) {
	d := seedDeployment(t)
	d.Engine.GPUMemoryUtilization = 0.4
	p := param.Priors()
	m := d.Memory(&p)
	msg := m.FitError()
	if m.AvailableKV > 0 || !strings.Contains(msg, "GiB per GPU") {
		t.Errorf("at 40 %% utilisation: available %.1f GiB, message %q: want a does-not-fit message", m.AvailableKV/(1<<30), msg)
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

func TestPadTokens(t *testing.T) {
	c := NewCostModel(seedDeployment(t), param.Priors())
	for _, x := range []struct{ n, want int }{{1, 1}, {3, 4}, {5, 8}, {9, 16}, {256, 256}, {257, 264}, {600, 600}} {
		if got := c.padTokens(x.n); got != x.want {
			t.Errorf("padTokens(%d) = %d, want %d", x.n, got, x.want)
		}
	}
}

func TestStepCostMonotone(t *testing.T) {
	c := NewCostModel(seedDeployment(t), param.Priors())
	step := func(n, ctx int) StepCost {
		var s StepShape
		for i := 0; i < n; i++ {
			s.Add(SeqWork{Start: ctx, Tokens: 8, Decode: true, Emits: true})
		}
		return c.Step(&s)
	}
	prev := 0.0
	for _, n := range []int{1, 2, 4, 8, 16, 32} {
		st := step(n, 8192)
		if st.Total <= prev {
			t.Errorf("decode step with %d requests %.3f ms, not above %.3f ms with fewer", n, st.Total*1e3, prev*1e3)
		}
		prev = st.Total
		sum := 0.0
		for _, v := range st.Terms {
			sum += v
		}
		if math.Abs(sum-st.Total) > 1e-12 {
			t.Errorf("terms sum to %v, total %v", sum, st.Total)
		}
	}
	// Faster memory never makes a decode step slower.
	d := seedDeployment(t)
	d.Hardware.GPU.BandwidthGBps *= 1.5
	fast := NewCostModel(d, param.Priors())
	var s StepShape
	s.Add(SeqWork{Start: 8192, Tokens: 8, Decode: true, Emits: true})
	if f, b := fast.Step(&s).Total, c.Step(&s).Total; f >= b {
		t.Errorf("1.5x bandwidth: step %.3f ms, not below %.3f ms", f*1e3, b*1e3)
	}
}

func BenchmarkCostStepDecode32(b *testing.B) {
	c := NewCostModel(seedDeployment(b), param.Priors())
	var s StepShape
	for i := 0; i < 32; i++ {
		s.Add(SeqWork{Start: 32768, Tokens: 8, Decode: true, Emits: true})
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Step(&s)
	}
}

func BenchmarkCostStepPrefill(b *testing.B) {
	c := NewCostModel(seedDeployment(b), param.Priors())
	var s StepShape
	s.Add(SeqWork{Start: 65536, Tokens: 8192})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Step(&s)
	}
}

// TestAttnTimeTerms checks that attnTime puts attention and recurrent-state time into the terms its
// caller names: the seed model's linear-attention layers must not land in TermState when the
// caller asks for TermDrafter.
func TestAttnTimeTerms(t *testing.T) {
	c := NewCostModel(seedDeployment(t), param.Priors())
	w := SeqWork{Start: 8192, Tokens: 8, Decode: true, Emits: true}
	var own, drafter StepCost
	c.attnTime(&c.attn, w, &own, TermAttention, TermState)
	c.attnTime(&c.attn, w, &drafter, TermDrafter, TermDrafter)
	if own.Terms[TermAttention] <= 0 || own.Terms[TermState] <= 0 {
		t.Fatalf("seed decode: attention %v s, state %v s: want both positive", own.Terms[TermAttention], own.Terms[TermState])
	}
	for term, v := range drafter.Terms {
		if Term(term) != TermDrafter && v != 0 {
			t.Errorf("asked for TermDrafter, got %v s in %s", v, Term(term))
		}
	}
	// The same three layer groups summed in another order: equal within a few ulps.
	want := own.Terms[TermAttention] + own.Terms[TermState]
	if got := drafter.Terms[TermDrafter]; math.Abs(got-want) > 1e-12*want {
		t.Errorf("TermDrafter %v s, want attention + state = %v s", got, want)
	}
}
