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
