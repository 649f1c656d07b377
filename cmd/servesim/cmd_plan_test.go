package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/hardware"
)

// runCLI runs servesim with args and returns the exit code, stdout and stderr.
func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func put(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// smallPlan is a plan query small enough for the race detector: two GPU kinds, one count, one
// flag value each, a 2-stream 8K cell.
var smallPlan = []string{"plan", "--context", "8K", "--users", "2", "--slo-tpot-ms", "40", "--gpu-kinds", "RTX-PRO-6000-Server,H200",
	"--gpu-counts", "4", "--max-num-seqs", "8", "--max-num-batched-tokens", "8192", "--kv-cache-dtype", "fp8", "--spec", "off,7",
	"--gpu-memory-utilization", "0.92"}

func TestPlanShardsAndMerge(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full.json")
	if code, _, errs := runCLI(append(smallPlan, "--format", "json", "--out", full)...); code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	var shards []string
	for i := 0; i < 3; i++ {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		if code, _, errs := runCLI(append(smallPlan, "--shard", fmt.Sprintf("%d/3", i), "--format", "json", "--out", f, "--workers", "1")...); code != 0 {
			t.Fatalf("plan shard %d: exit %d: %s", i, code, errs)
		}
		shards = append(shards, f)
	}
	merged := filepath.Join(dir, "merged.json")
	if code, _, errs := runCLI(append([]string{"merge", "--format", "json", "--out", merged}, shards...)...); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	a, _ := os.ReadFile(full)
	b, _ := os.ReadFile(merged)
	if !bytes.Equal(a, b) {
		t.Errorf("merged shards differ from the unsharded plan")
	}
	var plan struct {
		Results []struct {
			Status string `json:"status"`
		} `json:"results"`
	}
	if err := json.Unmarshal(a, &plan); err != nil || len(plan.Results) == 0 {
		t.Fatalf("plan JSON: %v", err)
	}
	code, out, errs := runCLI(append([]string{"merge"}, shards...)...)
	if code != 0 || !strings.Contains(out, "Best configuration of each hardware layout") || !strings.Contains(out, "4 x RTX-PRO-6000-Server TP4") {
		t.Errorf("merge table: exit %d\n%s\n%s", code, out, errs)
	}
	code, _, errs = runCLI("merge", shards[0], shards[2])
	if code != 1 || !strings.Contains(errs, "shards [1] of 3 missing") {
		t.Errorf("merge with a missing shard: exit %d: %s", code, errs)
	}
	bad := put(t, dir, "bad.json", `{"servesim_plan": 1, "bogus": 2}`)
	code, _, errs = runCLI("merge", bad)
	if code != 1 || !strings.Contains(errs, "bad.json: not a servesim plan") {
		t.Errorf("merge of a bad file: exit %d: %s", code, errs)
	}
	code, out, _ = runCLI(append(smallPlan, "--format", "csv")...)
	if code != 0 || !strings.HasPrefix(out, "rank,index,status,stage,gpu,") {
		t.Errorf("plan csv: exit %d\n%s", code, out)
	}
}

func TestPlanTable(t *testing.T) {
	code, out, errs := runCLI(smallPlan...)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	for _, want := range []string{"Objectives   TPOT p90 <= 40 ms", "RTX-PRO-6000-Server", "H200-SXM", "Capacity frontier", "Pruned", "answer", "meets"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan table lacks %q:\n%s", want, out)
		}
	}
	// The compact table fits a wide terminal (152 columns: the answer stands two spaces apart
	// from P(meet)); --wide has every column.
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "rank") && strings.Contains(l, "hardware") && len(l) > 152 {
			t.Errorf("compact table header is %d columns wide:\n%s", len(l), l)
		}
	}
	code, wide, errs := runCLI(append(smallPlan, "--wide")...)
	if code != 0 || !strings.Contains(wide, "calibrated") || !strings.Contains(wide, "TPOT headroom") {
		t.Errorf("plan --wide: exit %d, lacks the source or headroom columns:\n%s\n%s", code, wide, errs)
	}
	if !strings.Contains(errs, "simulations") {
		t.Errorf("no progress summary on stderr: %s", errs)
	}
}

func TestPlanUsageErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"plan"}, 2, "give --context and --users"},
		{[]string{"plan", "--context", "8K"}, 2, "give --context and --users"},
		{[]string{"plan", "--context", "8Q", "--users", "2"}, 2, `--context: context "8Q"`},
		{[]string{"plan", "--context", "8K", "--users", "2", "--workload", "chat"}, 2, "exclusive"},
		{[]string{"plan", "--context", "8K", "--users", "2", "--shard", "3/2"}, 2, `--shard "3/2"`},
		{[]string{"plan", "--context", "8K", "--users", "2", "--gpu-kinds", "TPU"}, 2, `unknown GPU "TPU"`},
		{[]string{"plan", "--context", "8K", "--users", "2", "--max-num-seqs", "x"}, 2, `invalid argument "x" for "--max-num-seqs"`},
		{[]string{"plan", "--context", "8K", "--users", "2", "--spec", "fast"}, 2, `--spec: "fast"`},
		{[]string{"plan", "--context", "8K", "--users", "2", "--ep", "maybe"}, 2, `--ep: "maybe"`},
		{[]string{"plan", "--context", "8K", "--users", "2", "--slo-tpot-ms", "-3"}, 2, "--slo-tpot-ms -3"},
		{[]string{"plan", "--context", "8K", "--users", "2", "--gpu-memory-utilization", "1.5", "--gpu-kinds", "B200"}, 2, "gpu-memory-utilization 1.5"},
		{[]string{"plan", "--context", "8K", "--users", "2", "--model", "gpt-7"}, 1, `model "gpt-7": no description found offline`},
		{[]string{"plan", "--context", "8K", "--users", "2", "--model", "org/gpt-7"}, 1, "huggingface-cli download org/gpt-7 config.json"},
		{[]string{"plan", "--context", "8K", "--input-tokens", "1000", "--users", "2"}, 2, "exclusive"},
		{[]string{"plan", "--input-tokens", "1000"}, 2, "--input-tokens needs --users"},
		{[]string{"plan", "--input-tokens", "1000", "--users", "2", "--output-tokens", "0"}, 2, `--output-tokens "0"`},
		{[]string{"plan", "--context", "40K", "--users", "2", "--model", "../../model/hf/testdata/qwen3-32b/config.json"}, 1, "more than the max_model_len 40960"},
		{[]string{"plan", "--context", "8K", "--users", "2", "--model", "../../model/hf/testdata/qwen3-32b/config.json", "--max-model-len", "65536"}, 1, "allows at most 40960"},
		{[]string{"plan", "--context", "8K", "--users", "2", "--format", "xml"}, 2, `--format "xml"`},
		{[]string{"plan", "--context", "8K", "--users", "2", "--out", filepath.Join(dir, "no", "dir", "x.json")}, 1, "cannot write"},
		{[]string{"merge"}, 2, "give the shard files"},
	}
	for _, c := range cases {
		code, _, errs := runCLI(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("servesim %v: exit %d (want %d), stderr does not mention %q:\n%s", c.args, code, c.code, c.want, errs)
		}
		if strings.Contains(errs, "goroutine ") {
			t.Errorf("servesim %v: stack trace:\n%s", c.args, errs)
		}
	}
}

