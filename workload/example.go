package workload

// ExampleTOML is an annotated workload file that parses as it is (an open loop of chat
// requests), with every kind's table and key, the other kinds' commented out: what 'servesim
// workload --example' prints.
const ExampleTOML = `# A servesim workload file ('servesim simulate --workload FILE', 'servesim plan --workload FILE').
# Strict: an unknown key is an error naming it. This file runs as it is: an open loop of chat
# requests. The other kinds' tables are below, commented out: set kind and uncomment its table.

name = "my-chat"
kind = "open"            # closed | open | trace | bench | vllm-bench | offline
seed = 7                 # optional; default: the scenario's seed
sample_interval_s = 1.0  # KV-cache usage sampling period (s)

[lengths]                # closed and open loops
input_tokens = 1024      # prompt tokens per request
output_tokens = 256      # output tokens per request
range_ratio = 0.5        # lengths uniform within +-50 %, as vLLM's random dataset
prefix_tokens = 0        # a shared leading part of the prompt (counts in input_tokens)
prefix_groups = 1        # distinct shared prefixes; request i uses group i mod groups

[open]                   # requests arrive on their own (kind = "open")
process = "poisson"      # poisson | gamma
# cv = 2.0               # gamma only: the inter-arrival coefficient of variation (bursts)
rate = 4.0               # requests/s ('--rate' overrides), or a ramp instead:
# ramp = [{at_s = 0, rate = 1}, {at_s = 120, rate = 8}]
requests = 600           # and/or duration_s ('--requests' overrides)

[slo]                    # objectives (the --slo-* flags override)
ttft_ms = 2000           # time to first token at the quantile, at most
tpot_ms = 40             # time per output token at the quantile, at most
# e2e_ms = 20000         # end-to-end latency at the quantile, at most
# user_tok_s = 25        # per-user decode rate (1000 / TPOT), at least
quantile = 0.9           # the share of requests that must meet each objective

# kind = "closed": a fixed number of users, each sending the next request when its answer ends.
# [closed]
# requests = 512
# concurrency = 64

# kind = "trace": replay arrivals and lengths from a file (columns: arrival time, input tokens,
# output tokens, optional prefix_id and prefix_tokens).
# [trace]
# file = "trace.csv"     # relative to this file
# format = "csv"         # csv | jsonl (default: from the extension)
# time_unit = "ms"       # unit of a bare "timestamp" column
# speedup = 1.0          # divide arrival times by this

# kind = "bench": one llm-inference-bench decode cell, as 'servesim matrix' runs it.
# [bench]
# context = "128K"
# concurrency = 16
# duration_s = 30        # and max_output, poll_s, stable_s, margin_tokens, trim_slack:
#                        # the seed protocol's when absent
# ready_limit_s = 60     # give up when the streams never all run at once (default: 1,800 s)

# kind = "vllm-bench" (or "offline": vllm bench throughput): what a 'vllm bench serve' command runs.
# [vllm_bench]
# dataset = "random"     # random | sharegpt (dataset_path = "ShareGPT.json")
# num_prompts = 1000
# input_len = 1024       # random: required, as --random-input-len
# output_len = 128       # random: required; sharegpt: a fixed output (0: the reply's)
# range_ratio = 0.0
# prefix_len = 0
# special_tokens = 1     # what the tokenizer adds to a prompt (servesim has no tokenizer)
# request_rate = 4.0     # absent: inf
# burstiness = 1.0       # or constant_gaps = true for inf
# max_concurrency = 16   # absent: none
# num_warmups = 0        # and no_ready_check = true for --ready-check-timeout-sec 0
# seed = 0               # the benchmark's --seed: lengths, shuffle, send times
`
