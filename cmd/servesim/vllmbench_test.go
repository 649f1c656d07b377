package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	detailedRun = "../../vllmbench/testdata/openai-4.0qps-GLM-5.3-Flash-NVFP4-20260914-101500.json"
	infRun      = "../../vllmbench/testdata/openai-infqps-concurrency16-GLM-5.3-Flash-NVFP4-20260914-103000.json"
	goodputRun  = "../../vllmbench/testdata/openai-2.0qps-GLM-5.3-Flash-NVFP4-20260914-104500.json"
)

const acceptanceCmd = "vllm bench serve --model nvidia/GLM-5.3-Flash-NVFP4 --dataset-name random --random-input-len 1024 --random-output-len 128 --num-prompts 200 --request-rate 4"

func TestSimulateVLLMBench(t *testing.T) {
	code, out, errs := runCLI("simulate", "--vllm-bench", acceptanceCmd)
	if code != 0 || !strings.Contains(out, "vllm bench serve: 200 prompts, random dataset, input 1023 + 1 special, output 128 tokens; rate 4 req/s (Poisson)") ||
		!strings.Contains(out, "200 submitted, 200 completed") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, w := range []string{"accepted without effect on the simulation: --model nvidia/GLM-5.3-Flash-NVFP4", "ignore-eos is forced on", "--special-tokens"} {
		if !strings.Contains(errs, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errs)
		}
	}
	// The same command gives the same bytes; another --seed other draws.
	if _, again, _ := runCLI("simulate", "--vllm-bench", acceptanceCmd); again != out {
		t.Errorf("not deterministic")
	}
	if _, other, _ := runCLI("simulate", "--vllm-bench", acceptanceCmd+" --seed 1"); other == out {
		t.Errorf("--seed 1 gives the same output as --seed 0")
	}
	sg := put(t, t.TempDir(), "sg.json", `[{"id": "1", "conversations": [{"from": "human", "value": "Tell me about the history of Paris in a few sentences, please."}, {"from": "gpt", "value": "Paris grew from a Celtic settlement into the capital of France, a centre of art, science and politics."}]}]`)
	code, out, errs = runCLI("simulate", "--vllm-bench", "vllm bench serve --dataset-name sharegpt --dataset-path "+sg+" --num-prompts 20 --max-concurrency 4")
	if code != 0 || !strings.Contains(out, "20 submitted, 20 completed") || !strings.Contains(errs, "topped up to 20 with duplicates") ||
		!strings.Contains(errs, "estimated from characters") || !strings.Contains(errs, "without --ignore-eos") {
		t.Errorf("sharegpt: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCLI("simulate", "--vllm-bench", "vllm bench throughput --input-len 1024 --output-len 64 --num-prompts 50", "--format", "json")
	var m struct {
		Kind      string `json:"kind"`
		Completed int    `json:"completed"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m.Kind != "offline" || m.Completed != 50 {
		t.Errorf("throughput: exit %d %+v\n%s", code, m, errs)
	}
}

func TestSimulateMeasured(t *testing.T) {
	code, out, errs := runCLI("simulate", "--measured", detailedRun)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, w := range []string{"Measured     " + detailedRun + ": nvidia/GLM-5.3-Flash-NVFP4, 64 prompts, rate 4 req/s, 64 completed in 18.8 s, per-request detail",
		"Predicted vs measured", "output throughput (tok/s)", "TTFT median (ms)", "ITL p99 (ms)", "input tokens      66158     66158   +0.0%"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if !strings.Contains(errs, "64 recorded input_lens") {
		t.Errorf("stderr: %s", errs)
	}
	code, out, _ = runCLI("simulate", "--measured", infRun, "--format", "json")
	var j struct {
		Predicted struct {
			Completed int `json:"completed"`
		} `json:"predicted"`
		Comparison struct {
			Rows []struct {
				Key       string   `json:"key"`
				Predicted *float64 `json:"predicted"`
				Measured  *float64 `json:"measured"`
				Err       *float64 `json:"error_pct"`
			} `json:"rows"`
		} `json:"comparison"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &j) != nil || j.Predicted.Completed != 200 {
		t.Fatalf("json: exit %d\n%s", code, out)
	}
	keys := map[string]bool{}
	for _, r := range j.Comparison.Rows {
		keys[r.Key] = r.Predicted != nil && r.Measured != nil && r.Err != nil
	}
	for _, k := range []string{"output_throughput", "mean_ttft_ms", "median_tpot_ms", "p99_itl_ms", "p90_e2el_ms"} {
		if !keys[k] {
			t.Errorf("json row %s missing or incomplete", k)
		}
	}
	code, out, _ = runCLI("simulate", "--measured", goodputRun, "--vllm-bench", "vllm bench serve --random-input-len 2048 --random-output-len 256 --goodput ttft:300 tpot:20", "--format", "csv")
	if code != 0 || !strings.HasPrefix(out, "key,class,predicted,measured,error_pct\n") || !strings.Contains(out, "\nrequest_goodput,goodput,") {
		t.Errorf("csv: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "\nrequest_goodput,goodput,,") {
		t.Errorf("goodput not predicted with the command's --goodput:\n%s", out)
	}
}

func TestVLLMBenchErrors(t *testing.T) {
	dir := t.TempDir()
	notResult := filepath.Join(dir, "x.json")
	os.WriteFile(notResult, []byte(`{"completed": 3}`), 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"simulate", "--workload", "chat", "--vllm-bench", acceptanceCmd}, 2, "--workload and --vllm-bench are exclusive"},
		{[]string{"simulate", "--workload", "chat", "--measured", infRun}, 2, "does not take --workload"},
		{[]string{"simulate", "--vllm-bench", "vllm bench serve --frobnicate 1"}, 2, "--frobnicate: unknown flag of vllm bench serve"},
		{[]string{"simulate", "--vllm-bench", "vllm serve m"}, 2, "--vllm-cmd"},
		{[]string{"simulate", "--vllm-bench", acceptanceCmd, "--vllm-bench", acceptanceCmd}, 2, "give one benchmark command"},
		{[]string{"simulate", "--workload", "chat", "--special-tokens", "0"}, 2, "apply to --vllm-bench and --measured"},
		{[]string{"simulate", "--vllm-bench", acceptanceCmd, "--special-tokens", "99"}, 2, "--special-tokens 99"},
		{[]string{"simulate", "--measured", filepath.Join(dir, "missing.json")}, 1, "no such file"},
		{[]string{"simulate", "--measured", notResult}, 1, "missing duration"},
		{[]string{"simulate", "--vllm-bench", "vllm bench serve --dataset-name sharegpt --dataset-path " + filepath.Join(dir, "none.json")}, 1, "no such file"},
		{[]string{"fit", "--vllm-bench", acceptanceCmd}, 2, "apply to vllm bench serve result files"},
		{[]string{"fit", "--measured", infRun, "--measured", "../../matrix/testdata/seed.txt"}, 2, "fit to one kind at a time"},
		{[]string{"fit", "--measured", infRun, "--train", "concurrency<=8"}, 2, "--train and --cv select cells"},
		{[]string{"fit", "--measured", infRun, "--measured", goodputRun, "--vllm-bench", acceptanceCmd, "--vllm-bench", acceptanceCmd, "--vllm-bench", acceptanceCmd}, 2, "given 3 times for 2 result files"},
		{[]string{"plan", "--vllm-bench", acceptanceCmd, "--context", "8K"}, 2, "are exclusive"},
	}
	for _, c := range cases {
		code, _, errs := runCLI(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("servesim %v: exit %d (want %d), stderr does not mention %q:\n%s", c.args, code, c.code, c.want, errs)
		}
	}
}

