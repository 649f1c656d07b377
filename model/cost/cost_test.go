package cost

import (
	"math"
	"testing"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy/deploytest"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
)

func TestPadTokens(t *testing.T) {
	c := New(deploytest.Seed(t), param.Priors())
	for _, x := range []struct{ n, want int }{{1, 1}, {3, 4}, {5, 8}, {9, 16}, {256, 256}, {257, 264}, {600, 600}} {
		if got := c.padTokens(x.n); got != x.want {
			t.Errorf("padTokens(%d) = %d, want %d", x.n, got, x.want)
		}
	}
}

func TestStepCostMonotone(t *testing.T) {
	c := New(deploytest.Seed(t), param.Priors())
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
		if st.TotalSeconds <= prev {
			t.Errorf("decode step with %d requests %.3f ms, not above %.3f ms with fewer", n, st.TotalSeconds*1e3, prev*1e3)
		}
		prev = st.TotalSeconds
		sum := 0.0
		for _, v := range st.Seconds {
			sum += v
		}
		if math.Abs(sum-st.TotalSeconds) > 1e-12 {
			t.Errorf("terms sum to %v, total %v", sum, st.TotalSeconds)
		}
	}
	// Faster memory never makes a decode step slower.
	d := deploytest.Seed(t)
	d.Hardware.GPU.BandwidthGBps *= 1.5
	fast := New(d, param.Priors())
	var s StepShape
	s.Add(SeqWork{Start: 8192, Tokens: 8, Decode: true, Emits: true})
	if f, b := fast.Step(&s).TotalSeconds, c.Step(&s).TotalSeconds; f >= b {
		t.Errorf("1.5x bandwidth: step %.3f ms, not below %.3f ms", f*1e3, b*1e3)
	}
}

// TestAttnTimeTerms checks that attnTime puts attention and recurrent-state time into the terms its
// caller names: the seed model's linear-attention layers must not land in TermState when the
// caller asks for TermDrafter.
func TestAttnTimeTerms(t *testing.T) {
	c := New(deploytest.Seed(t), param.Priors())
	w := SeqWork{Start: 8192, Tokens: 8, Decode: true, Emits: true}
	var own, drafter StepCost
	c.attnTime(c.attn, w, &own, TermAttention, TermState)
	c.attnTime(c.attn, w, &drafter, TermDrafter, TermDrafter)
	if own.Seconds[TermAttention] <= 0 || own.Seconds[TermState] <= 0 {
		t.Fatalf("seed decode: attention %v s, state %v s: want both positive", own.Seconds[TermAttention], own.Seconds[TermState])
	}
	for term, v := range drafter.Seconds {
		if Term(term) != TermDrafter && v != 0 {
			t.Errorf("asked for TermDrafter, got %v s in %s", v, Term(term))
		}
	}
	// The same three layer groups summed in another order: equal within a few ulps.
	want := own.Seconds[TermAttention] + own.Seconds[TermState]
	if got := drafter.Seconds[TermDrafter]; math.Abs(got-want) > 1e-12*want {
		t.Errorf("TermDrafter %v s, want attention + state = %v s", got, want)
	}
}

func BenchmarkCostStepDecode32(b *testing.B) {
	c := New(deploytest.Seed(b), param.Priors())
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
	c := New(deploytest.Seed(b), param.Priors())
	var s StepShape
	s.Add(SeqWork{Start: 65536, Tokens: 8192})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Step(&s)
	}
}

// TestBlockScaledFP8Bandwidth: on Hopper, whose tensor cores do not scale blocks, a memory-bound
// GEMM of block-scaled fp8 weights streams at gemm_bw_eff_fp8 of the bandwidth a bf16 GEMM
// reaches; per-channel fp8 (scales per row, applied after the GEMM) and a Blackwell GPU at the
// parameter's value 1 stream at the full bandwidth.
func TestBlockScaledFP8Bandwidth(t *testing.T) {
	cat := hardware.BuiltinCatalog()
	h200, err := cat.Find("H200-SXM")
	if err != nil {
		t.Fatal(err)
	}
	p := param.Priors()
	p[param.GEMMBWEffFP8] = 0.7
	k := NewKernels(&h200, &p)
	if got, want := k.GEMMBandwidth(arch.FP8), 0.7*k.BandwidthBytesPerS(); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("H200 block fp8: %g B/s, want %g", got, want)
	}
	if got := k.GEMMBandwidth(arch.FP8Channel); got != k.BandwidthBytesPerS() {
		t.Errorf("H200 per-channel fp8: %g B/s, want the streaming %g", got, k.BandwidthBytesPerS())
	}
	// A decode-sized GEMM (8 rows, 7168 x 2048 fp8) is memory-bound: 1/0.7 the bf16-bandwidth time.
	m, n := 8.0, 7168.0*2048
	full := *k
	full.p[param.GEMMBWEffFP8] = 1
	a, b := k.GEMMSeconds(m, n, arch.FP8)-k.KernelFixedSeconds(), full.GEMMSeconds(m, n, arch.FP8)-k.KernelFixedSeconds()
	if math.Abs(a/b-1/0.7) > 1e-9 {
		t.Errorf("decode GEMM: %g s at 0.7, %g s at 1: ratio %g, want %g", a, b, a/b, 1/0.7)
	}
}

// TestDCPPrefillGathersContext: under decode context parallel a prefill chunk attends with the
// rank's heads over the whole context, so each cached layer first gathers the earlier context
// from the DCP ranks in 16 bits: the seed's 11 sparse-MLA layers, 1,024 bytes of latent and 33 of
// indexer key (132 per 4 tokens) a token. A chunk at position 0 gathers nothing.
func TestDCPPrefillGathersContext(t *testing.T) {
	one := New(deploytest.Seed(t), param.Priors())
	d := deploytest.Seed(t)
	d.Engine.DecodeContextParallel = 4
	four := New(d, param.Priors())
	step := func(c *Model, w SeqWork) float64 {
		var s StepShape
		s.Add(w)
		return c.Step(&s).TotalSeconds
	}
	chunk := SeqWork{Start: 24576, Tokens: 8192}
	want := 11 * four.kern.AllGatherSeconds(4, 24576*(1024+132.0/4))
	if got := step(four, chunk) - step(one, chunk); math.Abs(got/want-1) > 1e-9 {
		t.Errorf("chunk at 24,576: DCP 4 costs %.3f ms more than DCP 1, want the context's gather, %.3f ms", got*1e3, want*1e3)
	}
	if want < 1e-4 {
		t.Errorf("the gather of 24,576 tokens over 11 layers takes %.3f ms: want a visible term", want*1e3)
	}
	first := SeqWork{Start: 0, Tokens: 8192}
	if a, b := step(four, first), step(one, first); a != b {
		t.Errorf("chunk at 0: DCP 4 %.6f s, DCP 1 %.6f s, want equal (nothing to gather)", a, b)
	}
}
