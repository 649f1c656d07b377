package vllmcmd

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/deploy"
)

func parseLine(t *testing.T, line string) *Result {
	t.Helper()
	words, err := Split(line)
	if err != nil {
		t.Fatalf("Split: %v", err)
	}
	r, err := Parse(words)
	if err != nil {
		t.Fatalf("Parse(%q): %v", line, err)
	}
	return r
}

func mustSplit(t testing.TB, line string) []string {
	t.Helper()
	w, err := Split(line)
	if err != nil {
		t.Fatalf("Split(%q): %v", line, err)
	}
	return w
}

// comparable renders flags for comparison and messages (pointers dereferenced).
func comparable(a deploy.EngineArgs) string {
	b, err := json.Marshal(a)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestParseSeed(t *testing.T) {
	b, err := os.ReadFile("testdata/seed_cmd.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := parseLine(t, string(b))

	want := deploy.EngineArgs{Name: "vllm", TensorParallel: deploy.Ptr(4), DataParallel: deploy.Ptr(1), ExpertParallel: deploy.Ptr(true),
		MaxModelLen: deploy.Ptr(1048576), GPUMemoryUtilization: deploy.Ptr(0.92), KVCacheDType: deploy.Ptr("fp8"),
		MaxNumBatchedTokens: deploy.Ptr(8192), ChunkedPrefill: deploy.Ptr(true), MaxNumSeqs: deploy.Ptr(32),
		AttentionBackend: "FLASHINFER_MLA_SPARSE_SM120", MoEBackend: "flashinfer_cutlass",
		Speculative: &deploy.Speculative{Method: "dflash", Model: "incoai/GLM-5.3-Flash-DFlash2", NumTokens: 7, KVCacheDType: "auto"},
		ServedModel: "nvidia/GLM-5.3-Flash-NVFP4"}
	if comparable(got.Args) != comparable(want) {
		t.Errorf("Args:\ngot  %s\nwant %s", comparable(got.Args), comparable(want))
	}
	if err := got.Args.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}

	wantEnv := map[string]string{
		"VLLM_USE_V2_MODEL_RUNNER":          "1",
		"VLLM_ENGINE_READY_TIMEOUT_S":       "3600",
		"VLLM_FLASHINFER_AUTOTUNE_SKIP_OPS": "fp4_gemm,trtllm::fused_moe::gemm1,trtllm::fused_moe::gemm2",
	}
	if !maps.Equal(got.Env, wantEnv) {
		t.Errorf("Env = %v, want %v", got.Env, wantEnv)
	}
	if want := "$HOME/env_rtxpro6k-nvidia-glm53flash-dflash2-vllm-8c60cf07b/bin/vllm"; got.Program != want {
		t.Errorf("Program = %q, want %q", got.Program, want)
	}
	if want := "nvidia/GLM-5.3-Flash-NVFP4"; got.Model != want {
		t.Errorf("Model = %q, want %q", got.Model, want)
	}
	wantIgnored := []string{
		"--reasoning-parser glm45",
		"--enable-auto-tool-choice",
		"--tool-call-parser glm47",
		"--host 0.0.0.0",
		"--port 8000",
		"--api-key <redacted>",
		"--enable-ep-weight-filter",
		`--model-loader-extra-config {"enable_multithread_load":true,"num_threads":128}`,
		"--linear-backend flashinfer_cutlass",
	}
	if !slices.Equal(got.Ignored, wantIgnored) {
		t.Errorf("Ignored:\ngot  %q\nwant %q", got.Ignored, wantIgnored)
	}
	if len(got.Unknown) != 0 {
		t.Errorf("Unknown = %q, want none", got.Unknown)
	}
}

func TestParse(t *testing.T) {
	const m = "org/m"
	for _, tc := range []struct {
		name, cmd string
		edit      func(e *deploy.EngineArgs) // applied to EngineArgs{Name: "vllm"}
		program   string
		model     string // "" means "org/m"
		env       map[string]string
		ignored   []string
		unknown   []string
		note      string // a substring of one of the notes
	}{
		{name: "vllm serve", cmd: "vllm serve org/m", program: "vllm"},
		{name: "python api_server", cmd: "python3 -u -m vllm.entrypoints.openai.api_server --model org/m -tp 2",
			program: "python3 -m vllm.entrypoints.openai.api_server",
			edit:    func(e *deploy.EngineArgs) { e.TensorParallel = deploy.Ptr(2) }},
		{name: "python cli main", cmd: "/usr/bin/python3.12 -m vllm.entrypoints.cli.main serve org/m",
			program: "/usr/bin/python3.12 -m vllm.entrypoints.cli.main"},
		{name: "flags only", cmd: "--model org/m --max-num-seqs 8",
			edit: func(e *deploy.EngineArgs) { e.MaxNumSeqs = deploy.Ptr(8) }},
		{name: "serve only", cmd: "serve org/m -dp 2 -pp 1", edit: func(e *deploy.EngineArgs) { e.DataParallel, e.PipelineParallel = deploy.Ptr(2), deploy.Ptr(1) }},
		{name: "equals and underscores", cmd: "vllm serve org/m --tensor_parallel_size=8 --max-num-batched-tokens=16384 -tp=4",
			program: "vllm",
			edit: func(e *deploy.EngineArgs) {
				e.TensorParallel = deploy.Ptr(4)
				e.MaxNumBatchedTokens = deploy.Ptr(16384)
			}},
		{name: "booleans", cmd: "vllm serve org/m --no-enable-prefix-caching --enable-chunked-prefill=false --no-async-scheduling --enforce-eager --enable-expert-parallel=True",
			program: "vllm",
			edit: func(e *deploy.EngineArgs) {
				e.PrefixCaching, e.ChunkedPrefill, e.AsyncScheduling, e.EnforceEager, e.ExpertParallel = deploy.Ptr(false), deploy.Ptr(false), deploy.Ptr(false), deploy.Ptr(true), deploy.Ptr(true)
			}},
		{name: "boolean with separate value", cmd: "vllm serve org/m --enable-prefix-caching false --trust-remote-code",
			program: "vllm", ignored: []string{"--trust-remote-code"},
			edit: func(e *deploy.EngineArgs) { e.PrefixCaching = deploy.Ptr(false) }},
		{name: "max-model-len 1m", cmd: "vllm serve org/m --max-model-len 1m", program: "vllm",
			edit: func(e *deploy.EngineArgs) { e.MaxModelLen = deploy.Ptr(1000000) }},
		{name: "max-model-len 1M", cmd: "vllm serve org/m --max-model-len 1M", program: "vllm",
			edit: func(e *deploy.EngineArgs) { e.MaxModelLen = deploy.Ptr(1048576) }},
		{name: "max-model-len 128k", cmd: "vllm serve org/m --max-model-len=128k", program: "vllm",
			edit: func(e *deploy.EngineArgs) { e.MaxModelLen = deploy.Ptr(128000) }},
		{name: "max-model-len 128K", cmd: "vllm serve org/m --max-model-len 128K", program: "vllm",
			edit: func(e *deploy.EngineArgs) { e.MaxModelLen = deploy.Ptr(131072) }},
		{name: "max-model-len 25.6k", cmd: "vllm serve org/m --max-model-len 25.6k", program: "vllm",
			edit: func(e *deploy.EngineArgs) { e.MaxModelLen = deploy.Ptr(25600) }},
		{name: "misc mapped", cmd: "vllm serve org/m --gpu-memory-utilization 1 --kv-cache-dtype fp8_e5m2 --block-size 32 -q fp8 --max-cudagraph-capture-size 256",
			program: "vllm",
			edit: func(e *deploy.EngineArgs) {
				e.GPUMemoryUtilization, e.KVCacheDType, e.BlockSize, e.Quantization, e.MaxCaptureSize = deploy.Ptr(1.0), deploy.Ptr("fp8_e5m2"), deploy.Ptr(32), "fp8", deploy.Ptr(256)
			}},
		{name: "compilation-config sizes", cmd: `vllm serve org/m --compilation-config '{"cudagraph_capture_sizes":[1,2,4,96,64],"cudagraph_mode":"FULL"}'`,
			program: "vllm", note: "keys not simulated: cudagraph_mode",
			edit: func(e *deploy.EngineArgs) { e.MaxCaptureSize = deploy.Ptr(96) }},
		{name: "compilation-config max", cmd: `vllm serve org/m --compilation-config='{"max_cudagraph_capture_size":1024}'`,
			program: "vllm", edit: func(e *deploy.EngineArgs) { e.MaxCaptureSize = deploy.Ptr(1024) }},
		{name: "compilation-config level", cmd: `vllm serve org/m --compilation-config 3`, program: "vllm", note: "optimisation level"},
		{name: "speculative infers method", cmd: `vllm serve org/m --speculative-config '{"model":"yuhuili/EAGLE3-LLaMA3.1-8B","num_speculative_tokens":"3","draft_tensor_parallel_size":1,"max_model_len":4096}'`,
			program: "vllm", note: "keys not simulated: max_model_len",
			edit: func(e *deploy.EngineArgs) {
				e.Speculative = &deploy.Speculative{Method: "eagle3", Model: "yuhuili/EAGLE3-LLaMA3.1-8B", NumTokens: 3}
			}},
		{name: "speculative ngram", cmd: `vllm serve org/m --speculative-config '{"method":"ngram","num_speculative_tokens":4.0,"prompt_lookup_max":4}'`,
			program: "vllm",
			edit:    func(e *deploy.EngineArgs) { e.Speculative = &deploy.Speculative{Method: "ngram", NumTokens: 4} }},
		{name: "legacy speculative flags", cmd: "vllm serve org/m --speculative-model org/draft --num-speculative-tokens 5",
			program: "vllm", note: "pre-2025 spelling",
			edit: func(e *deploy.EngineArgs) {
				e.Speculative = &deploy.Speculative{Method: "draft_model", Model: "org/draft", NumTokens: 5}
			}},
		{name: "served names", cmd: "vllm serve org/m --served-model-name a b --port 1",
			program: "vllm", ignored: []string{"--port 1"}, note: "the first, \"a\", is used",
			edit: func(e *deploy.EngineArgs) { e.ServedModel = "a" }},
		{name: "positional wins over --model", cmd: "vllm serve org/m --model other",
			program: "vllm", note: "positional \"org/m\" wins"},
		{name: "unknown flags", cmd: "vllm serve org/m -O3 --foo bar --baz=1 --qux --max-num-seqs 4 extra",
			program: "vllm", unknown: []string{"--foo bar", "--baz=1", "--qux", "extra"},
			edit: func(e *deploy.EngineArgs) { e.MaxNumSeqs = deploy.Ptr(4) }},
		{name: "env and redirections", cmd: "CUDA_VISIBLE_DEVICES=0,1 env -u X VLLM_ATTENTION_BACKEND=FLASH_ATTN nohup vllm serve org/m -tp 4 --api-key=s3cret > log.txt 2>&1 &",
			program: "vllm", ignored: []string{"--api-key <redacted>"},
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "0,1", "VLLM_ATTENTION_BACKEND": "FLASH_ATTN"},
			note: "lists 2 GPUs but the engine needs 4",
			edit: func(e *deploy.EngineArgs) { e.TensorParallel = deploy.Ptr(4); e.AttentionBackend = "FLASH_ATTN" }},
		{name: "pipe ends the command", cmd: "vllm serve org/m --port 8000 2>&1 | tee -a log --max-num-seqs 1",
			program: "vllm", ignored: []string{"--port 8000"}, note: "shell operator \"|\""},
		{name: "flag wins over env backend", cmd: "VLLM_ATTENTION_BACKEND=A vllm serve org/m --attention-backend B",
			program: "vllm", env: map[string]string{"VLLM_ATTENTION_BACKEND": "A"},
			edit: func(e *deploy.EngineArgs) { e.AttentionBackend = "B" }},
		{name: "dtype noted", cmd: "vllm serve org/m --dtype bfloat16 --seed=0",
			program: "vllm", ignored: []string{"--dtype bfloat16", "--seed 0"}, note: "16-bit activations"},
		{name: "double dash", cmd: "vllm serve -- org/m", program: "vllm"},
		{name: "-O0 runs eager", cmd: "vllm serve org/m -O0", program: "vllm", note: "simulated as enforce_eager",
			edit: func(e *deploy.EngineArgs) { e.EnforceEager = deploy.Ptr(true) }},
		{name: "-O 1 noted", cmd: "vllm serve org/m -O 1 --optimization-level=3", program: "vllm", note: "piecewise CUDA graphs only"},
		{name: "performance mode and revision", cmd: "vllm serve org/m --performance-mode throughput --revision abc123", program: "vllm",
			edit: func(e *deploy.EngineArgs) { e.PerformanceMode = "throughput" }},
		{name: "long max model len allowed", cmd: "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve org/m --max-model-len 200000", program: "vllm",
			env: map[string]string{"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}, note: "beyond the model's own limit",
			edit: func(e *deploy.EngineArgs) { e.AllowLongMaxModelLen, e.MaxModelLen = true, deploy.Ptr(200000) }},
		{name: "model-specific mtp name", cmd: `vllm serve org/m --speculative-config '{"method":"deepseek_mtp","num_speculative_tokens":1}'`,
			program: "vllm", note: `method "deepseek_mtp" is read as "mtp"`,
			edit: func(e *deploy.EngineArgs) { e.Speculative = &deploy.Speculative{Method: "mtp", NumTokens: 1} }},
		{name: "mtp without k", cmd: `vllm serve org/m --speculative-config '{"method":"mtp"}'`,
			program: "vllm", edit: func(e *deploy.EngineArgs) { e.Speculative = &deploy.Speculative{Method: "mtp"} }},
		{name: "old cuda graph sizes", cmd: "vllm serve org/m --cuda-graph-sizes 8 64 32", program: "vllm",
			edit: func(e *deploy.EngineArgs) { e.MaxCaptureSize = deploy.Ptr(64) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseLine(t, tc.cmd)
			wantModel := tc.model
			if wantModel == "" {
				wantModel = m
			}
			want := deploy.EngineArgs{Name: "vllm"}
			if tc.edit != nil {
				tc.edit(&want)
			}
			if comparable(got.Args) != comparable(want) {
				t.Errorf("Args:\ngot  %s\nwant %s", comparable(got.Args), comparable(want))
			}
			if got.Program != tc.program {
				t.Errorf("Program = %q, want %q", got.Program, tc.program)
			}
			if got.Model != wantModel {
				t.Errorf("Model = %q, want %q", got.Model, wantModel)
			}
			wantEnv := tc.env
			if wantEnv == nil {
				wantEnv = map[string]string{}
			}
			if !maps.Equal(got.Env, wantEnv) {
				t.Errorf("Env = %v, want %v", got.Env, wantEnv)
			}
			if !slices.Equal(got.Ignored, tc.ignored) {
				t.Errorf("Ignored = %q, want %q", got.Ignored, tc.ignored)
			}
			if !slices.Equal(got.Unknown, tc.unknown) {
				t.Errorf("Unknown = %q, want %q", got.Unknown, tc.unknown)
			}
			if tc.note != "" && !slices.ContainsFunc(got.Notes, func(n string) bool { return strings.Contains(n, tc.note) }) {
				t.Errorf("Notes = %q, want one containing %q", got.Notes, tc.note)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"", "empty command"},
		{"A=B", "no program after the environment"},
		{"docker run vllm/vllm-openai", `program "docker": want vllm serve`},
		{"vllm bench serve", "vllm bench: want vllm serve"},
		{"vllm", "vllm: want the serve subcommand"},
		{"python -c 1", "python -c: want -m"},
		{"python -m", "python -m: needs a module name"},
		{"python -m vllm.other", "want vllm.entrypoints.openai.api_server"},
		{"vllm serve m --max-num-seqs abc", `--max-num-seqs "abc": want a positive integer`},
		{"vllm serve m --max-num-seqs 0", `--max-num-seqs "0": want a positive integer`},
		{"vllm serve m -tp x", `-tp "x": want a positive integer`},
		{"vllm serve m --max-num-seqs", "--max-num-seqs: needs a value, but the command ends"},
		{"vllm serve m --port --host h", `--port: needs a value, got the flag "--host"`},
		{"vllm serve m --gpu-memory-utilization 1.5", "--gpu-memory-utilization 1.5: want a number in (0, 1]"},
		{"vllm serve m --gpu-memory-utilization 0", "--gpu-memory-utilization 0: want a number in (0, 1]"},
		{"vllm serve m --gpu-memory-utilization NaN", `--gpu-memory-utilization "NaN": want a number in (0, 1]`},
		{"vllm serve m --gpu-memory-utilization x", `--gpu-memory-utilization "x": want a number in (0, 1]`},
		{"vllm serve m --max-model-len 1.5M", `--max-model-len "1.5M": want a positive integer`},
		{"vllm serve m --max-model-len 99999999999999999999k", `--max-model-len "99999999999999999999k"`},
		{"vllm serve m --max-model-len 1T", `--max-model-len "1T"`},
		{"vllm serve m --kv-cache-dtype int4", `--kv-cache-dtype "int4": want one of auto,`},
		{"vllm serve m --enable-chunked-prefill=maybe", `--enable-chunked-prefill "maybe": want true or false`},
		{"vllm serve m --no-enable-chunked-prefill=true", "--no-enable-chunked-prefill=true: takes no value"},
		{"vllm serve m --max-cudagraph-capture-size -8", `--max-cudagraph-capture-size "-8": want a non-negative integer`},
		{`vllm serve m --speculative-config '{"method":"dflash",}'`, "--speculative-config: invalid JSON at offset 20: invalid character '}'"},
		{`vllm serve m --speculative-config '{"method":"dflash"'`, "--speculative-config: invalid JSON at offset 18: unexpected end of JSON input"},
		{`vllm serve m --speculative-config '[1]'`, "--speculative-config: want a JSON object, got a JSON array"},
		{`vllm serve m --speculative-config null`, "--speculative-config: want a JSON object, got null"},
		{`vllm serve m --speculative-config '{"method":3}'`, `--speculative-config: "method" is 3: want a string`},
		{`vllm serve m --speculative-config '{"method":"mtp","num_speculative_tokens":2.5}'`, `"num_speculative_tokens" is 2.5: want an integer`},
		{`vllm serve m --speculative-config '{"method":"mtp","num_speculative_tokens":0}'`, `"num_speculative_tokens" is 0: want a positive integer`},
		{`vllm serve m --speculative-config '{"num_speculative_tokens":3}'`, `--speculative-config: want a "method" or a "model"`},
		{`vllm serve m --compilation-config '{"cudagraph_capture_sizes":[8,"x"]}'`, `"cudagraph_capture_sizes" has "x": want positive integers`},
		{`vllm serve m --compilation-config '{"cudagraph_capture_sizes":8}'`, `"cudagraph_capture_sizes" is 8: want a list of integers`},
		{`vllm serve m --compilation-config '{"cudagraph_capture_sizes":[8,16],"max_cudagraph_capture_size":32}'`, "max_cudagraph_capture_size 32 disagrees with the largest of cudagraph_capture_sizes, 16"},
		{`vllm serve m --model-loader-extra-config '{"num_threads":}'`, "--model-loader-extra-config: invalid JSON at offset 16"},
		{`vllm serve m --num-speculative-tokens -1`, `--num-speculative-tokens "-1": want a positive integer`},
		{`vllm serve m --num-speculative-tokens 3`, `--num-speculative-tokens 3 without --speculative-model: vLLM rejects`},
		{"vllm serve m --max-model-len -1", "--max-model-len -1: vLLM fits the longest context the KV cache holds; servesim does not simulate that search"},
		{"vllm serve m --max-model-len auto", "give a number"},
		{"vllm serve m --performance-mode fast", `--performance-mode "fast": want balanced, throughput or interactivity`},
		{"vllm serve m -O7", `-O "7": want an optimization level 0..3`},
		{`vllm serve m --speculative-config '{"method":"lookahead","num_speculative_tokens":2}'`, `method "lookahead": want one of ngram,`},
	} {
		words, err := Split(tc.cmd)
		if err != nil {
			t.Fatalf("Split(%q): %v", tc.cmd, err)
		}
		_, err = Parse(words)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %v, want %q", tc.cmd, err, tc.want)
		}
	}
}

// TestFormatRoundTrip: Format writes commands that Parse reads back to the same flags, for
// commands that give every kind of flag.
func TestFormatRoundTrip(t *testing.T) {
	b, err := os.ReadFile("testdata/seed_cmd.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		string(b),
		"vllm serve meta-llama/Llama-3.1-8B-Instruct",
		"VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve org/m -tp 2 -pp 2 -dp 2 --no-enable-expert-parallel --max-model-len 300k --gpu-memory-utilization 0.85 --kv-cache-dtype fp8_e4m3 --max-num-batched-tokens 4096 --max-num-seqs 64 --no-enable-chunked-prefill --enable-prefix-caching --block-size 32 --no-async-scheduling --enforce-eager --max-cudagraph-capture-size 128 --performance-mode throughput -q fp8 --moe-backend triton --served-model-name my model",
		`vllm serve --model '>x' -q weird_method --attention-backend 'a b'`,
		`vllm serve --model '|' --served-model-name "x y" z`,
		`vllm serve "/models/My Model" --speculative-config '{"method":"eagle3","model":"org/it'"'"'s-eagle","num_speculative_tokens":3,"kv_cache_dtype":"fp8"}'`,
	} {
		r := parseLine(t, line)
		cmd := Format(r.Model, r.Args)
		back := parseLine(t, cmd)
		if comparable(back.Args) != comparable(r.Args) || back.Model != r.Model {
			t.Errorf("Format(%q) = %q\nreads back as %s (model %q)\nwant %s (model %q)", line, cmd, comparable(back.Args), back.Model, comparable(r.Args), r.Model)
		}
	}
}
