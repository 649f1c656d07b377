// Package priors gives a deployment's parameters their starting values and says what they rest
// on: the priors a deployment's parameters take before any calibration, the keys a calibration
// is filed under, and the provenance summary of resolved values. It sits between package deploy
// (what vLLM runs) and its users (scenario, calibration, validate, planner, report).
//
// Reading order: priors.go (Of: the generic priors of package param, the GPU generation's for
// gpu-level parameters, the engine generation's per-step CPU work), engine.go (EnginePrior,
// ForEngine: V0 before vLLM 0.8, V1 from it, with the public figures behind them), keys.go
// (LevelKeys, Keys: one key per parameter level, the GPU, the engine release series, the
// model), provenance.go (Uses: the parameter groups a deployment's predictions depend on;
// Summarize: param.Summarize over them with the GPU generation's measured data and the engine
// approximation; Unseen: what no measured run on the GPU generation covers).
//
// Main types:
//
//	EnginePrior  an engine-level parameter's prior for one engine generation, its interval and source
//	LevelKeys    the GPU, engine series and model keys of a deployment
//
// # Determinism
//
// Pure functions on values; no goroutines, no global mutable state, no randomness.
//
// # Sources
//
// The GPU-level priors and the measured data they rest on are package hardware's
// (generation.go); the engine-level ones are in engine.go with the vLLM release posts they come
// from; the others are package param's generic priors.
package priors
