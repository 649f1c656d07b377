package arch

import (
	"fmt"
	"strings"
)

// DType is a storage format for weights, KV cache or recurrent state.
type DType string

// Known storage formats.
const (
	FP32  DType = "fp32"
	BF16  DType = "bf16"
	FP16  DType = "fp16"
	FP8   DType = "fp8"   // e4m3/e5m2 with per-tensor or 128x128 block scales
	NVFP4 DType = "nvfp4" // 4-bit values in blocks of 16 with one fp8 scale
	MXFP4 DType = "mxfp4" // 4-bit values in blocks of 32 with one e8m0 scale
	INT8  DType = "int8"
	INT4  DType = "int4" // GPTQ/AWQ style, group 128 with bf16 scales
)

// BytesPerParam is the storage cost of one element, scales included: NVFP4 = 0.5 + 1/16 (an fp8
// E4M3 scale per 16 values, NVIDIA's NVFP4 format as in the Blackwell tensor cores and ModelOpt),
// MXFP4 = 0.5 + 1/32 (an E8M0 scale per 32 values, OCP Microscaling Formats v1.0), block-scaled fp8
// = 1 + 4/(128*128) (an fp32 scale per 128x128 block, DeepSeek-V3 technical report section 3.3),
// int4 = 0.5 + 2/128 (a 16-bit scale per group of 128, GPTQ/AWQ).
func (d DType) BytesPerParam() float64 {
	switch d {
	case FP32:
		return 4
	case BF16, FP16:
		return 2
	case FP8:
		return 1.0002
	case INT8:
		return 1
	case NVFP4:
		return 0.5625
	case MXFP4:
		return 0.53125
	case INT4:
		return 0.5 + 2.0/128
	}
	panic(fmt.Sprintf("model: unknown dtype %q", string(d)))
}

// ComputeClass is the tensor-core peak a GEMM with weights in d runs at on hardware that supports it.
// 4-bit formats compute at the FP4 rate only where the GPU has FP4 tensor cores; the caller checks.
func (d DType) ComputeClass() DType {
	switch d {
	case NVFP4, MXFP4:
		return NVFP4
	case FP8, INT8:
		return FP8
	case INT4:
		return BF16 // weight-only: dequantised to bf16 for the MMA
	}
	return BF16
}

// ParseDType accepts the spellings used by vLLM, Hugging Face configs and our TOML.
func ParseDType(s string) (DType, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "fp32", "float32", "float":
		return FP32, nil
	case "bf16", "bfloat16", "auto":
		return BF16, nil
	case "fp16", "float16", "half":
		return FP16, nil
	case "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla", "float8_e4m3fn", "e4m3":
		return FP8, nil
	case "nvfp4", "modelopt_fp4", "fp4":
		return NVFP4, nil
	case "mxfp4":
		return MXFP4, nil
	case "int8", "w8a8":
		return INT8, nil
	case "int4", "awq", "gptq":
		return INT4, nil
	}
	return "", fmt.Errorf("unknown dtype %q (want one of fp32, bf16, fp16, fp8, nvfp4, mxfp4, int8, int4)", s)
}
