package hf

import (
	"math"
	"testing"
)

// TestEagle3Head reads testdata/eagle3-llama3.1-8b, an EAGLE-3 head for Llama-3.1-8B-Instruct
// written after the published yuhuili/EAGLE3-LLaMA3.1-Instruct-8B config (architectures
// LlamaForCausalLMEagle3, one llama layer of hidden 4,096, draft_vocab_size 32,000), and checks
// the head vLLM builds from it by hand: q/k/v read [embedding; hidden] (2 x 4,096 wide), fc
// 3 x 4,096 -> 4,096, its own lm_head over 32,000 tokens, the embedding shared with the target.
func TestEagle3Head(t *testing.T) {
	a := load(t, "eagle3-llama3.1-8b")
	if a.Family != "eagle3" || !a.SharesTargetEmbeddings || a.DraftVocab != 32000 || a.NumLayers() != 1 || a.Hidden != 4096 {
		t.Fatalf("head: family %q, shares %v, draft vocab %d, %d layers, hidden %d", a.Family, a.SharesTargetEmbeddings, a.DraftVocab, a.NumLayers(), a.Hidden)
	}
	const h = 4096
	attn := int64(2*h*(32*128) + 2*h*(8*128*2) + 32*128*h) // q, k, v over 2h; o
	mlp := int64(3 * h * 14336)
	fc := int64(3 * h * h)
	lm := int64(32000 * h)
	p := a.Params()
	if p.Attention != attn || p.DenseMLP != mlp || p.LMHead != lm || p.Embedding != 0 {
		t.Errorf("attention %d (want %d), MLP %d (want %d), lm_head %d (want %d), embedding %d (want 0, shared)", p.Attention, attn, p.DenseMLP, mlp, p.LMHead, lm, p.Embedding)
	}
	// fc and the norms are the small weights (fc: 50.3 M).
	if p.Extra < fc || p.Extra > fc+3*h {
		t.Errorf("small weights %d, want fc %d plus a few norms", p.Extra, fc)
	}
	// About 0.42 B weights in all: 67 M attention, 176 M MLP, 50 M fc, 131 M lm_head.
	if total := float64(p.Total) / 1e9; math.Abs(total-0.425) > 0.01 {
		t.Errorf("total %.3f B, want about 0.425 B", total)
	}
}
