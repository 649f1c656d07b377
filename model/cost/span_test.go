package cost

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/deploy/deploytest"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
)

// denseDeployment is a small dense GQA model with alternating full and sliding-window layers on
// one H100, vLLM's defaults.
func denseDeployment(t testing.TB, window int) *deploy.Deployment {
	t.Helper()
	gqa := arch.Attention{Kind: arch.AttnGQA, Heads: 32, KVHeads: 8, HeadDim: 128}
	slide := gqa
	slide.Window = window
	a := &arch.Arch{Name: "dense", Family: "llama", Hidden: 4096, Vocab: 32000, Layers: []arch.LayerGroup{
		{Count: 16, Attn: gqa, FFN: arch.FFN{Kind: arch.FFNDense, Intermediate: 14336}},
		{Count: 16, Attn: slide, FFN: arch.FFN{Kind: arch.FFNDense, Intermediate: 14336}},
	}}
	if err := a.Normalize(); err != nil {
		t.Fatal(err)
	}
	g, err := hardware.BuiltinCatalog().Find("H100-SXM")
	if err != nil {
		t.Fatal(err)
	}
	e := deploy.DefaultEngineConfig()
	e.MaxModelLen = 32768
	return &deploy.Deployment{Model: a, Hardware: hardware.Machine{GPU: g, Count: 1}, Engine: e}
}

// TestStepSumMatchesStep checks the hook of the event-driven engine: StepSum over a batch's
// totals and the sum of Seq over its requests is Step, on random batches (decode, prefill,
// mixed, emitting or not) of the seed model (sparse MLA, linear attention, DFlash drafter, TP 4)
// and of a dense GQA model with sliding windows, with async scheduling and CUDA graphs on and
// off. The tolerance, 1e-12 relative, is float rounding: the two add the same numbers in a
// different order.
func TestStepSumMatchesStep(t *testing.T) {
	type variant struct {
		name string
		d    *deploy.Deployment
	}
	var vs []variant
	for _, async := range []bool{true, false} {
		for _, eager := range []bool{false, true} {
			for _, d := range []*deploy.Deployment{deploytest.Seed(t), denseDeployment(t, 4096)} {
				d.Engine.AsyncScheduling, d.Engine.EnforceEager = async, eager
				vs = append(vs, variant{fmt.Sprintf("%s async=%v eager=%v", d.Model.Name, async, eager), d})
			}
		}
	}
	// The other speculative methods: MTP on DeepSeek-R1 (TP 8), the dense model with an EAGLE-3
	// head of its width, a draft model (itself), ngram.
	for _, sp := range []deploy.Speculative{{Method: "mtp", NumTokens: 2}} {
		d := r1(t, 0, sp)
		vs = append(vs, variant{"deepseek-r1 " + sp.Method, d})
	}
	head := &arch.Arch{Name: "head", Family: "eagle3", Hidden: 4096, Vocab: 32000, SharesTargetEmbeddings: true, DraftVocab: 8000,
		ExtraParamsPerLayer: 3 * 4096 * 4096, Layers: []arch.LayerGroup{{Count: 1, Attn: arch.Attention{Kind: arch.AttnGQA, Heads: 32, KVHeads: 8, HeadDim: 128},
			FFN: arch.FFN{Kind: arch.FFNDense, Intermediate: 14336}}}}
	if err := head.Normalize(); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []deploy.Speculative{{Method: "eagle3", NumTokens: 4}, {Method: "draft_model", NumTokens: 3}, {Method: "ngram", NumTokens: 3}} {
		d := denseDeployment(t, 4096)
		d.Engine.Speculative = sp
		switch sp.Method {
		case "eagle3":
			d.Drafter = head
		case "draft_model":
			d.Drafter = d.Model
		}
		vs = append(vs, variant{"dense " + sp.Method, d})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, v := range vs {
		c := New(v.d, param.Priors())
		k := v.d.Engine.SpecTokens()
		for trial := 0; trial < 200; trial++ {
			var s StepShape
			for i := rng.IntN(40); i >= 0; i-- {
				switch rng.IntN(3) {
				case 0: // decode
					s.Add(SeqWork{Start: 1 + rng.IntN(200000), Tokens: 1 + k, Decode: true, Emits: true})
				case 1: // last prefill chunk
					s.Add(SeqWork{Start: rng.IntN(100000), Tokens: 1 + rng.IntN(8192), Emits: true})
				default: // partial chunk
					s.Add(SeqWork{Start: rng.IntN(100000), Tokens: 1 + rng.IntN(8192)})
				}
			}
			want := c.Step(&s)
			var per SeqSeconds
			for _, w := range s.Seqs {
				per = per.Add(c.Seq(w))
			}
			n := s.Counts()
			got := c.StepSum(&n, per)
			close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(b), 1e-9) }
			if !close(got.TotalSeconds, want.TotalSeconds) || !close(got.GPUSeconds, want.GPUSeconds) || !close(got.CPUSeconds, want.CPUSeconds) {
				t.Fatalf("%s, trial %d (%d requests): StepSum total %v gpu %v cpu %v, Step %v %v %v", v.name, trial, len(s.Seqs),
					got.TotalSeconds, got.GPUSeconds, got.CPUSeconds, want.TotalSeconds, want.GPUSeconds, want.CPUSeconds)
			}
			for term := range want.Seconds {
				if !close(got.Seconds[term], want.Seconds[term]) {
					t.Fatalf("%s, trial %d: %s %v, Step %v", v.name, trial, Term(term), got.Seconds[term], want.Seconds[term])
				}
			}
		}
	}
}
