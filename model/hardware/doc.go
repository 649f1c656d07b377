// Package hardware is the GPU catalog: published facts about accelerators (memory, bandwidth,
// dense tensor-core peaks by format, FP4 formats, GPU-GPU link and its domain, host link, list
// price, generation), the machine a deployment runs on (Count GPUs of one kind), and the priors of
// the GPU-level parameters per GPU generation, with their sources. Nothing here is calibrated.
//
// Reading order: hardware.go (GPU, PeakFLOPS, GEMMClass, SupportsWeights, CollectiveFabric,
// Validate, Machine), generation.go (Generation, Prior, GenerationPriors, GPU.Priors), catalog.go
// (Catalog, the embedded data/gpus.toml, ParseCatalog, LoadCatalog, Merge, Find).
//
// # Priors per generation
//
// Hopper and Ampere: the GEMM, bandwidth, kernel fixed time and elementwise priors are fitted to
// Microsoft Vidur's H100 and A100 kernel profiles, the NCCL priors to its DGX and pairwise-NVLink
// network profiles (package kernels; `servesim kernels --fit`). Other generations: published
// figures with their source, or the nearest profiled generation's value with a wider interval.
// Attention: FlashAttention-2/3 papers for prefill, the memory-bound paged decode kernels for
// decode. vLLM's custom all-reduce has no public profile: an order-of-magnitude prior. The
// collectives' priors depend on the fabric a TP group uses: the GPU-GPU link inside its domain,
// PCIe beyond it (bridged PCIe pairs, PCIe-only cards).
//
// Main types:
//
//	GPU      one accelerator model, from vendor datasheets; dense peaks (no 2:4 sparsity)
//	Machine  Count GPUs of one kind
//	Catalog  the GPUs the planner and scenarios can name; a user file adds or replaces entries
//
// Formats: a GEMM whose weights are stored in fp8 or a 4-bit float format runs at that format's
// peak where the GPU has tensor cores for it (GEMMClass); otherwise vLLM runs it weight-only
// (Marlin for fp8, NVFP4 and MXFP4 on NVIDIA GPUs from Ampere on; triton MXFP4 kernels on AMD):
// the weights are read at their stored width and dequantised to bf16 in the kernel, so the math
// runs at the bf16 rate (times the dequant_eff parameter). SupportsWeights refuses only what vLLM
// refuses: NVFP4 on AMD GPUs, fp8 and fp4 on NVIDIA GPUs before Ampere.
//
// # Determinism
//
// Pure functions on values; no goroutines, no global mutable state (the embedded catalog is
// read-only and parsed afresh by BuiltinCatalog), no randomness.
package hardware
