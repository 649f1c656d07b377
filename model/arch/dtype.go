package arch

import (
	"fmt"
	"strconv"
	"strings"
)

// DType is a storage format for weights, KV cache or recurrent state.
//
// A weight format is an element type, optionally followed by how its scales are laid out and
// whether the GEMM dequantizes to 16 bits (see Format). The short names below are the formats
// the seed and the planner use; the qualified ones (fp8-channel, int4-g128, uint4-g32,
// bnb-nf4-dq, fp8-tensor-a16, ...) come from Hugging Face quantization configs (model/hf).
type DType string

// Known storage formats.
const (
	FP32  DType = "fp32"
	BF16  DType = "bf16"
	FP16  DType = "fp16"
	FP8   DType = "fp8"   // e4m3 with 128x128 block scales (DeepSeek-V3 style); as a KV dtype, per-tensor scales
	NVFP4 DType = "nvfp4" // 4-bit values in blocks of 16 with one fp8 scale
	MXFP4 DType = "mxfp4" // 4-bit values in blocks of 32 with one e8m0 scale
	INT8  DType = "int8"  // 8-bit integers, per-channel scales (not counted)
	INT4  DType = "int4"  // GPTQ/AWQ style, group 128 with bf16 scales
)

// Qualified weight formats with fixed names.
const (
	FP8Tensor  DType = "fp8-tensor"  // fp8, one scale per tensor (ModelOpt FP8, online --quantization fp8)
	FP8Channel DType = "fp8-channel" // fp8, one fp32 scale per output row (fbgemm_fp8, compressed-tensors "channel")
)

// Format is a weight format taken apart: what one element costs, what its scales cost, and which
// tensor-core rate its GEMMs run at.
//
// Spelling (DType strings): ELEM[-LAYOUT][-a16], where
//
//	ELEM    fp8 int8 uint8 | int4 uint4 | nvfp4 mxfp4 | bnb-nf4 bnb-fp4 bnb-int8 (and fp32 bf16 fp16)
//	        (uint: asymmetric, a zero point per group beside the scale, as GPTQ and AWQ store them)
//	LAYOUT  tensor      one scale per tensor (not counted)
//	        channel     one scale per output row (fp32 for fp8/int8, fp16 for 4-bit and uint)
//	        gN          one 16-bit scale per group of N consecutive inputs (uint: plus an N-bit zero)
//	        bMxN        one fp32 scale per M x N block
//	        dq          bitsandbytes double quantization (8-bit absmax, fp32 per 256 of them)
//	-a16    weight-only: the GEMM dequantizes to bf16 and runs at the bf16 rate (W8A16, W4A16)
//
// Defaults when LAYOUT is absent: fp8 is b128x128 (bytes rounded to 1.0002), int8 is channel with
// its scales not counted, int4 is g128, bnb 4-bit formats have fp32 absmax per 64 values.
type Format struct {
	ElemBytes float64 // bytes of one stored value
	// GroupBytesPerParam is the scale (and zero point) storage per value of fixed-size groups and
	// blocks, 0 when the scales are per row or per tensor.
	GroupBytesPerParam float64
	// RowScaleBytes is the scale storage per output row (per-channel formats), 0 otherwise.
	RowScaleBytes float64
	// Compute is the tensor-core class the GEMM runs at: BF16, FP8 or NVFP4 (FP4).
	Compute DType
}

