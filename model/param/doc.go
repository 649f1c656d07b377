// Package param is the table of named, bounded parameters of servesim's memory and step-time
// models: every performance constant that is not a published fact, with a unit, a prior (default),
// bounds, a one-line physical meaning and the cost or memory term that uses it. Calibration moves
// these values and nothing else.
//
// Reading order: param.go (the IDs, the definitions, Values and the acceptance helpers).
//
// Main types:
//
//	ID          names one parameter (MemBWEff, GEMMEffBF16, AcceptTau, ...); ID.Def returns its definition
//	Def         name (the TOML key), unit, generic prior, bounds, meaning, term, whether it is fitted
//	            in log space, its level and whether a fit scans it on a grid (it sets an integer)
//	Values      one value per ID; Priors, Validate, Set/Map by name, AcceptanceCDF,
//	            LateAcceptanceCDF, MeanEmitted, RoutingConcentration
//	Origin      where one resolved value comes from (prior, calibrated, transferred, file, set,
//	            workload) with a description; Provenance one per ID
//
// # Levels
//
// Every parameter belongs to what it describes, and a fit transfers only along it:
//
//	gpu       the GPU and its links: streaming bandwidth, GEMM efficiency per class (bf16, fp8,
//	          fp4) and its small-M curve, the kernels' fixed time, weight-only dequantisation,
//	          elementwise bandwidth, prefill and decode attention, the DSA indexer and the
//	          linear-attention scan, NCCL's and vLLM's custom all-reduce. Priors per GPU
//	          generation (model/hardware.GenerationPriors); a calibration applies to its GPU and
//	          transfers to the GPUs of its generation.
//	engine    vLLM and its version: memory reserves, step overhead, CPU per step and request, the
//	          API server. Generic priors; a calibration applies to its engine version only.
//	model     the model and its text: act_passes, speculative acceptance per draft position,
//	          routing concentration (for different prompts, and for one shared prompt). A
//	          calibration applies to its model only.
//	workload  the requests: same_prompt, set by what runs (the llm-inference-bench matrix: 1).
//
// Generic priors are Def.Prior; model/priors.Of replaces the gpu-level ones by
// the GPU generation's, and scenario resolution applies calibrations level by level.
//
// The definitions are immutable: the table is built afresh by every call (there is no
// package-level variable), so Defs and ID.Def hand out copies.
//
// # Determinism
//
// Pure functions on values; no goroutines, no global mutable state, no randomness.
//
// # Formulas
//
// Speculative acceptance: with k draft tokens, a conditional acceptance p_i = p1 x
// accept_decay^(i-1) at draft position i, the unconditional rate P(accepted >= i) = prod_{j<=i} p_j
// (the per-position rates vLLM reports, vllm/v1/spec_decode/metrics.py), and the expected tokens a
// request emits per step
//
//	tau = 1 + sum_{i=1..k} P(accepted >= i)
//
// which for a constant p is (1 - p^(k+1)) / (1 - p) (Leviathan, Kalman and Matias, "Fast Inference
// from Transformers via Speculative Decoding", ICML 2023, eq. 1). The parameter is tau itself at
// k = 7 (accept_tau, the "mean acceptance length" vLLM reports, grounded in public figures); p1 is
// solved from it and the decay by bisection (FirstAcceptance). From output position
// accept_switch_tokens on, the mean acceptance length is accept_late_ratio x accept_tau; before
// output position accept_open_tokens (an output's opening) it is accept_open_ratio x accept_tau.
//
// Expert routing: the shape alpha of a gamma distribution of the experts' popularity; a batch of
// T tokens with top-k of E experts touches E (1 - (1 + T k / (E alpha))^-alpha) experts per layer
// in expectation (the gamma's Laplace transform), uniform routing as alpha -> infinity. Requests
// with one prompt route alike, so the concentration is a property of the workload as much as of
// the model: alpha = exp((1 - s) ln routing_alpha + s ln routing_alpha_same_prompt) with s =
// same_prompt (RoutingConcentration). The seed's cells share one prompt and fit the second; a
// workload of different prompts takes the first, whose prior is a moderate imbalance.
//
// # How sure a prediction is
//
// provenance.go sums a resolved Provenance up by parameter group (Summarize: calibrated,
// transferred or prior per group the deployment uses); interval.go turns it into 80 % intervals,
// prediction x/ exp(z_0.9 sigma) with sigma the root mean square of the metric's groups' class
// widths (Widths: sigma_<class>_<metric>, each with its unit, bounds, meaning and source); a
// deployment of an engine servesim approximates (Summary.ApproxEngine: vLLM V0) adds
// sigma_v0_engine_<metric> in quadrature, and a GPU whose generation no measured data supports
// (Summary.Unsupported: "PRIORS ONLY") sigma_unsupported_gpu_<metric>.
package param
