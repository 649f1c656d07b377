package hardware

// MeasuredData names the measured data a generation's GPU-level priors rest on: Vidur's kernel
// profiles for Hopper (H100) and Ampere (A100), fitted by servesim kernels --fit. The other
// generations' priors are published peak figures and the nearest profiled generation's values
// with wider intervals: "" (no measured data supports them; a calibration on one of their GPUs,
// such as the seed's on RTX PRO 6000 Server, does, through its calibrated or transferred values).
func (g Generation) MeasuredData() string {
	switch g {
	case GenHopper:
		return "Vidur H100 kernel profiles (GEMM, elementwise, NCCL over NVLink and PCIe)"
	case GenAmpere:
		return "Vidur A100 kernel profiles (GEMM, elementwise, NCCL over NVLink and PCIe)"
	}
	return ""
}

// Support is what the measured runs behind a generation cover: the model families (Hugging Face
// model_type), attention kinds and weight formats (the tensor-core class the weights run at: bf16,
// fp8, nvfp4) of the published runs servesim's predictions on the generation were scored on, and
// where they come from. A deployment outside it rests on physics the data never tested there, and
// its intervals widen (param.ClassUnseen).
type Support struct {
	Families []string
	Kinds    []string
	Formats  []string
	Sources  string
}

// MeasuredSupport is the generation's Support (empty for a generation with no measured runs: its
// predictions are marked unsupported as a whole). The lists name what the validation corpus and
// the seed measured, not what a calibration file of the user's may add.
func (g Generation) MeasuredSupport() Support {
	switch g {
	case GenHopper:
		return Support{Families: []string{"llama", "mixtral", "deepseek_v3"}, Kinds: []string{"gqa", "mla"}, Formats: []string{"bf16", "fp8"},
			Sources: "H100 runs of Llama-2, CodeLlama and Mixtral (inference-sim), Llama-3.1-405B FP8 on H100 and DeepSeek-R1 FP8 on H200 (dstack, vLLM V0; SGLang)"}
	case GenBlackwellPCIe:
		return Support{Families: []string{"glm_moe_dsa", "llama", "llama4", "qwen3_moe"}, Kinds: []string{"sparse_mla", "linear", "gqa"}, Formats: []string{"nvfp4"},
			Sources: "the seed (GLM-5.3-Flash NVFP4 on RTX PRO 6000 Server), its community runs on Workstation and Max-Q cards, and TensorRT-LLM's NVFP4 ratios"}
	case GenCDNA3:
		return Support{Families: []string{"llama", "deepseek_v3"}, Kinds: []string{"gqa", "mla"}, Formats: []string{"fp8"},
			Sources: "MI300X runs of Llama-3.1-405B FP8 and DeepSeek-R1 (dstack, vLLM V0)"}
	}
	return Support{}
}