// Format parses d. The error names the part it does not know.
func (d DType) Format() (Format, error) {
	s := string(d)
	switch d {
	case FP32:
		return Format{ElemBytes: 4, Compute: BF16}, nil
	case BF16, FP16:
		return Format{ElemBytes: 2, Compute: BF16}, nil
	case FP8:
		// 1 + 4/16384 = 1.000244 exactly; kept at the rounded 1.0002 the seed's and the
		// planner's fp8 variants were computed with.
		return Format{ElemBytes: 1, GroupBytesPerParam: 0.0002, Compute: FP8}, nil
	case INT8:
		return Format{ElemBytes: 1, Compute: FP8}, nil
	case INT4:
		return Format{ElemBytes: 0.5, GroupBytesPerParam: 2.0 / 128, Compute: BF16}, nil
	case NVFP4:
		return Format{ElemBytes: 0.5, GroupBytesPerParam: 1.0 / 16, Compute: NVFP4}, nil
	case MXFP4:
		return Format{ElemBytes: 0.5, GroupBytesPerParam: 1.0 / 32, Compute: NVFP4}, nil
	}
	weightOnly := false
	if strings.HasSuffix(s, "-a16") {
		weightOnly = true
		s = strings.TrimSuffix(s, "-a16")
	}
	var f Format
	var elem, layout string
	switch {
	case strings.HasPrefix(s, "bnb-"):
		rest := strings.TrimPrefix(s, "bnb-")
		elem, layout, _ = strings.Cut(rest, "-")
		elem = "bnb-" + elem
	default:
		elem, layout, _ = strings.Cut(s, "-")
	}
	zeroPoint := false
	switch elem {
	case "fp8", "int8":
		f = Format{ElemBytes: 1, Compute: FP8}
	case "uint8":
		f, zeroPoint = Format{ElemBytes: 1, Compute: BF16}, true
	case "int4":
		f = Format{ElemBytes: 0.5, Compute: BF16}
	case "uint4":
		f, zeroPoint = Format{ElemBytes: 0.5, Compute: BF16}, true
	case "bnb-nf4", "bnb-fp4":
		// bitsandbytes 4-bit: absmax per block of 64 values, fp32, or with double quantization
		// 8-bit absmax plus an fp32 scale per 256 of them (Dettmers et al., QLoRA, 2023).
		switch layout {
		case "":
			f = Format{ElemBytes: 0.5, GroupBytesPerParam: 4.0 / 64, Compute: BF16}
		case "dq":
			f = Format{ElemBytes: 0.5, GroupBytesPerParam: 1.0/64 + 4.0/(64*256), Compute: BF16}
		default:
			return Format{}, fmt.Errorf("dtype %q: bitsandbytes layout %q: want none or dq", d, layout)
		}
		if weightOnly {
			return Format{}, fmt.Errorf("dtype %q: bitsandbytes formats are weight-only already", d)
		}
		return f, nil
	case "nvfp4", "mxfp4":
		// 4-bit floats dequantized to bf16 (weight-only: NVFP4A16, Marlin FP4 kernels).
		if layout != "" {
			return Format{}, fmt.Errorf("dtype %q: %s takes no layout", d, elem)
		}
		f = NVFP4.mustFormat()
		if elem == "mxfp4" {
			f = MXFP4.mustFormat()
		}
		if weightOnly {
			f.Compute = BF16
		}
		return f, nil
	case "bnb-int8":
		// LLM.int8(): int8 weights with an fp32 absmax per output row (Dettmers et al. 2022).
		if layout != "" || weightOnly {
			return Format{}, fmt.Errorf("dtype %q: bnb-int8 takes no layout", d)
		}
		return Format{ElemBytes: 1, RowScaleBytes: 4, Compute: BF16}, nil
	default:
		return Format{}, fmt.Errorf("unknown dtype %q (want one of fp32, bf16, fp16, fp8, nvfp4, mxfp4, int8, int4, or a qualified weight format such as fp8-channel, int4-g128, uint4-g128, bnb-nf4-dq)", string(d))
	}
	switch {
	case layout == "":
		switch elem {
		case "fp8":
			f.GroupBytesPerParam = 4.0 / (128 * 128) // fp8-a16: block 128x128, weight-only
		case "int4", "uint4", "uint8":
			return Format{}, fmt.Errorf("dtype %q: %s needs a layout (gN or channel)", d, elem)
		}
		// int8 with -a16: per-channel scales not counted, as INT8.
	case layout == "tensor":
	case layout == "channel":
		// fp32 scales for the signed 8-bit formats (fbgemm_fp8, W8A8); 16-bit for 4-bit ones and
		// for the zero-point formats (GPTQ/AWQ store fp16 scales), plus the zero.
		f.RowScaleBytes = 4
		if f.ElemBytes < 1 || zeroPoint {
			f.RowScaleBytes = 2
		}
		if zeroPoint {
			f.RowScaleBytes += f.ElemBytes
		}
	case layout[0] == 'g':
		n, err := strconv.Atoi(layout[1:])
		if err != nil || n < 1 || n > 1<<20 {
			return Format{}, fmt.Errorf("dtype %q: group %q: want g followed by a size in 1..%d", d, layout, 1<<20)
		}
		f.GroupBytesPerParam = 2 / float64(n)
		if zeroPoint {
			f.GroupBytesPerParam += f.ElemBytes / float64(n)
		}
	case layout[0] == 'b':
		ms, ns, ok := strings.Cut(layout[1:], "x")
		m, err1 := strconv.Atoi(ms)
		n, err2 := strconv.Atoi(ns)
		if !ok || err1 != nil || err2 != nil || m < 1 || n < 1 || m > 1<<12 || n > 1<<12 {
			return Format{}, fmt.Errorf("dtype %q: block %q: want bMxN with sizes in 1..%d", d, layout, 1<<12)
		}
		if zeroPoint {
			return Format{}, fmt.Errorf("dtype %q: block scales take no zero point", d)
		}
		f.GroupBytesPerParam = 4 / float64(m*n)
	default:
		return Format{}, fmt.Errorf("dtype %q: layout %q: want tensor, channel, gN or bMxN", d, layout)
	}
	if weightOnly {
		f.Compute = BF16
	}
	return f, nil
}

