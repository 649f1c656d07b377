package describe

import (
	"fmt"

	"github.com/servesim/servesim/model/deploy"
)

// Deployment is a one-line summary of what is simulated: model, GPUs, parallelism and the engine
// flags that matter.
func Deployment(d *deploy.Deployment) string {
	e := &d.Engine
	ep := ""
	if e.ExpertParallel {
		ep = "+EP"
	}
	spec := "no speculative decoding"
	if e.Speculative.Enabled() {
		spec = fmt.Sprintf("%s k=%d", e.Speculative.Method, e.Speculative.NumTokens)
	}
	par := fmt.Sprintf("TP%d", e.TensorParallel)
	if e.PipelineParallel > 1 {
		par += fmt.Sprintf(" PP%d", e.PipelineParallel)
	}
	if e.DataParallel > 1 {
		par += fmt.Sprintf(" DP%d", e.DataParallel)
	}
	mem := fmt.Sprintf("gpu-memory-utilization %.2f", e.GPUMemoryUtilization)
	if n := e.KVCacheMemoryBytes; n > 0 {
		// vLLM takes the cache's size as given and does not use the utilization.
		mem = fmt.Sprintf("kv-cache-memory-bytes %d (%.2f GiB per GPU)", n, float64(n)/(1<<30))
	}
	return fmt.Sprintf("%s on %d x %s, %s%s, kv_cache_dtype %s, max-num-seqs %d, max-num-batched-tokens %d, %s, max-model-len %d, %s",
		d.Model.Name, d.Hardware.Count, d.Hardware.GPU.Name, par, ep, e.KVCacheDType, e.MaxNumSeqs, e.MaxNumBatchedTokens,
		mem, e.MaxModelLen, spec)
}
