// Package cost is the step-time model: the wall time of one engine step on one deployment, from
// the batch's shape, split into terms that say what binds (weights read, GEMM math, attention,
// recurrent state, all-reduce, drafter, overhead, CUDA-graph padding).
//
// Reading order: shape.go (SeqWork, StepShape: what the scheduler hands over), term.go (Term,
// StepCost), kernels.go (Kernels: one GEMM, elementwise kernel or collective on one GPU, the
// formulas `servesim kernels` checks against profiles), cost.go (Model: New precomputes the
// per-GPU quantities, Step adds the terms), mtp.go (Model.MTP: the multi-token-prediction layer
// run k times). The attention kinds' formulas are in package arch, one file per kind.
//
// Main types:
//
//	Model      one deployment under one parameter set; immutable, safe to share between simulations
//	Kernels    one GPU's kernel formulas under a parameter set
//	StepShape  the requests of a step: cached tokens, new tokens, decode or prefill, emitting or not
//	StepCost   seconds by term, GPU, CPU and wall time
//	MTPCost    the MTP layer's passes in a step, with the routed experts each touches
//
// # Determinism
//
// Pure arithmetic in a fixed order: no goroutines, no global mutable state, no randomness, no
// clock. The same deployment, parameters and shape give the same bits; the order of the additions
// is part of that promise (a refactoring that reorders them changes outputs in the last bits).
//
// # Formulas
//
// Physics first, each term at a calibrated efficiency (model/param; priors per GPU generation):
//
//	GEMMs       per set of weights with m rows: max(bytes / (bandwidth x mem_bw_eff),
//	            2 m params / rate(m)) (roofline: Williams, Waterman and Patterson, CACM 2009),
//	            rate(m) = class peak x gemm_eff_<class> x m / (m + h): the class is the tensor-core
//	            format the weights run at on the GPU (bf16, fp8, fp4); a format without tensor
//	            cores on the GPU runs weight-only (vLLM's Marlin and triton kernels: its bytes, the
//	            bf16 rate x dequant_eff); h = gemm_half_m x bytes per weight / 2 (below 16 bits)
//	kernels     every GEMM and attention kernel of a step pays kernel_fixed_us once (ramp-up and
//	            tail; arch.Mixer.Kernels and FFN.MLPKernels count them): a per-step fixed cost
//	MoE         t tokens, each to top_k of E experts, with expert popularity gamma distributed
//	            (shape alpha, mean 1; alpha from routing_alpha, routing_alpha_same_prompt and
//	            same_prompt): an expert is touched with probability p = 1 - (1 + t k / (E
//	            alpha))^-alpha (the gamma's Laplace transform; uniform routing, 1 - exp(-t k / E),
//	            as alpha -> infinity); the busiest of EP ranks holding R experts reads
//	            min(R, R p + z_EP sqrt(R p (1 - p))) of them, z_EP the expected maximum of EP
//	            standard normals (Harter, Biometrika 1961), at t k / (E p) rows each
//	attention   per layer kind (package arch), for every request of the step: the roofline over
//	            attn_prefill_eff (FlashAttention-class prefill) or attn_decode_eff (paged decode)
//	all-reduce  2 per layer of rows x hidden bf16 values (Megatron-LM, Shoeybi et al. 2019), as
//	            vLLM runs them: its custom kernel up to 8 MiB where it is enabled
//	            (deploy.Deployment.CustomAllReduce: 2-8 NVLink ranks, or 2 PCIe ranks;
//	            custom_ar_latency_us + the bytes each rank reads, (n - 1) x bytes one-shot or 2 (n -
//	            1) / n x bytes two-shot, at custom_ar_bw_eff of the link), else NCCL's ring,
//	            nccl_small_latency_us below 640 KiB (its low-latency protocol) or nccl_latency_us
//	            from there + 2 (n - 1) / n x bytes at nccl_bw_eff of the link (Patarasuk and
//	            Yuan, JPDC 2009); the link is NVLink inside the GPU's NVLink domain, PCIe beyond;
//	            the lm_head's fp32 logits are all-gathered (half an all-reduce)
//	elementwise per layer and token arch.Arch.ElementwisePasses (fused add-norms, rotary,
//	            SiLU-and-mul, MoE permutation) + act_passes hidden-size bf16 vectors, at
//	            elementwise_eff of the streaming bandwidth
//	drafter     DFlash: the drafter's context K/V projections over every new token, one forward over
//	            1 + k positions per emitting request, k draft logits, its attention (README, Step time)
//	MTP         the checkpoint's MTP layer (arch.Arch.MTPLayer) k times: the first pass over every
//	            scheduled token, the others over one per emitting request; eh_proj, the layer's
//	            attention, routed and shared experts, two all-reduces, the lm_head per emitting
//	            request (Model.MTP; the scheduler decides when it runs)
//	padding     a uniform decode batch runs at the next CUDA-graph size (1, 2, 4, then multiples of
//	            8 up to max_cudagraph_capture_size; vLLM vllm/config/compilation.py)
//	CPU         cpu_step_us + cpu_per_req_us per request; with async scheduling the step takes
//	            max(GPU, CPU) (vLLM vllm/v1/core/sched/async_scheduler.py), else GPU + CPU
//
// Logit rows: every verified position of a decode entry (1 + k with k drafts; vLLM
// vllm/v1/sample/rejection_sampler.py), one row per other request that samples.
package cost