func TestFitMeasuredResults(t *testing.T) {
	dir := t.TempDir()
	params, report := filepath.Join(dir, "p.toml"), filepath.Join(dir, "fit.json")
	code, out, errs := runCLI("fit", "--measured", detailedRun, "--measured", infRun, "--starts", "1", "--max-iter", "2",
		"--free", "mem_bw_eff,step_overhead_us", "--out", params, "--report", report)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, w := range []string{"Fitted 2 parameters to 2 vllm bench result(s)", "mem_bw_eff", detailedRun, infRun, "output_throughput"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if b, err := os.ReadFile(params); err != nil || !strings.Contains(string(b), "mem_bw_eff") {
		t.Errorf("params file: %v\n%s", err, b)
	}
	var rep struct {
		Targets []struct {
			Name  string `json:"name"`
			After []struct {
				Metric string `json:"metric"`
			} `json:"after"`
		} `json:"targets"`
	}
	if b, err := os.ReadFile(report); err != nil || json.Unmarshal(b, &rep) != nil || len(rep.Targets) != 2 || len(rep.Targets[1].After) == 0 {
		t.Errorf("report: %v %+v", err, rep)
	}
	// The fitted parameters load.
	if code, _, errs := runCLI("simulate", "--measured", infRun, "--params", params); code != 0 {
		t.Errorf("simulate with the fitted parameters: exit %d\n%s", code, errs)
	}
}