// Valid reports whether d is a known format.
func (d DType) Valid() error {
	_, err := d.Format()
	return err
}

func (d DType) mustFormat() Format {
	f, err := d.Format()
	if err != nil {
		panic("model: " + err.Error())
	}
	return f
}

// BytesPerParam is the storage cost of one element with its group or block scales: NVFP4 = 0.5 +
// 1/16 (an fp8 E4M3 scale per 16 values, NVIDIA's NVFP4 format as in the Blackwell tensor cores and
// ModelOpt), MXFP4 = 0.5 + 1/32 (an E8M0 scale per 32 values, OCP Microscaling Formats v1.0),
// block-scaled fp8 = 1 + 4/(128*128) (an fp32 scale per 128x128 block, DeepSeek-V3 technical
// report section 3.3), int4 = 0.5 + 2/128 (a 16-bit scale per group of 128, GPTQ/AWQ); a zero point
// per group adds bits/8 per group. Per-row scales are not in it: see RowScaleBytes and
// WeightSet.Bytes. It panics on a format Valid rejects.
func (d DType) BytesPerParam() float64 {
	f := d.mustFormat()
	if d == FP8 {
		return 1.0002
	}
	return f.ElemBytes + f.GroupBytesPerParam
}

// RowScaleBytes is the scale storage per output row of a per-channel format (0 for the others).
func (d DType) RowScaleBytes() float64 { return d.mustFormat().RowScaleBytes }

// ComputeClass is the tensor-core peak a GEMM with weights in d runs at on hardware that supports it.
// 4-bit formats compute at the FP4 rate only where the GPU has FP4 tensor cores; the caller checks.
// Weight-only formats (int4/uint4 groups, -a16, bitsandbytes) dequantize to bf16 for the MMA.
func (d DType) ComputeClass() DType {
	f, err := d.Format()
	if err != nil {
		return BF16
	}
	return f.Compute
}

// Base is the element type of a weight format without its scale layout or weight-only suffix
// ("fp8-channel" -> "fp8", "nvfp4" -> "nvfp4", "bnb-nf4-dq" -> "bnb-nf4").
func (d DType) Base() DType {
	s := strings.TrimSuffix(string(d), "-a16")
	if rest, ok := strings.CutPrefix(s, "bnb-"); ok {
		e, _, _ := strings.Cut(rest, "-")
		return DType("bnb-" + e)
	}
	e, _, _ := strings.Cut(s, "-")
	return DType(e)
}

// IsQuantized reports whether d is narrower than 16 bits.
func (d DType) IsQuantized() bool {
	switch d {
	case FP32, BF16, FP16:
		return false
	}
	return true
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
