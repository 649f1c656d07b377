package validate

import (
	"math"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/arch"
)

// TestLlama405BFP8Recipe: Meta's FP8 checkpoint of Llama-3.1-405B keeps the self-attention and the
// first and last layers' MLPs in bf16 (Llama 3 paper, section 6.2); AMD's FP8-KV checkpoint of
// the same model quantizes every decoder linear layer. Expected bytes from the published shape
// (hidden 16384, 126 layers, 128 query and 8 KV heads of 128, intermediate 53248, vocab 128256,
// untied embeddings): attention 2 x 16384^2 + 2 x 16384 x 1024 weights per layer, MLP 3 x 16384 x
// 53248, embedding and lm_head 128256 x 16384 each.
func TestLlama405BFP8Recipe(t *testing.T) {
	const (
		attn  = 126 * (2*16384*16384 + 2*16384*1024)
		mlp   = 3 * 16384 * 53248
		embed = 2 * 128256 * 16384
	)
	near := func(got, want float64) bool { return math.Abs(got/want-1) < 0.01 }
	a, from, err := resolveModel("meta-llama/Llama-3.1-405B-FP8", "fp8")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(from, "Llama 3 paper") {
		t.Errorf("row note %q does not name the recipe's source", from)
	}
	by := a.WeightBytesByDType()
	if want := 2.0 * (attn + 2*mlp + embed); !near(by[arch.BF16], want) {
		t.Errorf("Meta FP8: bf16 bytes %.4g, want %.4g (attention, two MLPs, embeddings)", by[arch.BF16], want)
	}
	if want := 124.0 * mlp; !near(by[arch.FP8Channel], want) {
		t.Errorf("Meta FP8: fp8 row-wise bytes %.4g, want %.4g (124 MLPs)", by[arch.FP8Channel], want)
	}
	b, _, err := resolveModel("amd/Llama-3.1-405B-Instruct-FP8-KV", "fp8")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.WeightBytesByDType()[arch.BF16], 2.0*embed; !near(got, want) {
		t.Errorf("AMD FP8-KV: bf16 bytes %.4g, want %.4g (embeddings only)", got, want)
	}
}
