// Package scenario says what to simulate: the hardware, the model (and its drafter), the engine's
// flags, the benchmark protocol, the seed, and which parameter set to use. It holds the embedded
// seed run and its calibration, reads scenario and parameter files strictly, and resolves a
// scenario into a deploy.Deployment with parameters.
//
// Reading order: scenario.go (Scenario, HardwareSpec, ModelSpec; Default, Parse, Load, Validate,
// Deployment, Encode), params.go (ParamsFile, CalibrationKey, Source and how a calibration matches
// a deployment), resolve.go (Resolve, Resolved, BuiltinCalibrations).
//
// # Embedded data (data/)
//
//	seed.toml               the seed scenario: GLM-5.3-Flash NVFP4 on 4 x RTX PRO 6000 Server,
//	                        vLLM with the measured run's launch flags, the llm-inference-bench
//	                        protocol (README.md)
//	seed_measured.txt       the measured matrix, the benchmark's published page as it is
//	calibrated_seed.toml    the parameters `servesim fit --uncalibrated` fits to it; a test in
//	                        calibration refits them, so the file is never edited by hand
//
// Every embedded item can be replaced by a file: --config, --measured, --params, --gpus, a model
// TOML or a Hugging Face config.json.
//
// # Files
//
// Scenario and parameter files are TOML, decoded strictly through internal/tomlx: an unknown key
// is an error naming the key and its line, and a failed validation points at the line that sets
// the field. The order is defaults, then the file, then flags, then Validate, which names the bad
// field (hardware.count, protocol.concurrency[2], ...).
//
// # Parameters (Resolve)
//
// A resolved scenario takes its parameters from, in order: a file given with --params (or the
// scenario's params_file); else the built-in calibration whose key matches the deployment; else
// the physical priors (param.Priors); then the scenario's [params] overrides. Resolved.Source
// says which: "calibrated" (fitted on this GPU, model family and engine version), "transferred"
// (fitted on another GPU or version of the family: the dimensionless efficiencies carry over, the
// hardware facts are the new GPU's) or "prior". Predictions print it, so nothing answers quietly
// for something else.
//
// Everything here is deterministic: parsing and resolution read no clock and no random source,
// and Encode writes fields and parameters in a fixed order.
package scenario
