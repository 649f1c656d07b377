package vllmbench

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/servesim/servesim/workload"
)

func TestParseServe(t *testing.T) {
	c, err := ParseLine(`VLLM_LOGGING_LEVEL=INFO vllm bench serve --backend vllm --model nvidia/GLM-5.3-Flash-NVFP4 \
  --dataset-name random --random-input-len 1024 --random-output-len=128 --random_range_ratio 0.1 \
  --random-prefix-len 256 --num-prompts 200 --request-rate 4 --burstiness 0.5 --max-concurrency 32 \
  --num-warmups 2 --seed 7 --goodput ttft:500 tpot:40 --save-result --result-dir ./results \
  --metadata gpu=h100 tp=4 --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99 \
  --temperature 0 --host 0.0.0.0 --port 8000 2>&1 | tee bench.log`)
	if err != nil {
		t.Fatal(err)
	}
	want := workload.VLLMBench{Dataset: "random", NumPrompts: 200, InputLen: 1024, OutputLen: 128, RangeRatio: 0.1, PrefixLen: 256,
		RequestRate: 4, Burstiness: 0.5, MaxConcurrency: 32, NumWarmups: 2, Seed: 7}
	if c.Mode != "serve" || !reflect.DeepEqual(c.Bench, want) {
		t.Errorf("bench\n got %+v\nwant %+v", c.Bench, want)
	}
	if c.SLO.TTFTms != 500 || c.SLO.TPOTms != 40 || c.Model != "nvidia/GLM-5.3-Flash-NVFP4" {
		t.Errorf("goodput %+v, model %q", c.SLO, c.Model)
	}
	acc := strings.Join(c.Accepted, " | ")
	for _, w := range []string{"--backend vllm", "--save-result", "--result-dir ./results", "--metadata gpu=h100 tp=4", "--metric-percentiles 50,90,99", "--host 0.0.0.0", "--port 8000"} {
		if !strings.Contains(acc, w) {
			t.Errorf("accepted %q lacks %q", acc, w)
		}
	}
	notes := strings.Join(c.Notes, "\n")
	for _, w := range []string{"sampling parameters", "ignore-eos is forced on", "math/rand/v2"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	if len(c.Env) != 1 {
		t.Errorf("env %q", c.Env)
	}
	s, notes2, err := c.Spec(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != workload.KindVLLMBench || s.SLO.TTFTms != 500 || !strings.Contains(strings.Join(notes2, "\n"), "1 special token") {
		t.Errorf("spec %+v, notes %q", s, notes2)
	}
}

func TestParseDefaults(t *testing.T) {
	c, err := Parse([]string{"vllm", "bench", "serve", "--model", "m"})
	if err != nil {
		t.Fatal(err)
	}
	// vLLM's defaults: random, 1,000 prompts, 1024 / 128, rate inf, burstiness 1, seed 0, ready
	// check, no warm-ups.
	want := workload.VLLMBench{Dataset: "random", NumPrompts: 1000, InputLen: 1024, OutputLen: 128}
	if !reflect.DeepEqual(c.Bench, want) {
		t.Errorf("defaults %+v, want %+v", c.Bench, want)
	}
	for _, line := range []string{
		"python -m vllm.entrypoints.cli.main bench serve --num-prompts 5",
		"python3 benchmarks/benchmark_serving.py --num-prompts 5",
		"--num-prompts 5",
		"/opt/venv/bin/vllm bench serve --num-prompts=5 > out.txt",
		"env CUDA_VISIBLE_DEVICES=0 nohup vllm bench serve --num_prompts 5 && echo done",
	} {
		c, err := ParseLine(line)
		if err != nil || c.Mode != "serve" || c.Bench.NumPrompts != 5 {
			t.Errorf("%s: %v %+v", line, err, c)
		}
	}
	c, err = ParseLine("vllm bench serve --request-rate inf --burstiness inf --ready-check-timeout-sec 0")
	if err != nil || c.Bench.RequestRate != 0 || !c.Bench.ConstantGaps || !c.Bench.NoReadyCheck {
		t.Errorf("inf values: %v %+v", err, c)
	}
}

func TestParseThroughput(t *testing.T) {
	c, err := ParseLine("vllm bench throughput --model m --input-len 2048 --output-len 256 --num-prompts 500 --random-range-ratio 0.2 --prefix-len 100 --output-json t.json")
	if err != nil {
		t.Fatal(err)
	}
	want := workload.VLLMBench{Dataset: "random", NumPrompts: 500, InputLen: 2048, OutputLen: 256, RangeRatio: 0.2, PrefixLen: 100}
	if c.Mode != "throughput" || !reflect.DeepEqual(c.Bench, want) {
		t.Errorf("got %s %+v", c.Mode, c.Bench)
	}
	s, _, err := c.Spec(Options{})
	if err != nil || s.Kind != workload.KindOffline {
		t.Errorf("spec: %v %+v", err, s)
	}
	dir := t.TempDir()
	sg := filepath.Join(dir, "sg.json")
	os.WriteFile(sg, []byte(`[{"conversations": [{"value": "a question of some length"}, {"value": "an answer of some length too"}]}]`), 0o644)
	c, err = ParseLine("python benchmarks/benchmark_throughput.py --dataset " + sg + " --output-len 64 --num-prompts 3")
	if err != nil || c.Bench.Dataset != "sharegpt" || c.Bench.OutputLen != 64 {
		t.Fatalf("throughput sharegpt: %v %+v", err, c)
	}
	s, notes, err := c.Spec(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(notes, "\n"); !strings.Contains(got, "topped up to 3") || !strings.Contains(got, "estimated from characters") {
		t.Errorf("notes %q", notes)
	}
	if s.Kind != workload.KindOffline {
		t.Errorf("kind %s", s.Kind)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"", "empty command"},
		{"vllm serve m", "vllm serve is the server's launch command"},
		{"vllm bench", `"vllm bench": want vllm bench serve`},
		{"vllm bench latency --input-len 5", "vllm bench latency: servesim reads"},
		{"curl http://x", "not a vllm bench command"},
		{"vllm bench serve --num-prompts", "--num-prompts: missing its value"},
		{"vllm bench serve --num-prompts abc", `--num-prompts "abc": want a positive number of prompts`},
		{"vllm bench serve --frobnicate 3", "--frobnicate: unknown flag of vllm bench serve"},
		{"vllm bench serve --dataset-name sonnet", "--dataset-name sonnet: servesim reads the random and sharegpt datasets"},
		{"vllm bench serve --dataset-name sharegpt", "needs --dataset-path"},
		{"vllm bench serve --random-range-ratio 1.0", "want a ratio in [0, 1)"},
		{"vllm bench serve --request-rate 0", "want a positive number of requests/s or inf"},
		{"vllm bench serve --request-rate nan", "want a positive number"},
		{"vllm bench serve --no-stream", "--no-stream: without streaming"},
		{"vllm bench serve --ramp-up-strategy linear", "rate ramps are not imported"},
		{"vllm bench serve --backend tgi", "--backend tgi"},
		{"vllm bench serve --goodput ttft=5", `want KEY:VALUE`},
		{"vllm bench serve --goodput itl:5", `unknown metric "itl"`},
		{"vllm bench serve --save-result=yes", "takes no value"},
		{"vllm bench serve positional", `"positional": not a flag`},
		{"vllm bench serve --random-batch-size 4", "embedding models"},
		{"vllm bench throughput --input-len 10", "needs --input-len and --output-len"},
		{"vllm bench throughput --input-len 10 --output-len 5 --tensor-parallel-size 4", "go in --vllm-cmd"},
		{"vllm bench throughput --input-len 10 --output-len 5 --n 2", "parallel sampling"},
		{"vllm bench serve 'unterminated", "unterminated"},
	} {
		_, err := ParseLine(c.line)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error mentioning %q", c.line, err, c.want)
		}
	}
	if _, err := ParseLine(strings.Repeat("x", MaxCommandBytes+1)); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("long line: %v", err)
	}
	// Validation happens in Spec: a prompt of 0 tokens.
	c, err := ParseLine("vllm bench serve --random-input-len 1 --random-output-len 5")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Spec(Options{}); err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Errorf("empty prompts: %v", err)
	}
	zero := 0
	if _, _, err := c.Spec(Options{SpecialTokens: &zero}); err != nil {
		t.Errorf("with 0 special tokens the 1-token prompt is fine: %v", err)
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		"vllm bench serve --model m --dataset-name random --random-input-len 1024 --num-prompts 200 --request-rate 4",
		"vllm bench throughput --input-len 5 --output-len 5 --seed 3",
		"python -m vllm.entrypoints.cli.main bench serve --goodput ttft:3 tpot:4 --metadata a=b c=d | tee x",
		"A=1 env vllm bench serve --burstiness inf --request-rate=inf 2>&1 >log",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > 4096 {
			return
		}
		c, err := ParseLine(line)
		if err != nil {
			return
		}
		if c.Mode != "serve" && c.Mode != "throughput" {
			t.Fatalf("mode %q", c.Mode)
		}
		// A sharegpt path would be read from disk; the rest must validate or fail cleanly.
		if c.Bench.Dataset == "random" {
			s, _, err := c.Spec(Options{})
			if err == nil && s.Validate() != nil {
				t.Fatalf("Spec returned an invalid workload")
			}
		}
	})
}
