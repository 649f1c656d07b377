package hardware

import "slices"

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

// MeasuredSupport is the generation's Support: what the absolute-scored rows of the shipped
// validation corpus and the embedded seed run on it (validate's TestMeasuredSupportIsTheCorpus
// holds the lists to the data), not what a calibration file of the user's may add. A generation
// without measured runs has none: everything a deployment runs there is unseen.
func (g Generation) MeasuredSupport() Support {
	switch g {
	case GenHopper:
		return Support{Families: []string{"llama", "mixtral", "deepseek_v3"}, Kinds: []string{"gqa", "mla"}, Formats: []string{"bf16", "fp8"},
			Sources: "H100 runs of Llama-2, CodeLlama and Mixtral (inference-sim), Llama-3.1-405B FP8 on H100 and DeepSeek-R1 FP8 on H200 (dstack, vLLM V0; SGLang)"}
	case GenBlackwellPCIe:
		return Support{Families: []string{"glm_moe_dsa"}, Kinds: []string{"linear", "sparse_mla"}, Formats: []string{"nvfp4"},
			Sources: "the seed (GLM-5.3-Flash NVFP4 on RTX PRO 6000 Server) and its community runs on Workstation and Max-Q cards (TensorRT-LLM's NVFP4 runs there are scored as ratios only: they tell how throughput scales, not its level)"}
	case GenCDNA3:
		return Support{Families: []string{"llama", "deepseek_v3"}, Kinds: []string{"gqa", "mla"}, Formats: []string{"fp8"},
			Sources: "MI300X runs of Llama-3.1-405B FP8 and DeepSeek-R1 (dstack, vLLM V0)"}
	}
	return Support{}
}

// Empty reports whether s covers nothing (no measured run).
func (s Support) Empty() bool {
	return len(s.Families) == 0 && len(s.Kinds) == 0 && len(s.Formats) == 0
}

// Add returns s with what o covers added, each list sorted and without repeats; Sources are
// joined with "; " when both have one.
func (s Support) Add(o Support) Support {
	merge := func(a, b []string) []string {
		out := append(append([]string(nil), a...), b...)
		slices.Sort(out)
		return slices.Compact(out)
	}
	src := s.Sources
	if o.Sources != "" && o.Sources != s.Sources {
		if src != "" {
			src += "; "
		}
		src += o.Sources
	}
	return Support{Families: merge(s.Families, o.Families), Kinds: merge(s.Kinds, o.Kinds), Formats: merge(s.Formats, o.Formats), Sources: src}
}
