// Package validate scores servesim's predictions against measured runs: the public validation
// corpus (shipped in validate/corpus, one 51-column header for every file) and `vllm bench
// serve --save-result` JSON files. It is the measuring instrument of calibration and physics
// work: it maps every row to a deployment and a workload, simulates them in parallel, and
// reports per case and per source predicted against measured, with MAPE, median APE and signed
// bias; the overload call of open-loop rows; ratios for rows of another engine; and each row it
// cannot express with its reason. It never tunes anything.
//
// Reading order: reader.go (Row, ReadCSV: the strict reader; errors name file, line and
// column), gpus.go and models.go (the GPU table; checkpoints outside the registry), mapping.go
// (Map: row to Case), stages.go (constant-rate stages), community.go (the community builds'
// rows: MTP and DFlash, decode context parallel, decode windows, fixed-prompt decodes, single
// prefills and server facts scored factor by factor), run.go (Run: the parallel runs, Prediction), score.go (comparisons, accuracy, ratios),
// report.go (Report and its table, CSV and JSON), filter.go, result.go (result files), fit.go
// (FitSources: the corpus as sources of calibration.FitMulti; Predict and Report.HeldOut for
// held-out scoring).
//
// # Mapping rules
//
// Quotations are from the corpus's published description of its sources (validate/corpus/README.md
// summarises it).
//
// Engine and version. Rows whose engine is vllm are scored on absolute values. Their flags come
// from the columns (tp, ep, dp, pp, max_num_seqs, max_num_batched_tokens, max_model_len,
// kv_dtype) and from engine_flags: an item that is a `vllm serve` flag (key or key=value) or a
// VLLM_ variable is read by the reader of `vllm serve` commands (vllmcmd.Parse), with its checks,
// so a value `vllm serve` refuses is noted and not applied, a flag without effect on the
// simulation is noted so, and a setting a column gives keeps the column's value (the difference
// noted); VLLM_ATTENTION_BACKEND is kept as a label, and everything else in engine_flags is noted.
// Every flag not given takes vLLM's default for the recorded engine_version
// (model/deploy.Resolve), and the deployment is checked as for every other path (Resolve,
// sim.NewServer). Releases
// before 0.8.0 "ran the V0 engine and V0 scheduler" (1.4): model/deploy/v0.go keeps V0's
// defaults (prefix caching off; chunked prefill only when max_model_len > 32K, with 512 tokens
// in 0.6.x and 2048 later, else whole prompts with max(max_model_len, 2048) tokens; 256
// sequences; CUDA graphs up to 256; no asynchronous scheduling; MLA models forced to whole
// prompts without prefix caching before 0.7.4 and on ROCm). The V1 step policy of package
// scheduler runs them; each row notes it, and where V0 differs in a way the policy cannot
// express (prefill-only steps without chunked prefill, multi-step scheduling with
// --num-scheduler-steps N > 1, max_seq_len_to_capture) the row notes the approximation. A
// version that is not recorded ("inference-sim/vllm fork ... version not recorded", 1.3) takes
// today's defaults (deploy.DefaultVersion): "a 2026 build would default to V1 with prefix caching
// and chunked prefill on". Offline rows use the LLM class's usage context.
//
// Another engine. TensorRT-LLM rows are "a different engine from vLLM. Absolute numbers are not
// vLLM targets. Use only ratios: throughput versus GPU count (1 → 2 → 4 → 8 over PCIe), TP versus
// PP at equal GPU count, and throughput versus the input/output shape for one model and layout"
// (1.5). They are simulated as vLLM (DefaultVersion, LLM class) with max_model_len = input +
// output (trtllm-bench's max_seq_len from the dataset), expert parallel for MoE rows ("--ep set
// (size not in table)": EP = TP), attention data parallelism (enable_attention_dp) taken as TP
// attention, and scored only as ratios: for one model and shape each GPU count over the
// smallest; for one model, shape and GPU count each layout over the largest TP; for one model
// and layout each shape over 1000/1000 (else the shortest). Predicted ratios are the same rows'
// predicted throughputs; absolute values are never compared.
//
// SGLang rows (a closed-loop concurrency sweep of another engine's server, 1.10: "use it as the
// measured cost of the same model on the same node under a modern engine, not as a vLLM target")
// are simulated as vLLM's server (DefaultVersion) and scored only as ratios between the sweep's
// rows: each concurrency's time per output token and output tok/s over the lowest
// concurrency's. Lengths given as bench_serving's --random-range-ratio x (uniform in [x, 1] x
// nominal) are simulated at their mean with vLLM's range ratio (1 - x) / (1 + x). The
// multi-source fit leaves them out: they would pull the vLLM release's engine-level values
// toward another engine's.
//
// Pipeline (pp > 1) and data parallelism (dp > 1) are the engine's own (model/deploy, sim:
// pipeline micro-batches, data-parallel replicas or lockstep MoE ranks); servers are built by
// sim.NewServer with its guards.
//
// Community builds (README 1.6) are their own engine series (engine-level values apart from
// vLLM's releases) on vLLM 0.26.1's defaults. spec_method mtp runs the checkpoint's own MTP
// layer (any model with one); dflash the built-in drafter trained for the target (an MXFP8 copy
// as 8-bit weights). weight_dtype is read for the format it names before a remark; kv_dtype nvfp4
// is the packed NVFP4 sparse-MLA page. engine_flags gpu_memory_utilization,
// decode_context_parallel_size, KV_CACHE_QUANT and the CUDA-graph capture size are read; GPU
// variants: -vram6000 is the card with +6000 MT/s on its memory transfer rate, maxq the Max-Q
// edition, unstated the Workstation card. Workload kinds: decode-window (C streams of the
// client's 78-token prompt as a decode cell over the row's window, outputs to max_tokens),
// fixed-prompt-c1-decode (C = 1 requests of the fixed prompt; tok/s = tokens / (last - first
// token); a coding prompt sets code_prompt 1), single-prefill (prompt tokens / client TTFT),
// server-facts (decode windows at C = 1 and 8 for the accepted tokens per verifier step and the
// verifier steps/s published in the notes, and the KV capacity of the layout);
// prefix-cache-restore and single-request-e2e are refused with the reason (external KV tiers;
// answers of unrecorded length). Acceptance and verifier step rate are scored as two families.
//
// Models. By Hugging Face id through the built-in registry (model/hf). Checkpoints outside it
// are expressed from their base architecture only where the exact published shape is
// transcribed (models.go), stored in the recorded weight_dtype, and the row says
// "architecture transcribed, not a config copy": Llama-3.1-405B (hidden 16384, 126 layers, 128
// heads, 8 KV heads, intermediate 53248, vocab 128256) for meta-llama/Llama-3.1-405B-FP8,
// amd/Llama-3.1-405B-Instruct-FP8-KV and nvidia/Llama-3.1-405B-Instruct-FP4;
// Llama-3.1-70B-Instruct's shape for nvidia/Llama-3.3-70B-Instruct-FP4; the built-in
// Qwen3-30B-A3B and Llama-4-Scout configs for their nvidia FP4 checkpoints; Qwen3-235B-A22B
// (hidden 4096, 94 layers, 64 heads, 4 KV heads, 128 experts top-8 of width 1536) and
// Llama-4-Maverick (Scout's tower with 128 experts on every second layer) for theirs. kv_dtype
// "auto (checkpoint has FP8 KV scales ...)" stays vLLM's auto: the model's 16-bit dtype. Any
// other model is refused with the reason.
//
// GPUs. By the gpu column through a table (h100-sxm, h200, mi300x, rtx-pro-6000-server,
// rtx-pro-6000-workstation, b200, b300, l40s, ...; gpus.go), else the catalog's own names and
// aliases; an unknown name is an error naming both lists.
//
// Workloads (workload_kind, 1.2):
//
//	constant-rate            inference-perf: "sends requests at evenly spaced times, 1/rate apart,
//	                         for the stage's duration"; "Stages run back to back" and "Stage 1
//	                         starts with whatever backlog stage 0 left" (1.3). The stages of one
//	                         experiment (the raw directory in notes) run as one simulation whose
//	                         rate changes at each stage's end; a request counts in the stage it was
//	                         sent in. Stage rate and duration from the notes ("stage N of M (rate R
//	                         req/s x D s"), requests from num_requests.
//	poisson-rate             vLLM benchmark_serving: "--request-rate λ draws exponential
//	                         inter-arrival gaps; 1000 req/s means essentially all 1000 ShareGPT
//	                         prompts at once" (workload kind vllm-bench, its ready check included).
//	closed-loop-concurrency  "at most C requests in flight, a new one is sent the moment one
//	                         finishes" (workload kind closed: num_requests at concurrency).
//	offline-throughput       "all num_requests prompts are handed to the engine at t = 0 ... no
//	                         HTTP server" (workload kind offline: no API-server time).
//
// Lengths (len_dist). fixed: input_tokens and output_tokens. sharegpt: "the measured mean" is all
// the row has; each request's lengths are drawn uniformly within ±50 % of the recorded means
// (seeded by the case id), an assumption stated per row. shared-prefix: "a shared system prompt
// plus a question"; the system-prompt length and the number of prompts groups come from the
// notes ("system 100 + question 466 tok, groups per results/config.yaml 10x10": the effective
// results/config.yaml, 10 groups; "10 groups x 50 prompts, system prompt 2000"), request i uses
// group i mod groups, and the input is the recorded mean. inference-perf's shared_prefix data
// (the constant-rate rows) is a pool of groups x prompts-per-group prompts (10x10: 100), generated
// once and sent in turn, group by group, so request i repeats prompt i mod 100 whole, and with
// prefix caching on (V1's default) only its first sending is prefilled beyond the system prompt.
// inference-perf's token counts "are
// client-side re-tokenised" and the server "most likely generated the full length" (1.3): the
// simulation generates output_tokens_nominal, and the row's output_tokens (the client's count)
// enters the output throughput and the derived TPOT, as in the row.
//
// # Metrics and scoring
//
// vLLM's client definitions: TTFT = first token - send; TPOT per request (e2e - ttft) /
// (output - 1), then aggregated; E2E = last token - send; output tok/s = generated tokens /
// duration (inference-perf stages: the stage's requests' counted tokens / (last completion - first
// send)). Medians and means as the row records them, like with like: each metric family (output
// tok/s, TPOT, TTFT, E2E) is summarised on the median when the row has it, else the mean; a TPOT
// the row derived as (e2e_mean - ttft_mean) / (output_tokens - 1) is predicted the same way. Per
// source: MAPE, median APE and bias (mean signed relative error; positive: predicted too high).
//
// Overload. Open-loop rows get an overload call, scored apart from latency. Measured overloaded:
// notes starting with "OVER CAPACITY", failed requests, or (Poisson rows) completions below 90 %
// of the offered rate. Predicted overloaded: for a constant-rate stage, the median TTFT of the
// stage's last tenth of requests exceeds its first tenth's by more than 5 % of the stage's
// length (a queue growing through the stage); for a Poisson run, completions below 90 % of the
// offered rate. Latencies of measured-overloaded rows are shown but not summarised, and no metric
// of a row with failed requests is (its statistics "cover the successful requests only").
//
// # Determinism
//
// Map is a pure function of the rows. Run simulates each case (each constant-rate experiment)
// on its own goroutine through internal/workpool; every simulation is single-threaded and seeded
// (the case id seeds the length draws), results go to their cases' slots, and the report does
// not depend on the number of workers.
//
// # Intervals
//
// With Options.Provenance each case carries its parameters' provenance (param.Summary) and each
// comparison its 80 % interval (lo_80, hi_80); the report's IntervalReport (intervals.go) counts
// the measured values inside, per source and metric, with the shipped widths, with prior widths
// (from rows of engines servesim expresses) and the approximated engine's widths (from vLLM V0
// rows) estimated on the whole run (in-sample) and leaving each source out (estimated without it).
package validate
