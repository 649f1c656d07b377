// Package cost is the step-time model: the wall time of one engine step on one deployment, from
// the batch's shape, split into terms that say what binds (weights read, GEMM math, attention,
// recurrent state, all-reduce, drafter, overhead, CUDA-graph padding).
//
// Reading order: shape.go (SeqWork, StepShape: what the scheduler hands over), term.go (Term,
// StepCost), cost.go (Model: New precomputes the per-GPU quantities, Step adds the terms). The
// attention kinds' formulas are in package arch, one file per kind.
//
// Main types:
//
//	Model      one deployment under one parameter set; immutable, safe to share between simulations
//	StepShape  the requests of a step: cached tokens, new tokens, decode or prefill, emitting or not
//	StepCost   seconds by term, GPU, CPU and wall time
//
// # Determinism
//
// Pure arithmetic in a fixed order: no goroutines, no global mutable state, no randomness, no
// clock. The same deployment, parameters and shape give the same bits; the order of the additions
// is part of that promise (a refactoring that reorders them changes outputs in the last bits).
//
// # Formulas
//
// Physics first, each term at a calibrated efficiency (model/param):
//
//	GEMMs       per set of weights with m rows: max(bytes / (bandwidth x mem_bw_eff),
//	            2 m params / (peak x gemm_eff x m / (m + gemm_half_m))) (roofline: Williams,
//	            Waterman and Patterson, CACM 2009)
//	MoE         t tokens, each to top_k of E experts, with expert popularity gamma distributed
//	            (shape routing_alpha, mean 1): an expert is touched with probability
//	            p = 1 - (1 + t k / (E alpha))^-alpha (the gamma's Laplace transform; uniform
//	            routing, 1 - exp(-t k / E), as alpha -> infinity); the busiest of EP ranks holding
//	            R experts reads
//	            min(R, R p + z_EP sqrt(R p (1 - p))) of them, z_EP the expected maximum of EP
//	            standard normals (Harter, Biometrika 1961), at t k / (E p) rows each
//	attention   per layer kind (package arch), for every request of the step
//	all-reduce  2 per layer of rows x hidden bf16 values (Megatron-LM, Shoeybi et al. 2019), each
//	            alpha + bytes x beta with alpha = 2 (n - 1) hop latencies x ar_latency_mult (a ring's
//	            latency for ar_latency_mult 1; vLLM's one-shot custom all-reduce about 0.25)
//	            and beta = 2 (n - 1) / n / (link bandwidth x ar_bw_eff) (Patarasuk and Yuan, JPDC
//	            2009); the lm_head's fp32 logits are all-gathered (half an all-reduce)
//	elementwise act_passes x rows x hidden x 2 bytes per layer, memory-bound
//	drafter     DFlash: the drafter's context K/V projections over every new token, one forward over
//	            1 + k positions per emitting request, k draft logits, its attention (README, Step time)
//	padding     a uniform decode batch runs at the next CUDA-graph size (1, 2, 4, then multiples of
//	            8 up to max_cudagraph_capture_size; vLLM vllm/config/compilation.py)
//	CPU         cpu_step_us + cpu_per_req_us per request; with async scheduling the step takes
//	            max(GPU, CPU) (vLLM vllm/v1/core/sched/async_scheduler.py), else GPU + CPU
//
// Logit rows: every verified position of a decode entry (1 + k with k drafts; vLLM
// vllm/v1/sample/rejection_sampler.py), one row per other request that samples.
package cost
