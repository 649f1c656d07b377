package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimulate(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI("simulate", "--workload", "bench-8Kx2", "--format", "json", "--slo-tpot-ms", "50")
	if code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, errs)
	}
	var m struct {
		Kind       string  `json:"kind"`
		Status     string  `json:"status"`
		OutputTokS float64 `json:"output_tok_s"`
		Goodput    *struct {
			Met bool `json:"met"`
		} `json:"goodput"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.Kind != "bench" || m.Status != "Valid" || m.OutputTokS <= 0 || m.Goodput == nil {
		t.Errorf("simulate json: %v %+v\n%s", err, m, out)
	}
	// Same command, same bytes.
	if _, again, _ := runCLI("simulate", "--workload", "bench-8Kx2", "--format", "json", "--slo-tpot-ms", "50"); again != out {
		t.Errorf("simulate is not deterministic")
	}
	trace := put(t, dir, "t.csv", "arrival_s,input_tokens,output_tokens\n0,100,5\n0.5,2000,20\n1,300,8\n")
	series := filepath.Join(dir, "kv.csv")
	code, out, errs = runCLI("simulate", "--workload", trace, "--series", series)
	if code != 0 || !strings.Contains(out, "3 submitted, 3 completed") || !strings.Contains(out, "trace replay") {
		t.Errorf("simulate trace: exit %d\n%s\n%s", code, out, errs)
	}
	if b, err := os.ReadFile(series); err != nil || !strings.HasPrefix(string(b), "t_s,kv_usage,running,waiting\n") {
		t.Errorf("series file: %v %q", err, b)
	}
	wl := put(t, dir, "w.toml", "kind = \"closed\"\n[closed]\nrequests = 8\nconcurrency = 4\n[lengths]\ninput_tokens = 512\noutput_tokens = 16\n")
	code, out, _ = runCLI("simulate", "--workload", wl, "--format", "csv")
	if code != 0 || !strings.HasPrefix(out, "workload,kind,seed,") || !strings.Contains(out, "\nw,closed,1,ok,") {
		t.Errorf("simulate csv: exit %d\n%s", code, out)
	}
	badKey := put(t, dir, "bad.toml", "kind = \"closed\"\n[closed]\nrequests = 8\nconcurency = 4\n")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"simulate"}, 2, "--workload: missing"},
		{[]string{"simulate", "--workload", "nope"}, 2, `unknown workload "nope"`},
		{[]string{"simulate", "--workload", "./missing.toml"}, 1, "no such file"},
		{[]string{"simulate", "--workload", badKey}, 1, `bad.toml:4: unknown key "closed.concurency"`},
		{[]string{"simulate", "--workload", "chat", "--format", "xml"}, 2, `--format "xml"`},
		{[]string{"simulate", "--workload", "chat", "--slo-quantile", "2"}, 2, "--slo-quantile 2"},
		{[]string{"simulate", "--workload", "bench-2Mx1"}, 1, "do not fit max_model_len"},
	}
	for _, c := range cases {
		code, _, errs := runCLI(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("servesim %v: exit %d (want %d), stderr does not mention %q:\n%s", c.args, code, c.code, c.want, errs)
		}
	}
}

// TestWorkloadExample: 'servesim workload --example' prints a file that simulate loads and runs;
// a preset is described; bad uses are usage errors.
func TestWorkloadExample(t *testing.T) {
	code, out, errs := runCLI("workload", "--example")
	if code != 0 || !strings.Contains(out, "kind = \"open\"") || !strings.Contains(out, "# [closed]") {
		t.Fatalf("workload --example: exit %d: %s\n%s", code, errs, out)
	}
	path := put(t, t.TempDir(), "mine.toml", out)
	code, sim, errs := runCLI("simulate", "--workload", path, "--requests", "40", "--quiet")
	if code != 0 || !strings.Contains(sim, "open loop: poisson, 4 req/s, 40 requests") {
		t.Errorf("simulate --workload (the example): exit %d: %s\n%s", code, errs, sim)
	}
	if code, out, _ := runCLI("workload", "chat"); code != 0 || !strings.HasPrefix(out, "chat: open loop: poisson, 2 req/s") {
		t.Errorf("workload chat: exit %d: %q", code, out)
	}
	for _, args := range [][]string{{"workload"}, {"workload", "--example", "chat"}, {"workload", "chat", "rag"}, {"workload", "nosuch"}} {
		if code, _, errs := runCLI(args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, want 2: %s", args, code, errs)
		}
	}
}

// TestNotesWhereTheyBelong: the note that the benchmark matrix stops below the default contexts
// comes with the commands that run the matrix, not with simulate; --quiet drops notes, not the
// result.
func TestNotesWhereTheyBelong(t *testing.T) {
	const cmd = "vllm serve meta-llama/Llama-3.1-8B-Instruct"
	const stops = "the matrix stops at 128K"
	code, _, stderr := runCLI("capacity", "--gpu", "H100", "--vllm-cmd", cmd)
	if code != 0 || !strings.Contains(stderr, stops) {
		t.Errorf("capacity: code %d, stderr %q: want the note %q", code, stderr, stops)
	}
	code, out, stderr := runCLI("simulate", "--gpu", "H100", "--vllm-cmd", cmd, "--workload", "chat", "--requests", "20")
	if code != 0 || strings.Contains(stderr, stops) || !strings.Contains(stderr, "note: hardware.count 1") || !strings.Contains(out, "Throughput") {
		t.Errorf("simulate: code %d, stderr %q: want the hardware note, not the matrix's", code, stderr)
	}
	code, out, stderr = runCLI("simulate", "-q", "--gpu", "H100", "--vllm-cmd", cmd, "--workload", "chat", "--requests", "20")
	if code != 0 || strings.Contains(stderr, "note:") || !strings.Contains(out, "Throughput") {
		t.Errorf("simulate -q: code %d, stderr %q: want no notes and the result", code, stderr)
	}
}

// TestMeasuredAcceptanceFlags: --mean-acceptance-length and --acceptance-rates put a measured
// acceptance into the scenario (config shows it, explain runs at it) and are refused, naming the
// flag, when they cannot apply.
func TestMeasuredAcceptanceFlags(t *testing.T) {
	code, out, stderr := runCLI("config", "--mean-acceptance-length", "2.2")
	if code != 0 || !strings.Contains(out, "mean_acceptance_length = 2.2") {
		t.Errorf("config --mean-acceptance-length 2.2: code %d, stderr %q: want it in [engine.speculative]", code, stderr)
	}
	code, out, stderr = runCLI("explain", "--acceptance-rates", "0.6,0.4,0.2,0.1,0.05,0.02,0.01")
	if code != 0 || !strings.Contains(out, "mean acceptance length 2.38 (engine.speculative.acceptance)") {
		t.Errorf("explain --acceptance-rates: code %d, stderr %q, out %q: want the measured rates (mean 2.38)", code, stderr, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--acceptance-rates", "0.6,0.4"}, "--acceptance-rates: engine.speculative.acceptance has 2 rates for num_speculative_tokens = 7"},
		{[]string{"--acceptance-rates", "0.6,0.7,0,0,0,0,0"}, "--acceptance-rates: engine.speculative.acceptance[1] = 0.7 exceeds"},
		{[]string{"--mean-acceptance-length", "9"}, "--mean-acceptance-length: engine.speculative.mean_acceptance_length = 9: must be in [1, 1 + num_speculative_tokens = 8]"},
		{[]string{"--mean-acceptance-length", "2", "--acceptance-rates", "0.5"}, "exclusive"},
		{[]string{"--gpu", "H100", "--vllm-cmd", "vllm serve meta-llama/Llama-3.1-8B-Instruct", "--mean-acceptance-length", "2"}, "--mean-acceptance-length: the scenario runs no speculative decoding"},
	} {
		code, _, stderr := runCLI(append([]string{"config"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("config %v: code %d, stderr %q: want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestReadyTimeoutOnlyForBenchCells: the benchmark's readiness timeout is refused for a workload
// that has no benchmark cell (it was ignored quietly).
func TestReadyTimeoutOnlyForBenchCells(t *testing.T) {
	code, _, stderr := runCLI("simulate", "--workload", "chat", "--requests", "20", "--ready-timeout-s", "10")
	if code != 2 || !strings.Contains(stderr, "--ready-timeout-s applies to the benchmark's cells") {
		t.Errorf("simulate chat --ready-timeout-s: code %d, stderr %q: want a usage error naming the flag", code, stderr)
	}
	if code, _, stderr := runCLI("simulate", "-q", "--workload", "bench-8Kx4", "--ready-timeout-s", "10"); code != 0 {
		t.Errorf("simulate bench-8Kx4 --ready-timeout-s: code %d, stderr %q", code, stderr)
	}
}
