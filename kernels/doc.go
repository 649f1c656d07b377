// Package kernels checks servesim's kernel-level formulas (model/cost.Kernels: one GEMM, one
// elementwise kernel, one NCCL all-reduce or point-to-point transfer) against measured kernel
// profiles, and fits the GPU-level priors those profiles determine.
//
// The profiles are Microsoft Vidur's (github.com/microsoft/vidur, data/profiling): per-operator
// CUDA times of one transformer layer's non-attention operators over 1-4,096 tokens and TP 1-8
// on H100 and A100 (compute/<gpu>/<org>/<model>/mlp.csv, fp16), and NCCL all-reduce and
// send/recv times over message sizes on DGX and pairwise-NVLink nodes
// (network/<node>/*.csv). A representative subset with its provenance is in testdata/vidur.
//
// Reading order: profile.go (Load: the files into ComputeRow and NetRow), check.go (Check: every
// point predicted on the catalog GPU at its generation's priors; Summarize, Report), fit.go
// (FitCompute, FitNetwork: the priors the profiles give), write.go (tables and CSV).
//
// # What is predicted
//
//	GEMMs       cost.Kernels.GEMMSeconds: kernel_fixed_us + max(weights / (peak bandwidth x
//	            mem_bw_eff), 2 m params / (bf16 peak x gemm_eff_bf16 x m / (m + gemm_half_m)))
//	            for attn_pre_proj (hidden x (heads + 2 kv_heads) head_dim / TP), attn_post_proj,
//	            mlp_up_proj (gate and up fused when gated) and mlp_down_proj
//	elementwise cost.Kernels.ElementwiseSeconds: bytes / (bandwidth x elementwise_eff) for
//	            mlp_act, the norms, attn_rope and add
//	all-reduce  cost.Kernels.NCCLAllReduceSeconds: nccl_latency_us + 2 (n - 1) / n x bytes /
//	            (link bandwidth x nccl_bw_eff), the link being NVLink inside the node's NVLink
//	            domain and PCIe beyond it (the pairwise nodes' 4-GPU rows)
//	send/recv   cost.Kernels.SendRecvSeconds: a copy kernel's fixed time + bytes / (link x
//	            nccl_bw_eff)
//
// Multi-node rows (InfiniBand) are not predicted.
//
// # Fits
//
// FitCompute minimises the sum of absolute log errors (a median-seeking, outlier-robust loss)
// over the four GEMM operators of every model, token count and TP degree with gonum's
// Nelder-Mead, then elementwise_eff over mlp_act and input_layernorm; FitNetwork does the same
// for NCCL latency and bandwidth per node and fabric. `servesim kernels --fit DIR` prints them;
// the Hopper and Ampere priors of model/hardware were set from its output, and
// TestFitReproducesPriors keeps them so.
//
// # Determinism
//
// Pure functions on the data; the Nelder-Mead simplex has no randomness. No goroutines.
package kernels
