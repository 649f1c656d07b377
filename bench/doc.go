// Package bench runs the llm-inference-bench protocol (local-inference-lab/llm-inference-bench,
// llm_decode_bench.py: run_one_cell, stream_one_request, summarize_request_samples,
// run_benchmark) on the simulated engine and reduces each cell to the numbers the benchmark
// publishes; it also prints the capacity report and explains one cell's step time.
//
// Reading order: package protocol first (the rules as pure functions: contexts, the cell plan,
// readiness, window, statistics, statuses), then run.go (Plan, Job, RunJob, RunDecodeCell, Assemble, RunMatrix),
// capacity.go (WriteCapacity), explain.go (Explain, ExplainCell, ExplainAt, ContextTokens, Explanation).
//
// # The protocol (implemented in package protocol; summarised here)
//
// Context labels are KiB of tokens ("8K" = 8,192). A context is fitted to
// room = max_model_len - max_output - margin; one up to TrimSlack above the room is trimmed to it,
// a larger one is an error. Plan lists the jobs in matrix order: one prefill row per context (plus
// the prefill-only rows, output 1 token), then one decode cell per context and concurrency C.
//
//   - Prefill row: one cold "scout" request with the context's prompt and max_tokens = 1 on an idle
//     server; prefill tok/s = prompt tokens / TTFT, TTFT from send to first token.
//   - Decode cell: the scout first (it fills the prefix cache with the prompt), then C streams of
//     the identical prompt with max_tokens = max_output, each restarted when it finishes (closed
//     loop). The readiness gate is polled every PollS: no request waiting, C running, every stream
//     has a token, held for StableS. With C > max_num_seqs it can never pass, and the window starts
//     at the readiness timeout (the fitted parameter ready_timeout_s). The window lasts DurationS;
//     then every stream is cancelled. Total tok/s = tokens delivered inside the window / window
//     length; TTFT = the median over every stream request of first token - send; time between
//     tokens = the median over requests of (last - first) / (tokens - 1), per-request tok/s =
//     1000 / that; average active = the time average of num_requests_running over the window.
//     Status: Requests queued when fewer than C requests ever ran at once, else Valid.
//   - Over capacity: a cell is not run when C x (context + max_output) > kv_cache_size_tokens, C
//     the requested concurrency and kv_cache_size_tokens what the server reports (kvcache.Layout).
//
// Every job starts from a fresh engine (Server.NewEngine), so jobs are independent and can run in
// any order or in parallel outside the core: what a real run carries from cell to cell is the
// prefix cache of the context's prompt, which the job's own scout recreates, and the benchmark's
// hidden warm-up uses a distinct prefix. README.md ("Known discrepancies on the seed") says where
// the protocol as simulated and the seed's numbers part.
//
// Explain does not simulate: it asks the cost model for the steady decode step of min(C,
// max_num_seqs) requests, each verifying 1 + k tokens at the cell's context, and for a prefill
// chunk taken at the middle of a cold prompt beside the other requests' decodes (chunk = budget -
// (running - 1) x (1 + k)), split into the cost terms. Per-request tok/s = tau / decode step time,
// tau the expected tokens emitted per step (scheduler's acceptance). WriteCapacity prints the
// per-GPU memory budget, the KV-cache layout and, per context, the largest concurrency the
// Over-capacity rule admits. ExplainCell (the explain command) fits the context as the matrix does
// (a row label such as "1019K" is that row's tokens, another context follows the protocol's fitting
// rule) and applies the matrix's capacity rule: an Over capacity cell is marked so, and its steps
// are those of the streams the KV cache holds (min(C, max_num_seqs, kv / (context + max output))).
//
// workload's "bench" kind runs the same decode cell through RunDecodeCell, the one
// implementation of it, and keeps the full latency distributions.
//
// # Determinism
//
// Everything in this package is single-threaded. Each job's engine is seeded with JobSeed(seed,
// job), a function of the run's seed (the scenario's) and the job's tokens, concurrency and phase,
// so a cell's result does not depend on which jobs ran before it or on which goroutine a caller
// runs it. RunMatrix runs the jobs in order on the calling goroutine; calibration and planner run
// them on worker goroutines and place results by job index. The same server, protocol and seed
// give a byte-identical matrix.
package bench
