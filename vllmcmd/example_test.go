package vllmcmd_test

import (
	"fmt"

	"github.com/servesim/servesim/model/deploy"
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
	r, err := vllmcmd.Parse(words, deploy.DefaultEngineConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	e := r.Engine
	fmt.Println("model:", r.Model)
	fmt.Println("GPUs:", e.GPUs(), "EP size:", e.EPSize())
	fmt.Println("max_model_len:", e.MaxModelLen, "kv:", e.KVCacheDType)
	fmt.Println("speculative:", e.Speculative.Method, e.SpecTokens())
	fmt.Printf("ignored: %q\n", r.Ignored)
	fmt.Printf("unknown: %q\n", r.Unknown)
	// Output:
	// model: nvidia/GLM-5.3-Flash-NVFP4
	// GPUs: 4 EP size: 4
	// max_model_len: 1048576 kv: fp8
	// speculative: dflash 7
	// ignored: ["--host 0.0.0.0" "--api-key <redacted>" "--linear-backend flashinfer_cutlass"]
	// unknown: ["--some-new-flag 3"]
}
