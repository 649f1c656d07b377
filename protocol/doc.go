// Package protocol holds the rules of the llm-inference-bench benchmark as pure functions and
// data: which cells it runs, in what order, how a context is fitted to max_model_len, when a
// cell's measurement window starts, how long it lasts, which numbers it reports and with which
// status. It runs nothing: bench runs these rules on the simulated engine (bench.RunMatrix,
// bench.RunDecodeCell), workload runs one cell with them (workload kind "bench"), and planner and
// calibration plan with them. A rule changes here and nowhere else.
//
// Reading order: protocol.go (Protocol, Seed, Validate), fit.go (context fitting), plan.go (the
// cells and their order), ready.go (readiness condition, timeout, wait limit, Gate), window.go
// (the window and the polls), stats.go (statuses and per-cell statistics).
//
// Main types: Protocol (the benchmark's settings, the [protocol] table of a scenario), Job (one
// planned cell), Gate (the readiness wait of one decode cell), Window, Observation (what a run of
// a decode cell saw) and Request (what the client saw of one streamed request).
//
// # Determinism
//
// Everything here is a function of its arguments: no engine, no simulation, no clock, no
// goroutines, no randomness. Times are vtime values the caller passes in. Gate keeps the state of
// one readiness wait, but the caller advances it poll by poll; the same polls give the same
// verdicts.
//
// # The rules
//
// Source: the public repository local-inference-lab/llm-inference-bench (formerly
// voipmonitor/llm-inference-bench), its README and CHANGELOG, and `llm_decode_bench.py`
// (run_one_cell, stream_one_request, summarize_request_samples, run_benchmark). Where servesim's
// rule is simpler than the tool's, the difference is named.
//
// Context fitting (Fit). Labels are KiB of tokens: "8K" = 8,192. A request needs room for its
// output and a margin: room = max_model_len - output - margin_tokens (64). A context up to
// trim_slack (10 %) above the room is trimmed to the room and labelled by what it became; a larger
// one does not fit. With max_model_len 1,048,576 and 4,096 output tokens the "1024K" decode row is
// 1,048,576 - 4,096 - 64 = 1,044,416 tokens, labelled "1019K"; the prefill-only "1024K" row asks
// for one output token and is 1,048,511 tokens.
//
// Cells (Plan). One prefill row per decode context, measured by a scout request (the cell's exact
// prompt, max_tokens 1, streaming, on an idle server: a cold prefill that also fills the prefix
// cache), plus the prefill-only rows; prefill tok/s = prompt tokens / TTFT. Then, per context and
// concurrency C, a decode cell: C streams with the identical prompt, max_tokens = max_output, each
// restarted as soon as it finishes (a closed loop). Each context has its own prompt (PromptID).
// The matrix lists prefill rows, then decode cells context by context. The tool itself runs the
// C = 1 column first, then the first context's row, then the other rows; servesim simulates
// every cell from a fresh server, so the order does not change a number.
//
// Over capacity (OverCapacity). A decode cell is not run when C x (context + max_output) >
// kv_cache_size_tokens as the server reports it, with C the requested concurrency. The seed bounds
// it: 16K x 128 ran (128 x 20,480 = 2,621,440 tokens), 1019K x 4 did not (4 x 1,048,512 =
// 4,194,048).
//
// Readiness (Ready, ReadyTimeout, Gate). The tool polls the server's /metrics
// (vllm:num_requests_running, vllm:num_requests_waiting) every poll_s. The window starts when, on
// consecutive polls for stable_s, nothing is waiting, at least C requests run and every one of the
// C streams has received a token. servesim's timeout: when C > max_num_seqs the condition can
// never hold and the window starts after ready_timeout_s (a fitted parameter of package model);
// otherwise the gate waits until it passes, and gives up after ReadyWaitLimit (the cell is an
// Error). The tool's own timeout depends on the context only (60 s up to 32K, 120 s at 64K, 180 s
// from 128K) and applies to every C.
//
// Window (Window). duration_s (30 s) from the moment the readiness wait ends; every stream is then
// cancelled.
//
// Statistics (DecodeCell). Over every stream request of the cell, restarts included: TTFT =
// median of first token - send; time between tokens = median over requests of (last token -
// first token) / (tokens - 1), streams cut at the window's end counting up to their last token;
// per-request tok/s = 1000 / that median. Over the window: total tok/s = completion tokens
// received inside it / its length; completed = requests finished inside it; average active = the
// time integral of running requests / its length. The tool divides the window's tokens by the time
// from the window's start to the last token in it, averages the num_requests_running polls taken
// inside the window, and counts completions over the whole cell.
//
// Statuses (DecodeStatus). Valid: all C ran at once. Requests queued: the cell ran, but no poll
// saw C requests running (capped by max_num_seqs). The tool also reports Requests queued when
// its readiness wait timed out, the average of running requests was below 0.95 C, or a poll saw
// requests waiting.
package protocol
