// Package scenario says what to simulate: the hardware, the model (and its drafter), the engine's
// flags, the benchmark protocol, the seed, and which parameter set to use. It holds the embedded
// seed run and its calibration, reads scenario and parameter files strictly, and resolves a
// scenario into a deploy.Deployment with parameters.
//
// Reading order: scenario.go (Scenario, HardwareSpec, ModelSpec; New, Default, Parse, Load,
// Validate, Build), encode.go (writing a scenario that reads back to itself), modelref.go (FindModel: where a model's description is found), vllm.go
// (ApplyVLLM: a `vllm serve` command into a scenario), params.go (ParamsFile, CalibrationKey,
// Source and how a calibration matches a deployment), resolve.go (Resolve, Resolved,
// BuiltinCalibrations).
//
// # Nothing answers quietly for something else
//
// A scenario starts empty (New): no model, no GPU, no engine flag. The [engine] table holds the
// flags as given (deploy.EngineArgs); every flag a file or a `vllm serve` command leaves out takes
// vLLM's default for the engine version, the GPU and the model when the scenario is built
// (deploy.Resolve), and the resolved scenario lists those defaults with their rules. The embedded
// seed is one scenario among others: its file gives every flag, and its own launch command,
// imported with its GPU and version, resolves to it. A scenario without a model or a GPU is an
// error. A configuration vLLM runs but the simulator does not simulate yet (pipeline or data
// parallelism, MTP, a drafter without a description, an untreated --quantization) is a
// *deploy.NotSimulatedError: Build returns it with the scenario recorded (import prints it),
// Resolve refuses it.
//
// # Models (FindModel)
//
// A model is found offline, in order: model.file / --model-config (a servesim model TOML, a
// config.json or its directory); the reference as a path (a directory holding config.json, as
// `vllm serve /path` takes it); a built-in model (hf.Builtin: the published configs embedded in the
// binary by Hugging Face id, and servesim's own descriptions by id or name); the local Hugging
// Face cache ($HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub;
// models--ORG--NAME/snapshots/REV with REV from refs/main, or refs/<--revision>, else the newest
// snapshot). Anything else is an error that says how to give the config (huggingface-cli download
// ORG/NAME config.json, or --model-config PATH). A model read from a config carries the
// max_model_len vLLM derives from it (model/hf.MaxModelLen).
//
// When the scenario does not give protocol.contexts (or protocol.prefill_only), the benchmark's
// default decode contexts (prefill-only rows) are kept as far as max_model_len allows (a note says
// which were dropped).
//
// Paths in a scenario file (model.file, a model, drafter or speculative model given as a path,
// hardware.gpu_file, params_file) are relative to the file's directory; paths on the command
// line are relative to the current directory.
//
// # Embedded data (data/)
//
//	seed.toml               the seed scenario: nvidia/GLM-5.3-Flash-NVFP4 on 4 x RTX PRO 6000
//	                        Server, vLLM 0.32.1rc1 with the measured run's launch flags (every
//	                        engine key given), the llm-inference-bench protocol (README.md)
//	seed_measured.txt       the measured matrix, the benchmark's published page as it is
//	calibrated_seed.toml    the parameters `servesim fit --uncalibrated` fits to it; a test in
//	                        calibration refits them, so the file is never edited by hand
//
// Every embedded item can be replaced by a file: --config, --measured, --params, the hardware's
// gpu_file, a model TOML or a Hugging Face config.json (--model-config).
//
// # Files
//
// Scenario and parameter files are TOML, decoded strictly through internal/tomlx: an unknown key
// is an error naming the key and its line, and a failed validation points at the line that sets
// the field. The order is defaults, then the file, then flags, then Validate, which names the bad
// field (hardware.count, protocol.concurrency[2], ...).
//
// A scenario servesim writes (Resolved.Encode, EncodeBuilt: config, import) reads back to itself:
// loaded and written again it gives the same bytes, and resolves to the same deployment and
// parameters with the same provenance. It holds what was given (engine flags as given with the
// version pinned, vLLM's defaults as comments; [params] holds only the scenario's own overrides,
// every other value a comment with its source) and writes paths relative to its own directory
// (absolute on standard output). A fit's parameter file (NewFitParamsFile) holds the values the
// fit moved and those it held fixed that are not priors, so that --params FILE gives the
// parameters the fit ended with.
//
// # Parameters (Resolve)
//
// A resolved scenario takes its parameters from, in order: a file given with --params (or the
// scenario's params_file; uncalibrated = true, or --uncalibrated, for the priors alone); else the
// built-in calibration whose key matches the deployment; else
// the deployment's priors (model/priors.Of); then the scenario's [params] overrides. Resolved.Source
// says which: "calibrated" (fitted on this GPU, model family and engine version), "transferred"
// (fitted on another GPU or version of the family: the dimensionless efficiencies carry over, the
// hardware facts are the new GPU's) or "prior". Predictions print it, so nothing answers quietly
// for something else.
//
// Everything here is deterministic: parsing and resolution read no clock and no random source,
// and Encode writes fields and parameters in a fixed order.
package scenario
