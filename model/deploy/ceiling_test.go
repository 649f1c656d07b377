package deploy

import (
	"math"
	"testing"

	"github.com/servesim/servesim/model/hardware"
)

// TestCeiling: the physical limits of Llama-3.1-8B (bf16) on H100s, by hand. One token runs
// through 32 layers of attention (41,943,040 weights), MLP (176,160,768) and norms (8,320), the
// final norm (4,096) and the lm_head (128,256 x 4,096), 2 bytes each; the embedding table is
// indexed, not read. At 3,350 GB/s that is 4.48 ms per forward pass; every token costs 2 FLOPs
// per active weight at 989 TFLOPS (bf16).
func TestCeiling(t *testing.T) {
	g, err := hardware.BuiltinCatalog().Find("H100-SXM")
	if err != nil {
		t.Fatal(err)
	}
	llama := builtinHF(t, "meta-llama/Llama-3.1-8B-Instruct")
	dep := func(tp, dp, k int) *Deployment {
		e := DefaultEngineConfig()
		e.TensorParallel, e.DataParallel, e.MaxNumSeqs = tp, dp, 256
		if k > 0 {
			e.Speculative = Speculative{Method: "ngram", NumTokens: k}
		}
		return &Deployment{Model: llama, Hardware: hardware.Machine{GPU: g, Count: tp * dp}, Engine: e}
	}
	bytes := 2 * (32*(41943040+176160768+8320) + 4096 + 128256*4096.0)
	active := bytes / 2
	fwd := bytes / 3350e9
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-3*want {
			t.Errorf("%s = %.6g, want %.6g", what, got, want)
		}
	}
	c := dep(1, 1, 0).Ceiling()
	near("forward pass (s)", c.ForwardS, fwd)
	if fwd < 4.4e-3 || fwd > 4.6e-3 {
		t.Errorf("hand-computed forward pass %.3g ms, want about 4.5 ms", fwd*1e3)
	}
	// 256 sequences every 4.48 ms (57,000 tok/s) is below the compute limit (66,000 tok/s).
	near("output tok/s", c.OutputTokS, math.Min(256/fwd, 989e12/(2*active)))
	if c.TokensPerStep != 1 {
		t.Errorf("tokens per step %d, want 1", c.TokensPerStep)
	}
	// TP 2: the weights are read by two GPUs at once, 256 sequences every half step (114,000
	// tok/s), below the compute of two GPUs (132,000).
	c = dep(2, 1, 0).Ceiling()
	near("TP 2 forward pass", c.ForwardS, fwd/2)
	near("TP 2 output tok/s", c.OutputTokS, 512/fwd)
	// DP 2 (a dense model: two replicas): each forward pass as on one GPU, twice the sequences.
	c = dep(1, 2, 0).Ceiling()
	near("DP 2 forward pass", c.ForwardS, fwd)
	near("DP 2 output tok/s", c.OutputTokS, math.Min(512/fwd, 2*989e12/(2*active)))
	// 3 speculative tokens: up to 4 tokens per sequence per step.
	c = dep(1, 1, 3).Ceiling()
	if c.TokensPerStep != 4 {
		t.Errorf("k = 3: tokens per step %d, want 4", c.TokensPerStep)
	}
	// MoE: only top_k of the routed experts are read per token (the seed model: 8 of 288).
	seed := seedDeployment(t)
	var total float64
	for _, s := range seed.Model.WeightSets() {
		total += s.Bytes()
	}
	if a := activeBytes(seed.Model); !(a > 0 && a < total/5) {
		t.Errorf("seed model: %.3g GB of %.3g GB read per token, want a small share (top_k of the experts)", a/1e9, total/1e9)
	}
}
