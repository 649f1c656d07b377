package hf

import (
	"math"
	"testing"

	"github.com/servesim/servesim/model/arch"
)

// convention is how a publisher counts active parameters.
type convention int

const (
	// activeLMHead: every weight a token runs through, the lm_head included, the embedding table
	// not (OpenAI's gpt-oss model card: 5.13 B = attention + 4 of 128 experts + unembedding;
	// DeepSeek: V2's 21 B and V3's 37 B come out this way).
	activeLMHead convention = iota
	// activeAll: the embedding table too (Mistral's 12.9 B for Mixtral-8x7B, Meta's 17 B for
	// Llama 4 Scout, Qwen's 3.3 B for Qwen3-30B-A3B, whose card also gives 29.9 B non-embedding
	// of 30.5 B).
	activeAll
	// activeDecoder: the decoder layers only, neither embedding nor lm_head (Zhipu: GLM-4.5's 32 B
	// and GLM-5's 40 B come out this way).
	activeDecoder
)

func activeBy(c convention, p arch.ParamCount, a *arch.Arch) int64 {
	switch c {
	case activeAll:
		return p.ActiveWithEmbedding(a)
	case activeDecoder:
		return p.ActiveNonEmbedding(a)
	}
	return p.Active
}

// TestBuiltinPublishedParams checks every built-in config.json against its publisher's parameter
// counts (total, and active per token for MoE models). A figure passes when ours is within 1 % of
// it, or, for a figure published with two significant digits, when ours rounds to it (17 B, 37 B:
// the publisher's own precision is coarser than 1 %); tol overrides both where a figure is off for
// a reason the comment gives. MTP layers are not part of the served model (DeepSeek's 671 B
// excludes the 14 B MTP module; GLM-5's 744 B likewise).
func TestBuiltinPublishedParams(t *testing.T) {
	const B = 1e9
	for _, tc := range []struct {
		id            string
		total, active float64 // published, in B; active 0 for dense models
		conv          convention
		tol           float64 // relative; 0: 1 % or rounding
		source        string
	}{
		{"meta-llama/Llama-2-7b-hf", 6.74, 0, 0, 0, "HF model page (safetensors count), 6.74 B"},
		{"meta-llama/Llama-2-70b-hf", 68.98, 0, 0, 0, "HF model page, 68.98 B (Llama 2 paper: 70 B)"},
		{"codellama/CodeLlama-34b-Instruct-hf", 33.7, 0, 0, 0, "HF model page, 33.7 B"},
		{"meta-llama/Llama-3.1-8B-Instruct", 8.03, 0, 0, 0, "HF model page, 8.03 B"},
		{"meta-llama/Llama-3.1-70B-Instruct", 70.6, 0, 0, 0, "HF model page, 70.6 B"},
		{"Qwen/Qwen3-14B", 14.8, 0, 0, 0, "Qwen3-14B model card: 14.8 B (13.2 B non-embedding)"},
		{"mistralai/Mixtral-8x7B-v0.1", 46.7, 12.9, activeAll, 0, "Mistral AI, Mixtral of experts (2023): 46.7 B total, 12.9 B per token"},
		{"mistralai/Mixtral-8x22B-v0.1", 141, 39, activeAll, 0, "Mistral AI, Cheaper, Better, Faster, Stronger (2024): 39 B active of 141 B"},
		// Meta's 109 B counts the vision tower (0.87 B, EncoderParams); text alone is 107.8 B.
		{"meta-llama/Llama-4-Scout-17B-16E-Instruct", 109, 17, activeAll, 0, "Meta Llama 4 model card: 17 B activated, 109 B total"},
		// Qwen's 3.3 B: attention 0.906 + 8 of 128 experts 1.812 + routers 0.013 + embedding and
		// lm_head 0.622 = 3.353 B, which Qwen's card gives as 3.3 B (truncated): 1.6 % apart.
		{"Qwen/Qwen3-30B-A3B", 30.5, 3.3, activeAll, 0.017, "Qwen3-30B-A3B model card: 30.5 B in total, 3.3 B activated (29.9 B non-embedding)"},
		{"Qwen/Qwen3-235B-A22B", 235, 22, activeAll, 0.012, "Qwen3-235B-A22B model card: 235 B in total, 22 B activated (22.2 B counted, rounded down by the card)"},
		{"deepseek-ai/DeepSeek-R1", 671, 37, activeLMHead, 0, "DeepSeek-V3 technical report / R1 card: 671 B total, 37 B activated"},
		{"zai-org/GLM-5-FP8", 744, 40, activeDecoder, 0, "Z.ai GLM-5 model card: 744 B parameters, 40 B active"},
		// OpenAI's card counts gpt-oss's expert biases among the experts; ours sit with the norms
		// (ExtraParamsPerLayer, always active): 0.8 % high on active.
		{"openai/gpt-oss-120b", 116.83, 5.13, activeLMHead, 0, "OpenAI gpt-oss model card: 116.83 B total, 5.13 B active"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			a, _, err := Builtin(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			p := a.Params()
			check := func(what string, got int64, want float64) {
				g := float64(got) / B
				rel := math.Abs(g-want) / want
				ok := rel <= 0.01
				if tc.tol > 0 {
					ok = rel <= tc.tol
				} else if want == math.Round(want) && want >= 10 && want < 100 {
					ok = ok || math.Round(g) == want // two significant digits
				}
				if !ok {
					t.Errorf("%s params = %.3f B, published %g B (%s): off by %.2f%%", what, g, want, tc.source, 100*rel)
				}
			}
			check("total", p.Total, tc.total)
			if tc.active > 0 {
				check("active", activeBy(tc.conv, p, a), tc.active)
			} else if a.IsMoE() {
				t.Errorf("MoE model without a published active figure")
			}
		})
	}
}

// TestPublishedParamsTable prints ours against the published figures (go test -run Table -v).
func TestPublishedParamsTable(t *testing.T) {
	ms, err := List()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		p := m.Arch.Params()
		t.Logf("%-45s total %8.3f B  active: +lm_head %7.3f B, +embedding %7.3f B, decoder only %7.3f B",
			m.Provenance.ID, float64(p.Total)/1e9, float64(p.Active)/1e9, float64(p.ActiveWithEmbedding(m.Arch))/1e9, float64(p.ActiveNonEmbedding(m.Arch))/1e9)
	}
}
