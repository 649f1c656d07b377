// Package sim is the discrete-event engine: one simulated serving engine with a virtual clock, an
// event queue, the API server in front of it, the vLLM scheduler and KV cache inside it, a cost
// model for step times, and a record per request of what its client saw.
//
// Parallel deployments (build.go): a server of a dense model with data_parallel_size D stands for
// D independent replicas (Server.Replicas; its memory, layout, cost model and engines are one
// replica's, and package workload deals requests over them); pipeline stages and the lockstep
// data-parallel ranks of a MoE model run in one engine whose scheduler has the sum of the
// micro-batches' or ranks' token budgets (each request's chunk within one budget,
// scheduler.Config.MaxEntryTokens), D x max_num_seqs and D ranks' KV pools, the step priced on the
// busiest micro-batch or rank (package cost, parallel.go).
//
// Reading order: queue.go (event classes and their total order), engine.go (Engine, Config,
// RequestSpec, Record, Chunk, Hooks: Submit, Cancel, At, the Run methods, and the step loop in its
// two modes), build.go (Server: a deployment sized into a memory budget, a KV-cache layout and a
// cost model; Server.NewEngine), agree_test.go (the contract between the two modes).
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
// step (Scheduler.Schedule), asks the cost model for its duration and pushes its end (in the fast
// mode one step event may stand for several steps: see "Two modes" below). This is
// vLLM's engine-core loop (vllm/v1/engine/core.py: schedule, execute the model, update from the
// output), one step at a time, with iteration-level batching (Yu et al., "Orca", OSDI 2022). At
// equal times a finished step is applied, and the next step started, before arrivals are queued,
// and timers see both: a request that arrives exactly when a step ends waits for the following
// step, like one arriving a nanosecond later (sim/testdata/steps.txt shows it).
//
// # Async scheduling
//
// With async scheduling (Config.AsyncScheduling, from deploy.Engine.AsyncScheduling, on by
// default from the 2026 versions, see model/deploy) the engine core schedules step n+1 right after launching step n, while
// n runs on the GPU, and keeps a queue of two batches (vllm/v1/engine/core.py,
// EngineCore.step_with_batch_queue; vllm/v1/core/sched/async_scheduler.py, AsyncScheduler). A
// request that arrives while step n runs is too late for step n+1, already scheduled: it can join
// n+2 at the earliest. The engine models this at its scheduling points: when it schedules the step
// starting at t(n+1), the scheduler sees only the arrivals at or before t(n), the start of the
// step that just ended; later ones wait, in arrival order, in Engine's pending list (counted with
// the waiting requests in metrics: vLLM has them in its waiting queue) and reach the scheduler at
// the next scheduling point. On a busy engine a request's first token thus comes about the rest
// of the running step, one whole step and its own prefill step after it arrives. A request that
// reaches an idle engine starts at once (the engine schedules whenever nothing it can see is left
// to run: no lag). Without async scheduling, step n+1 is scheduled when n ends, and sees every
// request that arrived before. A request arriving at exactly t(n), processed after step n started
// (see the event order above), is visible at t(n+1) in both modes. In the fast mode, a step
// scheduled while arrivals are pending is a single step, not a span: the next scheduling point is
// where some of them become visible. The cost side of async scheduling (CPU time overlapping GPU
// time) is in package cost.
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
// # Two modes: fast (the default) and step by step
//
// Step by step (Config.StepByStep, Server.StepByStep, --step-by-step on the command line) is the
// reference: every step is built request by request (scheduler.Schedule), priced by walking its
// requests (StepCoster.Step) and applied request by request (scheduler.Update), and every delivery
// is reported to OnTokens. Its cost grows with request-steps: a trace of 100,000 requests is some
// 25 million of them.
//
// The fast mode costs events instead: arrivals, admissions, prefill chunks, first and last tokens,
// block-boundary crossings, preemptions, queued client events. It needs a SpanCoster (cost.Model);
// with any other cost model the engine runs step by step.
//
// Lazy decoders. Without speculative decoding every decoding request gets exactly one token per
// step, so its counts are a linear function of the step: the scheduler (scheduler.ScheduleLazy,
// UpdateLazy) keeps a lazy decoder's computed and output tokens as of the step it was last
// visited, and visits it again only at its touch step, the first at which scheduling or applying
// it does something else than that one token: its blocks no longer cover its next token (it
// grows them in its place in the running order, preempting the newest requests while the pool is
// short, and stays lazy), a block leaves its sliding window or a state is cached (Commit), it
// reaches max_tokens or max_model_len, or it leaves its cost segment. Touch steps are kept in a
// heap keyed by (step, admission order), so the requests due in a step are visited in running
// order; each lazy decoder between two visited requests takes one token of the budget in its
// place, so the budget, head-of-line admission and preemption of the newest request come out as
// in Schedule, which the two modes share. A lazy decoder a budget cut leaves out of a step is made
// explicit for that step.
//
// Pricing. cost.Model.StepSum prices a step from its batch totals and the sum of its requests'
// own terms (attention, state, the drafter's attention). A decode entry's terms are affine in its
// start within a segment (the attention kinds are maxima and minima of lines: roofline, sliding
// window, top-k), so the scheduler fits each request a segment (checked at three interior points
// to 1e-6, halved until it holds; its end is a touch) and keeps the lazy decoders' sum as k0 + k1
// x step, re-added from scratch as often as the set changes; prefill entries are priced exactly.
// The totals' part (cost.Model.StepTotals) is reused while the totals repeat.
//
// Spans. When a step has nothing but lazy decoders (no entry, no admission, no preemption), the
// steps after it are the same step with every decoder one token further, until the next touch. One
// event then stands for as many of them as end at or before the next queued event and the time the
// running Run call stops at (the first step may cross it: it is then a single step, as a step in
// flight is in step by step). Each step of a span is priced alone, its sum affine in the step
// index (GPU time plus k1 per step, then Wall), and rounded to the nanosecond as a single step
// would be, so a span ends when as many single steps would. Between a span's steps no event is
// queued, no timer runs and no client can observe the engine, which is what makes them one event.
//
// Speculative decoding. With k drafts a decoder emits 1 + accepted tokens, accepted drawn per
// request and step. Every decoder then stays explicit: Update draws its acceptance from the
// engine's one seeded source in batch order, exactly as step by step, so both modes emit the same
// tokens at the same steps (the fast mode still prices steps from segments and reports deliveries
// in bulk, and a decoder's visit costs a draw and a few comparisons). Lazy drafts would be
// possible: with per-position conditional acceptance a request's emissions per step are
// independent and identically distributed, so its token count after n steps is a sum with the
// n-fold convolution of one step's law, and the step at which it crosses its next block boundary
// or finishes (the events that end a span) is a first-passage time that can be drawn from a
// request's own seeded stream, one cheap draw per step or by inverting the convolution's CDF.
// That is equivalent in distribution, not draw for draw: the two modes would then differ by
// sampling noise (about 0.3 % of a 30-second benchmark cell's tokens), more than the 0.1 % they
// must agree within, unless step by step changed its draws too, and its output must stay as it
// was. So the draws stay the one source's, in the one order.
//
// What clients see. Hooks.OnTokens runs for every explicit delivery: a request's first token, its
// last, and those of steps in which it is visited; the lazy decoders' deliveries are reported in
// bulk: Hooks.OnGap (each inter-token gap, n at a time: one per step for all of them), the
// Engine.Generated counter and Engine.LastDelivery. A record's Tokens and LastToken are brought up
// to date whenever its request is visited, so hooks always see them current; Engine.Sync does it
// on demand. Run methods never stop
// inside a span, and a step in flight when they return is a single step, so Cancel, Submit and
// reads between Run calls see the engine as step by step does. RunWhile's condition is evaluated
// between events: in the fast mode not between a span's steps. KeepChunks keeps deliveries only
// step by step.
//
// The contract (agree_test.go): over a family of workloads (closed loop, Poisson, bursts, shared
// prefixes, overload, heavy preemption, a ramp, a trace, a hybrid model, speculative decoding, a
// benchmark cell) and the seed matrix, every reported number agrees with step by step within
// 0.1 % (today they are equal), and step by step reproduces, byte for byte, the output of the
// commit before the fast mode existed.
//
// # Determinism
//
// The engine is single-threaded, in both modes: no goroutines, no wall clock, no global random
// source. Time is vtime's integer nanoseconds; a step's float duration from the cost model is rounded to the
// nanosecond once (vtime.FromSeconds) and never compared as a float. The only randomness, the
// speculative-acceptance draws, comes from a math/rand/v2 PCG source seeded with Config.Seed
// (Server.NewEngine passes the caller's seed; llmbench derives it from the scenario's seed and the
// cell). Hooks and timers run inside the loop, at the simulated time of their event. The same
// inputs and seed give the same records, bit for bit; independent engines may run on different
// goroutines, which is how fits and sweeps use several cores.
package sim
