// Package vllmbench reads what vLLM's own benchmark client leaves behind: the `vllm bench serve` and
// `vllm bench throughput` command lines, and `vllm bench serve --save-result` JSON files. A command
// becomes a workload (workload.KindVLLMBench or KindOffline); a result file becomes the workload it
// measured, as far as the file tells, and the measurements to compare a simulation with.
//
// Reading order: command.go (Parse, ParseLine, Command.Spec: the flag table), result.go
// (ParseResult, ReadResult: the JSON layout), recover.go (Result.Workload), compare.go (Compare:
// predicted beside measured, and the table, CSV and JSON writers).
//
// # Command lines
//
// Accepted programs: `vllm bench serve|throughput` (any path ending in /vllm), `python -m
// vllm.entrypoints.cli.main bench serve|throughput`, benchmarks/benchmark_serving.py and
// benchmark_throughput.py, or the flags alone (serve); before them VAR=value assignments, env and
// nohup; after them a control operator (|, &&, ;, &) ends the command and redirections are
// skipped. Flags take argparse's spellings: --flag value, --flag=value, --flag_with_underscores.
//
// vllm bench serve, mapped (vllm/benchmarks/serve.py and datasets.py, defaults in brackets):
//
//	--dataset-name random|sharegpt [random]   --dataset-path FILE (sharegpt)
//	--num-prompts [1000]   --seed [0]   --random-input-len [1024]   --random-output-len [128]
//	--random-range-ratio [0]   --random-prefix-len [0]   --sharegpt-output-len
//	--request-rate [inf]   --burstiness [1; inf: constant gaps]   --max-concurrency [none]
//	--num-warmups [0]   --ready-check-timeout-sec [600; 0: no ready check]   --ignore-eos
//	--disable-shuffle   --no-oversample   --goodput ttft:MS tpot:MS e2el:MS (workload.SLO)
//	--random-batch-size 1   --backend/--endpoint-type openai|vllm|openai-chat
//
// accepted without effect and listed: --host, --port, --base-url, --endpoint, --model,
// --tokenizer, --tokenizer-mode, --served-model-name, --trust-remote-code, --save-result,
// --save-detailed, --append-result, --result-dir, --result-filename, --metadata, --label,
// --percentile-metrics, --metric-percentiles, --disable-tqdm, --request-id-prefix, --header,
// --skip-chat-template; accepted with a note: the sampling parameters (--temperature, --top-p,
// --top-k, --min-p, the penalties). Refused with the reason: --no-stream, --use-beam-search,
// --logprobs, --lora-modules, --extra-body, --profile, --ramp-up-*. Any other flag is refused,
// named.
//
// vllm bench throughput, mapped: --dataset-name, --dataset-path (or --dataset), --input-len and
// --output-len (required for random), --num-prompts, --seed, --random-range-ratio, --prefix-len
// (or --random-prefix-len), --n 1, --disable-shuffle, --no-oversample, --backend vllm; accepted:
// --model, --tokenizer, --output-json, --disable-detokenize, --trust-remote-code, --disable-tqdm,
// --async-engine (noted). Its engine arguments are refused with a pointer to --vllm-cmd: the
// engine comes from the scenario.
//
// # How vLLM's rules are followed, and what is approximated
//
//   - Random lengths (RandomDataset.get_sampling_params): I' = input_len - the tokenizer's special
//     tokens; input uniform on the integers [floor(I'(1-r)), ceil(I'(1+r))], output on
//     [max(1, floor(O(1-r))), max(1, ceil(O(1+r)))], both ends inclusive. The prompt the engine
//     sees is special + prefix + input tokens; the benchmark counts prefix + input. servesim has
//     no tokenizer: the special-token count is an assumption, 1 (a BOS token) by default
//     (workload.VLLMBench.SpecialTokens, the CLI's --special-tokens).
//   - The random prefix is drawn once and shared by every prompt, so every request after the
//     first hits the prefix cache for it. Prompts are otherwise distinct.
//   - Draws: math/rand/v2 PCG streams seeded from --seed, not numpy's generators: the same
//     distributions, other values (vLLM's exact prompts cannot be reproduced bit for bit).
//   - Send times (get_request): gaps from Gamma(burstiness, 1 / (rate x burstiness)), summed and
//     scaled so the last request is sent at N / rate; the first request waits its gap too. Rate
//     inf: all at t = 0.
//   - --max-concurrency: a FIFO semaphore; a request's latencies count from when it gets a slot.
//   - The ready check sends request 0's prompt and output length and waits for it; the warm-ups
//     then send it num-warmups times under the semaphore; both finish before the measured run, so
//     request 0 hits the prefix cache.
//   - ignore-eos: forced for the random dataset, as vLLM forces it for OpenAI backends; servesim
//     has no EOS, so every output runs to its length in any case (noted for ShareGPT).
//   - ShareGPT: see workload.ParseShareGPT and workload.SampleShareGPT (vLLM's filters, seeded
//     shuffle and top-up; token counts from the file's num_tokens or 4 characters per token).
//   - vllm bench throughput: all requests handed to the engine at t = 0, no API server time.
//
// # Result files
//
// ParseResult reads vLLM's layout: date, endpoint_type, backend, label, model_id, tokenizer_id,
// num_prompts, the --metadata pairs (kept as Metadata), request_rate (a number or "inf"),
// burstiness, max_concurrency (null: none), duration, completed, failed, total_input_tokens,
// total_output_tokens, request_throughput, request_goodput (null without --goodput),
// output_throughput, total_token_throughput, max_output_tokens_per_s, max_concurrent_requests,
// {mean,median,std}_{ttft,tpot,itl,e2el}_ms and p<P>_{...}_ms for each --metric-percentiles P, and
// with --save-detailed input_lens, output_lens, ttfts, itls (seconds), generated_texts and errors.
// Python writes NaN for statistics of an empty list; it is read as absent. Files above
// MaxResultBytes (256 MiB) are refused; command lines above MaxCommandBytes (1 MiB).
//
// Everything here is deterministic; the fuzz targets (FuzzParseLine, FuzzParseResult) check that
// no input makes a reader panic or return an invalid workload.
package vllmbench
