// Package workload describes the traffic a simulated server receives, drives the engine with it
// and measures what clients would see.
//
// Reading order: spec.go (Spec and its TOML form, Validate), gen.go (the request generators),
// trace.go (CSV and JSONL trace parsers), presets.go (built-in workloads), run.go (Run: driving a
// sim.Engine), metrics.go (Metrics and how they are summarised), quantile.go (bounded latency
// distributions), overload.go (an open loop whose arrivals outran the server: status "overloaded"
// and the limit that binds), render.go (table, CSV, JSON); vllmbench.go, vllmbench_run.go and
// sharegpt.go for vLLM's own benchmark client.
//
// # Kinds
//
//	closed  N requests at concurrency C: each of C clients sends its next request when the
//	        previous one completes (vllm bench serve --max-concurrency; the InferenceX ISL/OSL
//	        runs). Lengths are uniform on [L(1-r), L(1+r)] as in vllm's random dataset, and
//	        outputs always run to their length (ignore-EOS).
//	open    arrivals from a Poisson or gamma (coefficient of variation cv) renewal process at a
//	        constant rate or along a piecewise-linear ramp. Gaps of mean 1 are drawn in
//	        operational time Lambda(t) = integral of the rate, and mapped back with Lambda^-1, so
//	        a ramp changes the rate without changing the process's shape.
//	trace   replay of a CSV or JSONL trace: arrival time, input tokens, output tokens, and
//	        optionally prefix_id + prefix_tokens for prompts that share a leading part. The
//	        public Azure LLM inference, BurstGPT and Mooncake column names are understood.
//	bench   one llm-inference-bench decode cell, run as the tool runs a matrix of that one
//	        cell (llmbench.Session: hidden warm-ups, the cell's clock, its cold scout, readiness
//	        gate and timeout, window; all rules from package protocol), with full latency
//	        distributions.
//	vllm-bench  vLLM's client, `vllm bench serve` (VLLMBench; package vllmbench reads the command
//	        line and --save-result files): the random dataset's lengths exactly as vLLM bounds them
//	        (I' = input_len - special tokens; input on [floor(I'(1-r)), ceil(I'(1+r))], output on
//	        [max(1, floor(O(1-r))), ceil(O(1+r))], inclusive), one random prefix shared by every
//	        prompt, or a ShareGPT file; send times from gamma gaps (shape = burstiness) rescaled so
//	        the last is at N / rate (rate inf: all at t = 0); a FIFO semaphore of max_concurrency
//	        slots, latencies counted from the slot; the ready check and the warm-ups send request
//	        0's prompt first, so request 0 hits the prefix cache; a request longer than
//	        max_model_len fails at once.
//	offline `vllm bench throughput`: the same datasets, every request handed to the engine at
//	        t = 0 without the API server's time; throughput is tokens / elapsed.
//
// A workload TOML file (strict: an unknown key is an error naming it):
//
//	name = "chat"
//	kind = "open"            # closed | open | trace | bench | vllm-bench | offline
//	seed = 7                 # optional; default: the scenario's seed
//	sample_interval_s = 1.0  # KV-usage sampling period
//
//	[lengths]                # closed and open
//	input_tokens = 1024
//	output_tokens = 256
//	range_ratio = 0.5        # uniform within +-50 %
//	prefix_tokens = 0        # shared leading part of the prompt (counts in input_tokens)
//	prefix_groups = 1        # distinct shared prefixes, request i uses group i mod groups
//
//	[open]
//	process = "gamma"        # poisson | gamma
//	cv = 2.0                 # gamma only
//	rate = 4.0               # requests/s, or a ramp:
//	# ramp = [{at_s = 0, rate = 1}, {at_s = 120, rate = 8}]
//	requests = 1000          # and/or duration_s
//
//	[closed]
//	requests = 512
//	concurrency = 64
//
//	[trace]
//	file = "trace.csv"       # relative to the workload file
//	format = "csv"           # csv | jsonl (default: from the extension)
//	time_unit = "ms"         # unit of a bare "timestamp" column
//	speedup = 1.0            # divide arrival times
//
//	[bench]
//	context = "128K"
//	concurrency = 16
//	duration_s = 30          # and max_output, poll_s, stable_s, margin_tokens, trim_slack:
//	                         # the seed protocol's when absent
//	ready_limit_s = 60       # give up when the streams never all run at once (default: 1,800 s)
//
//	[vllm_bench]             # vllm-bench and offline
//	dataset = "random"       # random | sharegpt (dataset_path = "ShareGPT.json")
//	num_prompts = 1000
//	input_len = 1024         # random: required, as --random-input-len
//	output_len = 128         # random: required; sharegpt: a fixed output (0: the reply's)
//	range_ratio = 0.0
//	prefix_len = 0
//	special_tokens = 1       # what the tokenizer adds to a prompt (an assumption: no tokenizer)
//	request_rate = 4.0       # absent: inf
//	burstiness = 1.0         # or constant_gaps = true for inf
//	max_concurrency = 16     # absent: none
//	num_warmups = 0          # and no_ready_check = true for --ready-check-timeout-sec 0
//	seed = 0                 # the benchmark's --seed: lengths, shuffle, send times
//
//	[slo]
//	ttft_ms = 2000
//	tpot_ms = 40
//	quantile = 0.9
//
// # Metrics
//
// Throughput is output tokens (and input + output tokens, and completed requests) per second of
// the measured span: from the start to the last completion, or the bench window. Per request:
// TTFT = first token - send; TPOT = (last token - first token) / (tokens - 1) (the benchmark's
// "time between tokens"); E2E = last token - send; queue = first admission - arrival at the
// engine (vLLM's queue time). ITL is every gap between streamed deliveries; with speculative
// decoding a delivery carries several tokens (the engine reports gaps through Hooks.OnGap, in
// bulk for the requests it advances without visiting). Quantiles interpolate linearly between
// order statistics, exactly up to 131,072 values per metric; past that, TTFT, TPOT, E2E and queue
// time come from a log-linear histogram with 1,024 sub-buckets per power of two, whose quantiles
// are within 0.049 % of the exact ones (Dist.RelErr says so; N, mean and max stay exact), so a run
// keeps no per-request or per-token array. ITL quantiles come from a log-linear histogram
// (buckets at most 0.8 % wide). KV
// usage is the fraction of blocks referenced by requests, sampled on a fixed simulated-time grid.
// Goodput counts requests meeting every SLO limit individually; the SLO verdict compares the
// quantile of each metric with its limit (per-user tok/s: 1000 / TPOT at the quantile), and an
// overloaded run (arrivals outran the server: Overload) misses it whatever its latencies.
//
// # Sources
//
// Closed and open loops follow `vllm bench serve` (vllm/benchmarks/serve.py: --max-concurrency,
// --request-rate, and --burstiness, which is the gamma shape 1 / cv^2; vllm/benchmarks/datasets.py,
// RandomDataset, for the length ranges). The vllm-bench kind follows the same files to the rule
// (get_request's rescaled gamma schedule, the semaphore, the ready check and warm-ups,
// RandomDataset.get_sampling_params, ShareGPTDataset and is_valid_sequence), and the offline kind
// vllm/benchmarks/throughput.py. ShareGPT token counts come from a turn's num_tokens, else
// ceil(characters / 4) + special tokens (DefaultCharsPerToken: there is no tokenizer here). The trace column names are those of the public Azure LLM
// inference traces (Azure/AzurePublicDataset), BurstGPT (HPMLL/BurstGPT) and Mooncake
// (kvcache-ai/Mooncake). The bench kind is llm-inference-bench's decode cell (package llmbench).
// TPOT, ITL, E2E and goodput are the metrics vllm bench serve reports.
//
// # Determinism
//
// Everything is a function of the server, the spec and the seed: lengths and arrivals come from
// two math/rand/v2 PCG streams seeded with it (for vllm-bench and offline, with the benchmark's
// --seed, VLLMBench.Seed: vLLM's distributions, not numpy's values; the engine takes the run's
// seed), the engine's acceptance draws from the sim's own
// seeded source, and no wall clock is read. Runs on different goroutines are independent.
package workload
