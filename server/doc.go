// Package server is a simulated vLLM server: vLLM's OpenAI-compatible HTTP API and its
// Prometheus /metrics in front of the simulated engine (package sim), paced to the wall clock.
//
// Reading order: server.go (Config, Server, Run and graceful shutdown, the handlers), api.go
// (request validation and vLLM's error bodies), loop.go (the one goroutine that owns the engines:
// it runs them up to the simulated time of the wall clock, times --speed, and hands every token
// delivery to its stream), stream.go and output.go (one request between the loop and its
// handler; vLLM's response and SSE chunk shapes), prompt.go (the tokenizer stand-in, prompt
// fingerprints for the prefix cache, the synthetic output text and the output-length model),
// cost.go (same_prompt measured on the running batch), metrics.go (vLLM's metric names, labels
// and buckets; the server's lag behind the simulated clock), listener.go (the connection limit),
// client.go and httpbench.go (the benchmark protocol as an HTTP client: Client, LLMBenchClient).
//
// Timing: a request enters the engine at the simulated time of its arrival; its tokens are
// written when the engine emits them (several per chunk under speculative decoding, as vLLM
// streams them; deliveries a slow client has not taken are merged into one chunk). Times in
// /metrics are simulated seconds. The server's own delay is measured twice and exported:
// servesim:clock_lag_seconds (how late the loop processed an event after it was due on the wall
// clock) and servesim:stream_lag_seconds (from a delivery's due time to its chunk written).
//
// Determinism: the engine is the deterministic one of package sim, but arrivals come from the
// wall clock, so a server's timings follow the clock (ARCHITECTURE.md, "Determinism"). The output
// text and length depend only on the prompt and the seed.
//
// Safety: bodies bounded (413 beyond Config.MaxBodyBytes), connections bounded (more wait in the
// kernel's backlog), header, body-read and chunk-write timeouts, and a graceful shutdown: new
// requests get 503, running ones get Config.Grace to finish, then their streams end with an error
// event and [DONE].
package server
