package cost

import (
	"math"
	"testing"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
)

func seedDeployment(t testing.TB) *deploy.Deployment {
	t.Helper()
	a, err := arch.Builtin("glm-5.3-flash")
	if err != nil {
		t.Fatal(err)
	}
	dr, err := arch.Builtin("glm-5.3-flash-dflash2")
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.BuiltinCatalog().Find("rtx-pro-6000")
	if err != nil {
		t.Fatal(err)
	}
	e := deploy.DefaultEngineConfig()
	e.TensorParallel, e.ExpertParallel, e.MaxModelLen, e.GPUMemoryUtilization = 4, true, 1<<20, 0.92
	e.KVCacheDType, e.MaxNumSeqs = "fp8", 32
	e.Speculative = deploy.Speculative{Method: "dflash", NumTokens: 7}
	return &deploy.Deployment{Model: a, Drafter: dr, Hardware: hardware.Machine{GPU: g, Count: 4}, Engine: e}
}

func TestPadTokens(t *testing.T) {
	c := New(seedDeployment(t), param.Priors())
	for _, x := range []struct{ n, want int }{{1, 1}, {3, 4}, {5, 8}, {9, 16}, {256, 256}, {257, 264}, {600, 600}} {
		if got := c.padTokens(x.n); got != x.want {
			t.Errorf("padTokens(%d) = %d, want %d", x.n, got, x.want)
		}
	}
}

func TestStepCostMonotone(t *testing.T) {
	c := New(seedDeployment(t), param.Priors())
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
	d := seedDeployment(t)
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
	c := New(seedDeployment(t), param.Priors())
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
	c := New(seedDeployment(b), param.Priors())
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
	c := New(seedDeployment(b), param.Priors())
	var s StepShape
	s.Add(SeqWork{Start: 65536, Tokens: 8192})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Step(&s)
	}
}
