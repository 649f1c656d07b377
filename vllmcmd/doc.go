// Package vllmcmd reads a vLLM launch command (`vllm serve MODEL --flag ...`) into the flags it
// gives (deploy.EngineArgs), so a scenario can be given the exact command a benchmark was run
// with, and writes such commands back (Format).
//
// Reading order: split.go (Split: shell words), parse.go (Parse, Result: program, environment,
// flag loop), flags.go (the flag table and the value parsers), format.go (Format).
//
// Use Split then Parse:
//
//	words, err := vllmcmd.Split(line)
//	res, err := vllmcmd.Parse(words)
//
// Result.Args holds only what the command gives; deploy.Resolve gives every other flag vLLM's
// default for the engine version, the GPU and the model.
//
// Split is a POSIX-shell word splitter without expansion: quotes, backslash escapes, line
// continuations and comments are handled, $HOME and ${VAR} stay literal text. Parse accepts
// `vllm serve`, any path ending in /vllm, `python -m vllm.entrypoints.openai.api_server`, `python -m
// vllm.entrypoints.cli.main serve`, or the flags alone; before the program an `env` prefix (with -i
// and -u NAME), bare A=B assignments and nohup; after the command, shell redirections are skipped
// and a control operator (|, &&, ;, &) ends it.
//
// Mapped flags (flag -> deploy.EngineConfig field), with vLLM's spellings --flag value, --flag=value,
// --flag_with_underscores, and for booleans --flag, --flag=false and --no-flag:
//
//	--tensor-parallel-size, -tp      TensorParallel
//	--data-parallel-size, -dp        DataParallel
//	--pipeline-parallel-size, -pp    PipelineParallel
//	--decode-context-parallel-size, -dcp  DecodeContextParallel
//	--enable-expert-parallel         ExpertParallel
//	--max-model-len                  MaxModelLen (1048576, 1M = 2^20, 1m = 10^6, 128K = 131072, 128k = 128000, 25.6k)
//	--gpu-memory-utilization         GPUMemoryUtilization, in (0, 1]
//	--kv-cache-memory-bytes          KVCacheMemoryBytes: the KV cache per GPU (4G, 8000000000), in place of
//	                                 what gpu-memory-utilization leaves, as vLLM takes it
//	--kv-cache-dtype                 KVCacheDType
//	--max-num-batched-tokens         MaxNumBatchedTokens
//	--max-num-seqs                   MaxNumSeqs
//	--enable-chunked-prefill         ChunkedPrefill
//	--enable-prefix-caching          PrefixCaching
//	--block-size                     BlockSize
//	--async-scheduling               AsyncScheduling
//	--enforce-eager                  EnforceEager
//	--disable-custom-all-reduce      DisableCustomAllReduce (NCCL for every all-reduce)
//	--max-cudagraph-capture-size     MaxCaptureSize
//	--compilation-config JSON        MaxCaptureSize from max_cudagraph_capture_size, else the largest of cudagraph_capture_sizes
//	--speculative-config JSON        Speculative (method, model, num_speculative_tokens, kv_cache_dtype)
//	--speculative-model, --num-speculative-tokens   Speculative, the older spelling
//	--quantization, -q               Quantization
//	--attention-backend              AttentionBackend (else the VLLM_ATTENTION_BACKEND variable)
//	--moe-backend                    MoEBackend
//	--served-model-name              ServedModel (the first name; absent: vLLM serves the model's
//	                                 name); like vLLM it takes every following word up to the next
//	                                 flag as a name
//
// The spellings and defaults are vLLM's engine arguments (vllm/engine/arg_utils.py, EngineArgs,
// and the config classes under vllm/config/); `vllm serve --help` lists them.
//
// Also mapped: --performance-mode (EngineArgs.PerformanceMode), --all2all-backend (else the
// VLLM_ALL2ALL_BACKEND variable; All2AllBackend), -O0..-O3 / --optimization-level (0:
// no CUDA graphs, read as enforce_eager; 1: piecewise graphs only, noted as not simulated),
// --cuda-graph-sizes (the older capture-size list), --revision (Result.Revision: the Hugging Face
// cache snapshot to read) and VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 in the environment
// (AllowLongMaxModelLen). --speculative-config methods are checked against vLLM's list;
// model-specific MTP names (deepseek_mtp, ...) are read as mtp with a note, as vLLM does; an absent
// num_speculative_tokens is left to deploy.Resolve (n_predict of an MTP checkpoint, else an error).
// --max-model-len -1 / auto (fit to the KV cache) is refused: servesim does not simulate that search.
//
// Args.Name is always "vllm". Format writes the flags of an EngineArgs as a `vllm serve` command
// that Parse reads back to the same flags (FuzzParse checks it).
//
// Ignored flags are known to leave the simulation unchanged and are listed in Result.Ignored with
// their values (API keys and tokens as <redacted>): the server's address and TLS, API keys, tool and
// reasoning parsers, chat templates, logging, weight loading (--load-format, --download-dir,
// --model-loader-extra-config, which must still be valid JSON), tokenizer choices,
// --seed, --dtype auto/half/float16/bfloat16 (noted: 16-bit activations and unquantized weights,
// as simulated; float/float32 is refused: 32-bit weights and rates are not simulated), --swap-space,
// --distributed-executor-backend, --linear-backend, --enable-ep-weight-filter,
// --trust-remote-code, sampling and structured-output defaults, tracing and similar. Anything else
// is listed in Result.Unknown; since Parse cannot know whether an unknown flag takes a value, it
// takes the next word as its value unless that word is a flag. Other short flags are unknown.
// Result.UnknownError refuses them as `vllm serve` refuses unrecognized arguments, naming the flag a
// near miss spells (Suggest: "did you mean --tensor-parallel-size?"); servesim's commands refuse
// through it, so a misspelt flag never simulates another server.
//
// Environment assignments go to Result.Env; the ones known to matter (VLLM_ATTENTION_BACKEND,
// VLLM_USE_V2_MODEL_RUNNER, NCCL_P2P_DISABLE, a CUDA_VISIBLE_DEVICES shorter than the engine, ...)
// also get a Note.
//
// Numbers are read as vLLM reads them with Python's argparse: int() and float() (an underscore
// between digits, a sign and whitespace taken; "0x10" and "0x1p-1" refused; inf and nan refused
// where the flag needs a finite value), and --max-model-len and --max-num-batched-tokens with
// vLLM's human_readable_int (16k, 1M). --hf-config-path is refused: vLLM would read another
// configuration than the model servesim reads.
//
// Errors: a malformed value is an error naming the flag and what was expected
// (`--max-num-seqs "abc": want a positive integer`, `--speculative-config: invalid JSON at offset
// 12: ...`), as is a value flag with no value and an unterminated quote (Split names its column).
// Parse checks each value on its own; deploy.Resolve checks the whole, once the model and the GPU
// are known.
//
// Everything here is pure and deterministic, and no input makes it panic (FuzzParse).
package vllmcmd
