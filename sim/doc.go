// Package sim is the discrete-event engine: one simulated serving engine with a virtual clock, an
// event queue, the API server in front of it, the vLLM scheduler and KV cache inside it, a cost
// model for step times, and a record per request of what its client saw.
//
// Reading order: queue.go (event classes and their total order), engine.go (Engine, Config,
// RequestSpec, Record, Chunk, Hooks: Submit, Cancel, At, the Run methods, and the step loop),
// build.go (Server: a deployment sized into a memory budget, a KV-cache layout and a cost model;
// Server.NewEngine).
//
// # The event loop
//
// Three kinds of event, processed in the order (time, class, sequence), where the sequence number
// counts pushes, so the order is total and runs are reproducible:
//
//	step     the running step ends: the scheduler applies it (Scheduler.Update), and every
//	         request that sampled output receives its tokens in one delivery (several with
//	         speculative decoding); Hooks.OnTokens runs for each
//	arrival  a request reaches the scheduler's waiting queue, after the API server
//	timer    a client callback set with At (send, cancel, poll metrics)
//
// After every event, if no step is running and the scheduler has work, the engine builds the next
// step (Scheduler.Schedule), asks the cost model for its duration and pushes its end. This is
// vLLM's engine-core loop (vllm/v1/engine/core.py: schedule, execute the model, update from the
// output), one step at a time, with iteration-level batching (Yu et al., "Orca", OSDI 2022). At
// equal times a finished step is applied, and the next step started, before arrivals are queued,
// and timers see both: a request that arrives exactly when a step ends waits for the following
// step, like one arriving a nanosecond later (sim/testdata/steps.txt shows it).
//
// The API server handles prompts one at a time (tokenisation is CPU-bound in one process): a
// request sent at t reaches the scheduler at max(t, when the server is free) plus
// StepCoster.FrontendSeconds(prompt), so a burst of long prompts arrives staggered.
//
// Cancel aborts a request wherever it is: still in the API server (its arrival is dropped),
// waiting, or running (its blocks are freed at once and the running step delivers nothing for
// it). Cancelling a finished request does nothing. sim/testdata/cancel.txt walks through each
// case.
//
// A Record keeps, in virtual time: Send, Arrive, Admitted (first admission), FirstToken,
// LastToken and End, the tokens received, and engine-side facts (prefix-cache hit, prefilled
// tokens, preemptions). RunningIntegral integrates num_requests_running over time, from which the
// benchmark's average active requests come.
//
// Guards: Config.MaxEvents and Config.MaxSimTime stop a runaway run with ErrLimit, and a request
// that cannot be admitted even on an idle engine (its prompt does not fit the KV cache) stops the
// run with an error instead of spinning.
//
// # Determinism
//
// The engine is single-threaded: no goroutines, no wall clock, no global random source. Time is
// vtime's integer nanoseconds; a step's float duration from the cost model is rounded to the
// nanosecond once (vtime.FromSeconds) and never compared as a float. The only randomness, the
// speculative-acceptance draws, comes from a math/rand/v2 PCG source seeded with Config.Seed
// (Server.NewEngine passes the caller's seed; bench derives it from the scenario's seed and the
// cell). Hooks and timers run inside the loop, at the simulated time of their event. The same
// inputs and seed give the same records, bit for bit; independent engines may run on different
// goroutines, which is how fits and sweeps use several cores.
package sim
