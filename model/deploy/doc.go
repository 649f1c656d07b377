// Package deploy is a model served by vLLM on hardware: the engine's flags, the deployment as a
// whole, and vLLM's per-GPU memory accounting and KV-cache specs.
//
// Reading order: engine.go (EngineConfig: the `vllm serve` settings that change the simulation;
// Speculative), args.go (EngineArgs: the flags as given, nil meaning "not given"), defaults.go
// (Resolve: vLLM's defaults for the flags not given, by engine version, GPU and model; Minimize),
// deployment.go (Deployment, Validate, NotSimulatedError, the data-parallel modes), memory.go (weights per GPU,
// MemoryBudget, KVSpecs), quantization.go (ApplyQuantization: --quantization against the
// checkpoint, online fp8), kernels.go (which kernels vLLM picks: CustomAllReduce,
// SparsePrefillKernel, SparseMLAHeadTile). The parameters' priors, the calibration keys and the
// provenance summary of a deployment are package model/priors'.
//
// Main types:
//
//	EngineArgs    the flags a user gave (a scenario's [engine] table, a `vllm serve` command); an
//	              absent one is vLLM's default, never another scenario's value
//	EngineConfig  tensor/data/expert parallelism, max_model_len, gpu_memory_utilization, kv_cache_dtype,
//	              batching limits, chunked prefill, prefix caching, CUDA graphs, async scheduling,
//	              speculative decoding; TOML keys are vLLM's flag names (the [engine] table)
//	Deployment    target model, drafter, machine, engine
//	MemoryBudget  per-GPU bytes: weights by part, activation peak, non-torch, CUDA graphs, what is left for KV
//
// # vLLM's defaults (Resolve)
//
// For `vllm serve` (usage context OPENAI_API_SERVER), with the version v (DefaultVersion 0.28.0 when
// not given; the 2026 rules from 0.14.0, the v0.28.0 rules from 0.28.0):
//
//	tensor/pipeline/data_parallel_size  1 / 1 / 1; enable_expert_parallel off     vllm/config/parallel.py
//	max_model_len            derived from config.json (model/hf.MaxModelLen: the smallest
//	                         length key, RoPE factor except llama3/longrope/Gemma 3, yarn's
//	                         original length x factor, 2048 when none); a larger given value is
//	                         refused unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1    vllm/config/model.py
//	gpu_memory_utilization   0.92 (2026), 0.9 before                          vllm/config/cache.py
//	max_num_batched_tokens,  >= 160 GiB (v0.28+): 16384 / 1024; >= 70 GiB and not an A100:
//	max_num_seqs             8192 / 1024; otherwise 2048 / 256; doubled by --performance-mode
//	                         throughput; data-parallel MoE with a batched all-to-all (DeepEP
//	                         low-latency, NIXL EP) 256 tokens; without chunked prefill
//	                         tokens >= max_model_len; then
//	                         tokens <= seqs x max_model_len, seqs <= tokens   vllm/engine/arg_utils.py
//	enable_chunked_prefill   on (generative decoders, hybrids too)            vllm/config/model.py
//	enable_prefix_caching    on; attention-free models off; hybrid (recurrent-state) models off
//	                         before v0.28 (PR #50991), on from it              vllm/config/model.py
//	kv_cache_dtype           auto = the model dtype; fp8 when the checkpoint prescribes an FP8 KV
//	                         cache; sparse-MLA models fp8 (2026)     vllm/utils/torch_utils.py
//	block_size               0: the attention backend's (16; 64 for MLA kernels; hybrids raised to
//	                         hold a state page), computed by package kvcache   vllm/platforms/interface.py
//	async_scheduling         on (2026) unless a speculative method other than eagle, eagle3, mtp,
//	                         dflash, ngram_gpu; off before 2026                vllm/config/vllm.py
//	enforce_eager            off (CUDA graphs, FULL_AND_PIECEWISE)             vllm/config/compilation.py
//	max_cudagraph_capture_size  min(max_num_seqs x (1 + k) x 2, 512, max_num_batched_tokens)  vllm/config/vllm.py
//	speculative k            absent: n_predict of an MTP checkpoint (num_nextn_predict_layers)
//	                         when a model is given; otherwise an error         vllm/config/speculative.py
//
// The LLM class (engine.usage_context = "llm_class": `vllm bench throughput`, offline runs) has
// its own batch tier: 16384 / 1024 from 70 GiB (not an A100), else 8192 / 256.
//
// Releases before 0.8.0 ran the V0 engine, whose defaults are in v0.go with their sources and
// what is not verified: chunked prefill only for max_model_len > 32K, 512 tokens in
// 0.6.x and 2048 later, else max(max_model_len, 2048); prefix caching off; 256 sequences; CUDA
// graphs up to 256; no asynchronous scheduling; MLA models forced to whole-prompt prefill
// without prefix caching before 0.7.4 and on ROCm.
//
// Values the user gave are kept as given (vLLM adjusts only unset ones). The release boundaries
// between the rule sets are not all verified; defaults.go says which.
//
// # Parallelism (deployment.go, memory.go; the step's pricing is in package cost, parallel.go)
//
//	tensor parallel    1/TP of the heads and dense weights per GPU, as vLLM shards them
//	pipeline parallel  P stages of contiguous layers (vLLM get_pp_indices: equal split, leftovers
//	                   to the stages before the last): the most loaded GPU holds ceil(L / P) layers'
//	                   weights and KV cache and the input embedding (StageLayers, StageFraction);
//	                   speculative decoding with P > 1 is refused (NotSimulatedError)
//	data parallel      DataParallelMode: a model without MoE layers runs D independent engine
//	                   cores, simulated as D replicas of the DP 1 engine (ReplicaDeployment;
//	                   sim.Server.Replicas); a MoE model's D ranks step together (DPLockstep):
//	                   one engine holds the D ranks (LockstepRanks), each GPU with the whole
//	                   attention and dense layers and its share of the experts (1/(TP x D) of each
//	                   without expert parallel, ceil(E / (TP x D)) whole experts with it)
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
//	activation peak = activation_buffers x T x hidden x 2 bytes          (T <= 32,768 tokens)
//	                  or the chunk's, plus per token beyond it the residual stream and the
//	                  largest unchunked intermediate of one layer, at least the sampler's
//	                  hidden states and max_num_seqs rows of fp32 logits  (ActivationPeak)
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
