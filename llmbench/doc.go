// Package llmbench runs the llm-inference-bench protocol (local-inference-lab/llm-inference-bench,
// llm_decode_bench.py: run_one_cell, stream_one_request, summarize_request_samples,
// run_benchmark) on the simulated engine and reduces each cell to the numbers the benchmark
// publishes; it also prints the capacity report and explains one cell's step time.
//
// Reading order: package protocol first (the rules as pure functions: contexts, the cell plan and
// the order the tool runs it in, readiness, window, statistics, statuses), then run.go (Plan,
// RunMatrix, Session with Warmup, Prefill and Cell, CellRun), capacity.go (WriteCapacity),
// explain.go (Explain, ExplainCell, ExplainAt, ContextTokens,
// Explanation).
//
// # The protocol (implemented in package protocol; summarised here)
//
// Context labels are KiB of tokens ("8K" = 8,192). A context is fitted to
// room = max_model_len - max_output - margin; one up to TrimSlack above the room is trimmed to it,
// a larger one is an error. Plan lists the jobs in matrix order (one prefill row per context plus
// the prefill-only rows, then one decode cell per context and concurrency C) and the stages in the
// tool's order (protocol.Protocol.Schedule): hidden warm-ups, the prefill-only rows, a C = 1 decode
// warm-up at the largest context, the first concurrency column, the first context's row, the
// other rows.
//
//   - Prefill row: the scout of the context's first-column cell, the first use of its prompt: a
//     cold prefill; prefill tok/s = prompt tokens / TTFT, TTFT from send to first token.
//   - Decode cell (Session.Cell): the cell's clock starts; the scout runs alone (its prompt is
//     usually cached by then: the prefix cache is never reset); C streams of the identical prompt
//     with max_tokens = max_output start, each restarted when it finishes (closed loop). The
//     server is polled every PollS; the window starts when, at least MinReadyS after the cell's
//     start, nothing has waited, tokens have flowed, every stream has had a token and C have run
//     on consecutive polls for StableS, or at the readiness timeout of the context (60 s below
//     64K, 120 s below 128K, 180 s from 128K): with C > max_num_seqs, always the timeout. The
//     window lasts DurationS; then every stream is cancelled, the server drained and PauseS pass.
//     Total tok/s = tokens received in the window / time to the last of them; TTFT = median over
//     every stream request of the cell of first token - send; time between tokens = median over
//     requests of (last - first) / (tokens - 1), per-request tok/s = 1000 / that; average active =
//     the mean of the window's polls of num_requests_running, rounded to 0.1; completed = requests
//     finished in the whole cell; statuses by protocol.DecodeStatus.
//   - Over capacity: a cell is not run when C x (context + max_output) > kv_cache_size_tokens, C
//     the requested concurrency and kv_cache_size_tokens what the server reports (kvcache.Layout).
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
// workload's "bench" kind runs one cell as the tool runs a matrix of that one cell, through
// Session.Cell, the one implementation of it, and keeps the full latency distributions.
//
// # Determinism
//
// Everything in this package is single-threaded. RunMatrix runs every stage in order on one
// engine on the calling goroutine; each stage reseeds the engine's acceptance draws with
// JobSeed(seed, job) (or a warm-up's seed), a function of the run's seed (the scenario's) and the
// job's tokens, concurrency and phase, so a cell's draws do not depend on how many steps the cells
// before it took. Calibration runs whole matrices, one per parameter set, on worker goroutines.
// The same server, protocol and seed give a byte-identical matrix.
package llmbench
