package priors

import (
	"strings"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
)

// EnginePrior is an engine-level parameter's prior for one engine generation, with the interval
// it is believed to lie in (a multi-source fit takes the interval as +-1 sd: calibration.sigmaOf)
// and where it comes from.
type EnginePrior struct {
	ID         param.ID
	Value      float64
	Lo, Hi     float64
	Generation string // "vLLM V0 engine (< 0.8)", "vLLM V1 engine (>= 0.8)"
	Source     string
}

// The per-step CPU work of vLLM's engine loop: a fixed part (cpu_step_us: scheduling, input
// preparation, sampling metadata, output processing, and with tensor parallel the driver's
// broadcast of the step's inputs to the other ranks) and a part per scheduled sequence
// (cpu_per_req_us: block tables, positions and sampling parameters built per sequence, output
// and detokenisation bookkeeping). The cost model adds it to the GPU step without asynchronous
// scheduling (every V0 release) and overlaps it with the GPU step with it (V1's default).
//
// V1 (0.8 on): about 0.3-1 ms plus 10-15 us per running request (vllm-engine.md, section 6,
// read from the 2026 engine loop), mostly hidden by asynchronous scheduling. The values are the
// generic priors of package param; the interval is new and only tells a multi-source fit how far
// to let them move.
//
// V0 (every release before 0.8, vllm/engine/llm_engine.py, vllm/core/scheduler.py,
// vllm/worker/model_runner.py): the scheduler walks Python SequenceGroup objects, the model
// runner builds every step's inputs in Python lists, the sampler builds SamplingMetadata per
// sequence group, and with TP > 1 the driver worker broadcasts the inputs to the other ranks
// before every step (broadcast_tensor_dict). Public figures, not tuned to any measured run:
//   - vLLM's v0.6.0 performance post (Sept 2024): on Llama-3-8B / 1 x H100 with v0.5.3 the GPU
//     was busy only about 38 % of the time; the API server took about 33 % and scheduling with
//     input preparation about 29 %. 0.6.0 overlapped output processing with the next step
//     (asynchronous output processing) and added multi-step scheduling, off by default
//     (--num-scheduler-steps 1).
//   - vLLM's V1 alpha post (Jan 2025): V1, whose main change is the rewritten engine loop
//     (persistent batch, incremental input updates, the scheduler and detokeniser off the
//     critical path), gives up to 1.7x the V0 throughput without multi-step scheduling on
//     Llama-3.1-8B / H100.
//
// An 8B model's decode step on an H100 at a batch of ~256 is ~8-10 ms of GPU time; 1.7x then
// means ~6-7 ms of serial CPU per step, and 29 % of a ~15 ms step is ~4.5 ms: about 2 ms fixed
// plus 20-30 us per sequence. Priors: cpu_step_us 2000 [1000, 4000], cpu_per_req_us 25 [12, 50]
// (order of magnitude: factor-2 intervals). step_overhead_us (the GPU-side fixed time) keeps its
// generic prior for both engines: both sample outside the CUDA graph.
const (
	v0Gen = "vLLM V0 engine (< 0.8)"
	v1Gen = "vLLM V1 engine (>= 0.8)"

	v0Src = "V0's Python scheduler, input preparation, sampling metadata and TP input broadcast run every step without overlap: " +
		"vLLM v0.6.0 post (Llama-3-8B/H100 on v0.5.3: GPU busy ~38 %, scheduling and input preparation ~29 %) and V1 alpha post " +
		"(V1 up to 1.7x V0 throughput on Llama-3.1-8B/H100 without multi-step): ~2 ms fixed plus 20-30 us per sequence; factor-2 interval"
	v1Src = "vllm-engine.md section 6 (2026 engine loop): about 0.3-1 ms plus 10-15 us per running request, overlapped with the GPU by async scheduling"
)

// ForEngine returns the engine-level priors of vLLM version v ("" is deploy.DefaultVersion) for its
// engine generation: V0 before 0.8, V1 from it. Other engines (a non-vLLM name) get none: the
// generic priors apply.
func ForEngine(engine, v string) []EnginePrior {
	if engine != "" && !strings.EqualFold(engine, "vllm") {
		return nil
	}
	if deploy.IsV0(v) {
		return []EnginePrior{
			{param.CPUStepUS, 2000, 1000, 4000, v0Gen, v0Src},
			{param.CPUPerReqUS, 25, 12, 50, v0Gen, v0Src},
		}
	}
	return []EnginePrior{
		{param.CPUStepUS, 600, 300, 1200, v1Gen, v1Src},
		{param.CPUPerReqUS, 12, 8, 20, v1Gen, v1Src},
	}
}
