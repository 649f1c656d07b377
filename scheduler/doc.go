// Package scheduler is vLLM v1's step policy: which requests run in the next engine step and how
// many tokens each computes, the request state machine, recompute preemption, and speculative
// acceptance. It follows vllm/v1/core/sched/scheduler.py (Scheduler.schedule and
// update_from_output) over the KV-cache manager of package kvcache.
//
// Reading order: request.go (Request, RequestID, State, FinishReason), scheduler.go (Config,
// Scheduler: Add, Abort, Schedule, Update; Batch, Entry, Output), lazy.go (lazy mode:
// ScheduleLazy, UpdateLazy), deque.go (the waiting queue). The transcripts in testdata/
// (admission, preemption, prefix, spec) show each rule step by step; run them with
// `go test ./scheduler -run Transcripts` and refresh them with -update.
//
// # One step (Schedule)
//
//	budget = max_num_batched_tokens
//	RUNNING, in admission order:
//	    n = tokens still to compute (1 + k for a decoding request with k drafts),
//	        capped by the budget and by max_model_len - 1 - computed (no input position past
//	        the model's length: a request near it verifies fewer drafts)
//	    grow its blocks to computed + n (+ k lookahead slots when the step samples); when the
//	    pool is short, preempt the NEWEST running request (free its blocks, put it at the front
//	    of WAITING, it recomputes later) and retry; if it preempted itself, stop
//	    budget -= n
//	WAITING, first come first served, while budget > 0, running < max_num_seqs and nothing was
//	preempted in this step:
//	    hit = the prefix-cache hit (kvcache.Manager.FindHit); n = min(known - hit, budget)
//	    admit only if blocks for the whole prompt are free (kvcache.Manager.CanAdmit); otherwise
//	    stop: the head of the queue blocks the rest, and admission never preempts
//	    budget -= n
//
// Chunked prefill: a prompt is computed in chunks of whatever budget is left; without chunked
// prefill a prompt that does not fit the remaining budget waits. Hybrid models in the align
// prefix-caching mode (Config.AlignBlock) cut every prompt chunk but the last at a block
// boundary, so the recurrent state can be checkpointed there; verify entries are not cut.
//
// # Applying a step (Update)
//
// A request whose step computes all its known tokens samples: with k drafts verified it emits
// accepted + 1 tokens (accepted in 0..k), capped at max_tokens; the accepted drafts become
// computed tokens, the bonus token is computed in the next step. A request finishes at max_tokens
// or max_model_len, and its blocks are freed at once. Entries of requests aborted or preempted
// since the step was scheduled are skipped.
//
// Acceptance: Config.Accept.Rates[i] = P(accepted >= i + 1), the per-position rates vLLM reports
// (vllm/v1/spec_decode/metrics.py). One uniform draw u accepts the positions with u < rate, which
// is the same as accepting position by position until the first rejection. With a constant
// conditional acceptance p the expected tokens per step are (1 - p^(k+1)) / (1 - p) (Leviathan,
// Kalman and Matias, "Fast Inference from Transformers via Speculative Decoding", ICML 2023).
// Acceptance may change along an output: a request that has already generated
// Config.Accept.Switch tokens draws against Config.Accept.Late instead (the answer after a
// reasoning model's reasoning part drafts differently), and one that has generated fewer than
// Config.Accept.OpenEnd tokens against Config.Accept.Opening (an output's opening).
//
// # Lazy mode
//
// EnableLazy (package sim's fast mode) replaces Schedule and Update by ScheduleLazy and
// UpdateLazy, which give the same steps visiting only the requests that have something to do.
// Without speculative decoding a decoding request is lazy between touches: its Computed and
// Output are those of the tick it was last visited, plus one per step since (Current gives them
// now). Its touch steps are where Grow or Commit has work (kvcache.Table.GrowLimit,
// CommitLimit), where it finishes, and where its cost segment ends; a touch for growing only is
// served in place (the request grows its blocks, preempting the newest requests while the pool is
// short, and keeps its implicit token), any other makes it explicit for the step. In a layout of
// one full-attention group, a growing touch whose block the pool can hand out without evicting
// anything takes it unnamed (kvcache.Manager.OweBlock) and leaves the request's table alone: the
// request owes the block and names it when it turns explicit, which it does before it finishes,
// is aborted or preempted. Such a decoder, its next boundary a block or less away, also joins the
// phase list of its boundary step modulo the block size and leaves the touch queue's growing
// touches: at a step whose budget covers every running request and whose pool hands out, first,
// more blocks without content than the phase's decoders and the explicit requests can take, the
// phase's decoders take their blocks together without a visit (the order of the takes changes
// nothing then), and each counts the boundaries passed when it is next visited; at any other
// step they are visited in running order as due touches are. Touch steps are in a heap keyed by
// (step, admission order), the
// explicit requests in running order, and the lazy decoders between two visited requests take
// one token of the budget each (when the budget exceeds every token the running requests could
// take, none is starved and no chunk cut, so they are counted once instead of found between the
// visits): the step's entries, admissions and preemptions are Schedule's, which
// TestLazyMatchesSchedule checks step by step. The lazy decoders' per-request seconds (for
// package cost's StepSum) are kept summed as k0 + k1 x tick, each request's from an affine fit of
// its decode-entry seconds in the start (fit: checked at three interior points within 1e-6,
// halved until it holds). A step with nothing but lazy decoders reports how many steps after it
// are the same step again (LazyBatch.Span), and UpdateLazy applies that many at once.
//
// With speculative decoding no request is lazy: acceptance is drawn for every decoder in every
// step from the one source, in batch order, as Update does, so both modes draw the same numbers.
// The KV-cache manager defers hashing generated blocks (kvcache.Manager.DeferUnique); a preempted
// request's are entered before its blocks are freed (CommitAll), since its re-admission may hit
// them.
//
// # Determinism
//
// Single-threaded, no clock. The only randomness is the acceptance draw, from the *rand.Rand the
// caller passes in (sim seeds a math/rand/v2 PCG source per engine). The running and waiting
// queues are slices in a defined order, so the same requests and draws give the same steps.
// Broken invariants (a request that passed the admission check but cannot grow, acceptance rates
// that do not match k) panic with the request.
package scheduler
