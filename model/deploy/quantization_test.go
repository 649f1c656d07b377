package deploy

import (
	"strings"
	"testing"

	"github.com/servesim/servesim/model/arch"
)

// TestApplyQuantization: online --quantization fp8 turns a bf16 checkpoint's linear layers into
// fp8 (bytes and GEMM class), leaves embeddings, lm_head, routers and norms alone; a quantized
// checkpoint accepts only its own method.
func TestApplyQuantization(t *testing.T) {
	llama := builtinHF(t, "meta-llama/Llama-3.1-8B-Instruct")
	q, err := ApplyQuantization(llama, "fp8")
	if err != nil {
		t.Fatal(err)
	}
	// 32 layers x (41,943,040 attention + 176,160,768 MLP) weights at 1 byte (one scale per tensor).
	if got, want := q.WeightBytesByDType()[arch.FP8Tensor], 32.0*(41943040+176160768); got != want {
		t.Errorf("fp8 bytes = %.0f, want %.0f", got, want)
	}
	// Embedding and lm_head 2 x 128256 x 4096 bf16, norms bf16.
	if got, want := q.WeightBytesByDType()[arch.BF16], 2*(2*128256*4096+32*8320.0); got != want {
		t.Errorf("bf16 bytes = %.0f, want %.0f", got, want)
	}
	if q.Quantization != "fp8" || q.Layers[0].FFN.DType.ComputeClass() != arch.FP8 || llama.Layers[0].FFN.DType != arch.BF16 {
		t.Errorf("quantization %q, MLP compute %s, original MLP %s; want fp8, fp8, bf16 (unchanged)", q.Quantization, q.Layers[0].FFN.DType.ComputeClass(), llama.Layers[0].FFN.DType)
	}
	if p, err := ApplyQuantization(llama, "ptpc_fp8"); err != nil || p.Layers[0].Attn.DType != arch.FP8Channel {
		t.Errorf("ptpc_fp8: %v, %v", err, p)
	}
	// MoE: experts and attention, not the router.
	mix, err := ApplyQuantization(builtinHF(t, "mistralai/Mixtral-8x7B-v0.1"), "FP8")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range mix.WeightSets() {
		want := arch.FP8Tensor
		switch w.Part {
		case arch.PartRouter, arch.PartExtra, arch.PartEmbedding, arch.PartLMHead:
			want = arch.BF16
		case arch.PartSharedExperts:
			continue // none in Mixtral
		}
		if w.DType != want {
			t.Errorf("Mixtral fp8: %v in %s, want %s", w.Part, w.DType, want)
		}
	}

	glm := builtinHF(t, "zai-org/GLM-5-FP8")
	if same, err := ApplyQuantization(glm, "fp8"); err != nil || same != glm {
		t.Errorf("fp8 on an fp8 checkpoint: %v, %v; want the model unchanged", same, err)
	}
	if _, err := ApplyQuantization(glm, "awq"); err == nil || !strings.Contains(err.Error(), "fp8 checkpoint") {
		t.Errorf("awq on an fp8 checkpoint: %v", err)
	}
	if _, err := ApplyQuantization(llama, "gptq"); err == nil || !strings.Contains(err.Error(), "not quantized") {
		t.Errorf("gptq on a bf16 checkpoint: %v", err)
	}
	g := *llama
	g.Quantization = "gptq_marlin"
	if v, err := ApplyQuantization(&g, "gptq"); err != nil || v.Quantization != "gptq" {
		t.Errorf("gptq on a gptq_marlin checkpoint: %v, %v; want the gptq kernels", v, err)
	}
	if same, err := ApplyQuantization(llama, ""); err != nil || same != llama {
		t.Errorf("no flag: %v, %v", same, err)
	}
}
