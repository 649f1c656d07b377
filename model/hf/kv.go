package hf

import "github.com/servesim/servesim/model/arch"

// KVBytesPerToken is the KV cache one token occupies on a single GPU holding every layer (no tensor
// parallel split), summed over the layers, with the cache stored in kvDType (bf16/fp16, fp8, fp32):
//
//	GQA:        kv_heads x (head_dim + v_head_dim) x bytes
//	MLA:        (kv_lora_rank + qk_rope_head_dim) x bytes
//	sparse MLA: as MLA, or vLLM's fp8_ds_mla page when kvDType is fp8 (kv_lora_rank fp8 values, one
//	            fp32 scale per 128, and max(qk_rope_head_dim, 64) bf16 rope values: 656 B for
//	            DeepSeek-V3.2), plus the lightning indexer's key (index_head_dim fp8 values and one
//	            fp32 scale per 128: 132 B) once per IndexCompress tokens
//	linear:     0 (a constant per-request state instead)
//
// Sliding-window layers count like full ones; a request holds only about Window of their tokens.
// Source: reference/vllm-engine.md section 2 (vllm/v1/kv_cache_interface.py). It panics on a dtype
// that arch.DType.BytesPerParam does not know.
func KVBytesPerToken(a *arch.Arch, kvDType arch.DType) float64 {
	b := kvDType.BytesPerParam()
	if kvDType == arch.FP8 {
		b = 1 // KV pages carry per-tensor scales, not the weights' block scales
	}
	var total float64
	for _, g := range a.Layers {
		at := g.Attn
		var per float64
		switch at.Kind {
		case arch.AttnGQA:
			v := at.VHeadDim
			if v == 0 {
				v = at.HeadDim
			}
			per = float64(at.KVHeads*(at.HeadDim+v)) * b
		case arch.AttnMLA:
			per = float64(at.KVLoraRank+at.QKRopeDim) * b
		case arch.AttnSparseMLA:
			if kvDType == arch.FP8 {
				per = float64(at.KVLoraRank + 4*ceilDiv(at.KVLoraRank, 128) + 2*max(at.QKRopeDim, 64))
			} else {
				per = float64(at.KVLoraRank+at.QKRopeDim) * b
			}
			idx := float64(at.IndexHeadDim + 4*ceilDiv(at.IndexHeadDim, 128))
			per += idx / float64(max(at.IndexCompress, 1))
		}
		total += float64(g.Count) * per
	}
	return total
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
