// Package protocol holds the rules of the llm-inference-bench benchmark as pure functions and
// data: which cells it runs, in what order, how a context is fitted to max_model_len, when a
// cell's measurement window starts, how long it lasts, which numbers it reports and with which
// status. It runs nothing: llmbench runs these rules on the simulated engine (llmbench.RunMatrix,
// llmbench.RunDecodeCell), workload runs one cell with them (workload kind "bench"), and planner and
// calibration plan with them. A rule changes here and nowhere else.
//
// Reading order: protocol.go (Protocol, Seed, Validate), fit.go (context fitting), plan.go (the
// cells, their matrix order and the order the tool runs them in), ready.go (readiness condition,
// timeout, Gate), window.go (the window and its polls), stats.go (statuses and per-cell
// statistics).
//
// Main types: Protocol (the benchmark's settings, the [protocol] table of a scenario), Job (one
// planned cell), Stage (one step of the tool's run), Gate (the readiness wait of one decode cell),
// Window, Poll (one sample of the server's metrics), Observation (what a run of a decode cell saw)
// and Request (what the client saw of one streamed request).
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
// Cells (Plan, Schedule). One prefill row per decode context plus the prefill-only rows; prefill
// tok/s = prompt tokens / TTFT of one scout request (the cell's exact prompt, max_tokens 1,
// streaming, on an idle server). Per context and concurrency C, a decode cell: C streams with the
// identical prompt, max_tokens = max_output, each restarted as soon as it finishes (a closed
// loop). Each context has its own prompt (PromptID). The matrix lists prefill rows, then decode
// cells context by context. The tool runs everything on one server whose prefix cache is never
// reset, in this order (Schedule): hidden warm-ups (a 64-token "count to 20" request, an 8K
// prefill), the prefill-only rows, a hidden C = 1 decode of WarmupDecodeS at the largest context
// that fits (its prompt prefilled first), each warm-up with its own prompt; then the first
// concurrency column (C = 1 at every context), whose scouts are each context's first use of its
// prompt, cold, and give the prefill rows; then the first context's row; then the other rows.
// Every cell starts on a drained server (0 running, 0 waiting) and its scout runs again, usually
// on a cached prompt; after the window the streams are cancelled, the server drained, and PauseS
// (2 s) pass. Over-capacity cells are not run.
//
// Over capacity (OverCapacity). A decode cell is not run when C x (context + max_output) >
// kv_cache_size_tokens as the server reports it, with C the requested concurrency. The seed bounds
// it: 16K x 128 ran (128 x 20,480 = 2,621,440 tokens), 1019K x 4 did not (4 x 1,048,512 =
// 4,194,048).
//
// Readiness (Ready, ReadyTimeout, Gate). The cell's clock starts before its scout. The tool polls
// /metrics about once a second (PollS) from the streams' launch. The window starts at the first
// poll at least MinReadyS (2 s) after the cell's start on which the condition has held on
// consecutive polls for StableS (3 s): nothing waiting, tokens flowing (the generation counter
// grew since the previous poll), every one of the C streams has a token, and at least C running.
// Otherwise it starts at the first poll at or after the readiness timeout, which depends on the
// context only: 60 s below 64K, 120 s below 128K, 180 s from 128K (ready_timeout_s replaces it for
// every context). With C > max_num_seqs the condition can never hold, so those cells always start
// their window at the timeout: for 8K x 64 about 60 s into the cell, when the 32 running requests
// are about 2.3k tokens into their outputs. Nothing is reset at the timeout.
//
// Window (Window, WindowPolls). DurationS (30 s) from the poll that ended the wait, polled every
// PollS; then every stream is cancelled.
//
// Statistics (DecodeCell). Over every stream request of the whole cell that received a token
// (restarts included): TTFT = median from the send (the POST, so time queued in the engine
// counts); time between tokens = median over requests of (last token - first token) / (tokens -
// 1) over each request's whole observed life, streams cut at the window's end counting up to their
// last token; per-request tok/s = 1000 / that median. Over the window: total tok/s = completion
// tokens received in it / the time from its start to the last token received in it (also the
// "measured for" time); average active = the mean of its num_requests_running polls, rounded to
// 0.1. Completed requests count the whole cell.
//
// Statuses (DecodeStatus). Requests queued: the readiness wait timed out, or no poll in the window
// saw C running, or a poll in the window saw a request waiting, or the window's average of running
// requests is below 0.95 C (from C = 2: the seed's 1019K x 1 shows 0.9 and Valid). Otherwise
// Valid.
package protocol