func TestHardwareAndModel(t *testing.T) {
	code, out, _ := runCLI("hardware", "list")
	if code != 0 {
		t.Fatalf("hardware list: exit %d", code)
	}
	for _, g := range hardware.BuiltinCatalog().GPUs {
		if !strings.Contains(out, g.Name) {
			t.Errorf("hardware list lacks %s", g.Name)
		}
	}
	code, out, _ = runCLI("hardware", "show", "h100")
	if code != 0 || !strings.Contains(out, "H100-SXM") || !strings.Contains(out, "weight-only formats    nvfp4, mxfp4") {
		t.Errorf("hardware show h100: exit %d\n%s", code, out)
	}
	// An override file changes a price and adds a GPU; --format toml round-trips.
	dir := t.TempDir()
	_, toml, _ := runCLI("hardware", "show", "B200", "--format", "toml")
	block := toml[strings.Index(toml, "[[gpu]]"):]
	block = strings.Replace(block, "price_per_hour = 5.5", "price_per_hour = 4.25", 1)
	f := put(t, dir, "gpus.toml", block+"\n"+strings.Replace(block, `name = "B200"`, `name = "B200-cheap"`, 1))
	code, out, errs := runCLI("hardware", "list", "--gpu-catalog", f)
	if code != 0 || !strings.Contains(out, "4.25") || !strings.Contains(out, "B200-cheap") {
		t.Errorf("hardware list --gpu-catalog: exit %d\n%s\n%s", code, out, errs)
	}
	bad := put(t, dir, "bad.toml", "[[gpu]]\nname = \"X\"\nspeed = 3\n")
	if code, _, errs := runCLI("hardware", "list", "--gpu-catalog", bad); code != 1 || !strings.Contains(errs, `unknown key "gpu.speed"`) {
		t.Errorf("bad catalog: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI("hardware", "show", "TPU"); code != 2 || !strings.Contains(errs, `unknown GPU "TPU"`) {
		t.Errorf("hardware show TPU: exit %d: %s", code, errs)
	}
	if code, _, _ := runCLI("hardware"); code != 2 {
		t.Errorf("hardware without a subcommand: exit %d", code)
	}

	code, out, _ = runCLI("model", "show", "glm-5.3-flash")
	for _, want := range []string{"Layers by kind", "sparse MLA", "linear attention", "Parameters   total", "active", "nvfp4", "KV cache", "fp8 7579 bytes", "State"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("model show glm-5.3-flash lacks %q (exit %d):\n%s", want, code, out)
		}
	}
	code, out, _ = runCLI("model", "show", filepath.Join("..", "..", "model", "hf", "testdata", "deepseek-v3", "config.json"))
	if code != 0 || !strings.Contains(out, "total 671.03 B") || !strings.Contains(out, "bf16 70272 bytes") {
		t.Errorf("model show deepseek-v3:\n%s", out)
	}
	code, out, _ = runCLI("model", "show", filepath.Join("..", "..", "model", "hf", "testdata", "llama-3.1-70b"))
	if code != 0 || !strings.Contains(out, "total 70.55 B") {
		t.Errorf("model show llama-3.1-70b (a directory):\n%s", out)
	}
	unknown := put(t, dir, "config.json", `{"model_type": "rwkv", "hidden_size": 64}`)
	if code, _, errs := runCLI("model", "show", unknown); code != 1 || !strings.Contains(errs, "llama") {
		t.Errorf("unknown family: exit %d: %s", code, errs)
	}
	if code, _, _ := runCLI("model", "list", "x"); code != 2 {
		t.Errorf("model list x: exit %d", code)
	}
	if code, _, _ := runCLI("model", "frobnicate"); code != 2 {
		t.Errorf("model frobnicate: exit %d", code)
	}
}

// TestConfigSources: `servesim config` gives every parameter's level and where its value comes
// from, level by level.
func TestConfigSources(t *testing.T) {
	code, out, errs := runCLI("config", "--gpu", "RTX-PRO-6000-Workstation")
	if code != 0 {
		t.Fatalf("config: exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"mem_bw_eff = ", "] gpu; source: transferred from RTX-PRO-6000-Server (same generation",
		"] engine; source: calibrated for vllm 0.32.1rc1",
		"accept_tau = ", "] model; source: calibrated for glm-5.3-flash",
		"gemm_eff_fp8 = 0.6 # fraction [0.15, 0.95] gpu; source: Blackwell PCIe and workstation",
		"same_prompt = 0.0 # fraction [0, 1] workload; source: set by what runs",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config lacks %q", want)
		}
	}
	code, out, _ = runCLI("config", "--uncalibrated", "--gpu", "H100-SXM")
	if code != 0 || !strings.Contains(out, "gemm_eff_bf16 = 0.756 # fraction [0.2, 0.95] gpu; source: Hopper (H100, H200, H20) prior [0.65, 0.85]: Vidur H100 profiles") {
		t.Errorf("config --uncalibrated on H100: exit %d, no Hopper prior with its source", code)
	}
}

// TestPlanMeasuredAcceptanceNeedsTheServer: a measured acceptance describes the scenario's
// server; planning another model with it is refused (it was dropped quietly).
func TestPlanMeasuredAcceptanceNeedsTheServer(t *testing.T) {
	code, _, stderr := runCLI("plan", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--users", "8", "--context", "8K", "--gpu-kinds", "H100", "--mean-acceptance-length", "2")
	if code != 2 || !strings.Contains(stderr, "is not its model") {
		t.Errorf("plan --model Llama --mean-acceptance-length: code %d, stderr %q: want a usage error", code, stderr)
	}
}
