package deploy

import (
	"fmt"
	"strings"

	"github.com/servesim/servesim/model/arch"
)

// quantFamily groups vLLM quantization methods that read the same checkpoint format: asking for
// one of them on a checkpoint resolved to another of the same family only picks other kernels.
func quantFamily(m string) string {
	switch m {
	case "gptq", "gptq_marlin", "marlin", "gptq_bitblas", "gptq_marlin_24":
		return "gptq"
	case "awq", "awq_marlin":
		return "awq"
	case "modelopt", "modelopt_fp4":
		return "modelopt"
	}
	return m
}

// ApplyQuantization applies vLLM's --quantization flag (method, "" when absent) to a model as its
// checkpoint describes it (a.Quantization is the method vLLM resolves from config.json):
//
//   - no flag: the checkpoint's own formats;
//   - a quantized checkpoint: the flag must name its method (or one of the same format, such as
//     gptq for gptq_marlin: same weights, other kernels); anything else is an error, as in vLLM
//     (ModelConfig._verify_quantization);
//   - an unquantized checkpoint: the online methods vLLM quantizes at load time. "fp8"
//     (Fp8LinearMethod without a serialized checkpoint: scaled_fp8_quant with one dynamic scale
//     per weight tensor; MoE experts one scale per expert) and "ptpc_fp8" (one scale per output
//     channel, per-token activations) turn the attention projections, dense MLPs, shared and
//     routed experts into fp8 with those scales; routers, norms, embeddings and lm_head stay
//     16-bit. GEMMs then run at the fp8 rate where the GPU has fp8 tensor cores. Other methods
//     need a quantized checkpoint and are errors.
//
// The result is a (shallow) copy when anything changes; a is not modified.
func ApplyQuantization(a *arch.Arch, method string) (*arch.Arch, error) {
	m := strings.ToLower(strings.TrimSpace(method))
	if m == "" {
		return a, nil
	}
	if a.Quantization != "" {
		if quantFamily(m) != quantFamily(a.Quantization) {
			return nil, fmt.Errorf("quantization = %q: model %q is a %s checkpoint (from its config.json); vLLM refuses a different --quantization", method, a.Name, a.Quantization)
		}
		if m == a.Quantization {
			return a, nil
		}
		v := *a
		v.Quantization = m
		return &v, nil
	}
	var d arch.DType
	switch m {
	case "fp8":
		d = arch.FP8Tensor
	case "ptpc_fp8":
		d = arch.FP8Channel
	default:
		return nil, fmt.Errorf("quantization = %q: model %q is not quantized, and %q needs a quantized checkpoint (online quantization is modelled for fp8 and ptpc_fp8)", method, a.Name, m)
	}
	v := *a
	v.Layers = append([]arch.LayerGroup(nil), a.Layers...)
	q := func(x arch.DType) arch.DType {
		if x.IsQuantized() {
			return x
		}
		return d
	}
	for i := range v.Layers {
		g := &v.Layers[i]
		g.Attn.DType = q(g.Attn.DType)
		g.FFN.DType = q(g.FFN.DType)
		g.FFN.ExpertDType = q(g.FFN.ExpertDType)
	}
	v.Quantization = m
	v.Notes = append(append([]string(nil), a.Notes...),
		fmt.Sprintf("--quantization %s: weights quantized at load time to %s (routers, norms, embeddings and lm_head stay %s)", m, d, a.EmbedDType))
	return &v, nil
}
