// Package deploy is a model served by vLLM on hardware: the engine's flags, the deployment as a
// whole, and vLLM's per-GPU memory accounting and KV-cache specs.
//
// Reading order: engine.go (EngineConfig: the `vllm serve` flags that change the simulation, with
// vLLM's defaults; Speculative), deployment.go (Deployment, Validate), memory.go (weights per GPU,
// MemoryBudget, KVSpecs), quantization.go (ApplyQuantization: --quantization against the
// checkpoint, online fp8).
//
// Main types:
//
//	EngineConfig  tensor/data/expert parallelism, max_model_len, gpu_memory_utilization, kv_cache_dtype,
//	              batching limits, chunked prefill, prefix caching, CUDA graphs, async scheduling,
//	              speculative decoding; TOML keys are vLLM's flag names (the [engine] table)
//	Deployment    target model, drafter, machine, engine
//	MemoryBudget  per-GPU bytes: weights by part, activation peak, non-torch, CUDA graphs, what is left for KV
//
// # Determinism
//
// Pure functions on values; no goroutines, no global mutable state, no randomness.
//
// # Formulas
//
// Memory available for the KV cache on each GPU (vLLM vllm/v1/worker/gpu_worker.py,
// determine_available_memory):
//
//	available = memory x gpu_memory_utilization - weights - activation peak - non-torch - CUDA graphs
//	activation peak = activation_buffers x max_num_batched_tokens x hidden x 2 bytes
//
// with activation_buffers, non_torch_gib and cudagraph_gib calibrated parameters (model/param).
// Weights per GPU come from arch.Arch.WeightSets: attention, dense MLP, shared experts and
// embeddings split over TP; routers and small weights on every rank; routed experts over the EP
// ranks (the busiest holds ceil(E / EP)) or split over TP without expert parallelism. The drafter's
// weights count too.
//
// KV specs: each layer's arch.Mixer.KVSpec, identical layers merged, recurrent-state pages scaled
// by state_page_scale, the drafter's layers in its own kv cache dtype (bf16 for "auto").
package deploy
