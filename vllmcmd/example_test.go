package vllmcmd_test

import (
	"fmt"

	"github.com/servesim/servesim/vllmcmd"
)

func ExampleParse() {
	line := `VLLM_USE_V2_MODEL_RUNNER=1 vllm serve nvidia/GLM-5.3-Flash-NVFP4 \
	  -tp 4 --enable-expert-parallel --max-model-len 1M --kv-cache-dtype fp8 \
	  --speculative-config '{"method":"dflash","model":"incoai/GLM-5.3-Flash-DFlash2","num_speculative_tokens":7}' \
	  --host 0.0.0.0 --api-key secret --linear-backend flashinfer_cutlass --some-new-flag 3`
	words, err := vllmcmd.Split(line)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := vllmcmd.Parse(words)
	if err != nil {
		fmt.Println(err)
		return
	}
	a := r.Args
	fmt.Println("model:", r.Model)
	fmt.Println("GPUs:", a.GPUs(), "expert parallel:", *a.ExpertParallel)
	fmt.Println("max_model_len:", *a.MaxModelLen, "kv:", *a.KVCacheDType)
	fmt.Println("speculative:", a.Speculative.Method, a.Speculative.NumTokens)
	fmt.Println("not given (vLLM's defaults):", a.MaxNumSeqs == nil, a.GPUMemoryUtilization == nil)
	fmt.Printf("ignored: %q\n", r.Ignored)
	fmt.Printf("unknown: %q\n", r.Unknown)
	// Output:
	// model: nvidia/GLM-5.3-Flash-NVFP4
	// GPUs: 4 expert parallel: true
	// max_model_len: 1048576 kv: fp8
	// speculative: dflash 7
	// not given (vLLM's defaults): true true
	// ignored: ["--host 0.0.0.0" "--api-key <redacted>" "--linear-backend flashinfer_cutlass"]
	// unknown: ["--some-new-flag 3"]
}
