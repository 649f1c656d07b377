// Package hardware is the GPU catalog: published facts about accelerators (memory, bandwidth,
// dense tensor-core peaks by format, FP4 formats, GPU-GPU link, list price), and the machine a
// deployment runs on (Count GPUs of one kind). Nothing here is calibrated.
//
// Reading order: hardware.go (GPU, PeakFLOPS, SupportsWeights, Validate, Machine), catalog.go
// (Catalog, the embedded data/gpus.toml, ParseCatalog, LoadCatalog, Merge, Find).
//
// Main types:
//
//	GPU      one accelerator model, from vendor datasheets; dense peaks (no 2:4 sparsity)
//	Machine  Count GPUs of one kind
//	Catalog  the GPUs the planner and scenarios can name; a user file adds or replaces entries
//
// Formats: a GEMM whose weights are stored in a 4-bit format runs at the FP4 peak only where the
// GPU has tensor cores for that format (NVFP4, MXFP4); otherwise PeakFLOPS falls back to the fp8
// (or bf16) rate and SupportsWeights says the checkpoint does not run natively, which the
// deployment and the planner refuse rather than invent a speed.
//
// # Determinism
//
// Pure functions on values; no goroutines, no global mutable state (the embedded catalog is
// read-only and parsed afresh by BuiltinCatalog), no randomness.
package hardware
