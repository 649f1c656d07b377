package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fleetCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

// TestFleetPlanShardsMerge: a fleet plan split into two shards and merged prints what the plan
// run whole prints; 'plan --fleet' is 'fleet --plan'; the answer was checked one replica fewer.
func TestFleetPlanShardsMerge(t *testing.T) {
	trace := filepath.Join("..", "..", "workload", "testdata", "traces", "azure_code_300.csv")
	common := []string{"--vllm-cmd", "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 16384", "--gpu", "L4", "--router", "round-robin,least-outstanding",
		"--trace", trace, "--speed", "8", "--slo-ttft-ms", "1500", "--slo-quantile", "0.9", "-q"}
	whole, stderr, code := fleetCLI(t, append([]string{"plan", "--fleet"}, common...)...)
	if code != 0 {
		t.Fatalf("plan --fleet: exit %d: %s", code, stderr)
	}
	if !strings.Contains(whole, "answer: ") || !strings.Contains(whole, "misses") {
		t.Fatalf("no answer with its boundary:\n%s", whole)
	}
	dir := t.TempDir()
	var merge []string
	for i, sh := range []string{"0/2", "1/2"} {
		p := filepath.Join(dir, "s"+string(rune('0'+i))+".json")
		if _, stderr, code := fleetCLI(t, append([]string{"fleet", "--plan", "--shard", sh, "--out", p}, common...)...); code != 0 {
			t.Fatalf("shard %s: exit %d: %s", sh, code, stderr)
		}
		merge = append(merge, "--merge", p)
	}
	merged, stderr, code := fleetCLI(t, append([]string{"fleet", "--plan"}, merge...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	if merged != whole {
		t.Errorf("merged shards differ from the whole plan:\nmerged:\n%s\nwhole:\n%s", merged, whole)
	}
	if _, stderr, code := fleetCLI(t, "fleet", "--plan", merge[0], merge[1]); code == 0 || !strings.Contains(stderr, "missing") {
		t.Errorf("one shard of two merged: exit %d, %s", code, stderr)
	}
	// A shard run with another router view is a shard of another plan.
	other := filepath.Join(dir, "refresh.json")
	if _, stderr, code := fleetCLI(t, append([]string{"fleet", "--plan", "--shard", "1/2", "--router-refresh-ms", "100", "--out", other}, common...)...); code != 0 {
		t.Fatalf("shard with a refresh: exit %d: %s", code, stderr)
	}
	if _, stderr, code := fleetCLI(t, "fleet", "--plan", merge[0], merge[1], "--merge", other); code == 0 || !strings.Contains(stderr, "another plan") {
		t.Errorf("shards of plans with different router views merged: exit %d, %s", code, stderr)
	}
}

// TestFleetBadInput: errors name the file and line or the flag, exit 2 for usage.
func TestFleetBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("arrival_s,input_tokens,output_tokens\n0,10,5\n1,ten,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := fleetCLI(t, "fleet", "--trace", bad, "--stats"); code != 1 || !strings.Contains(stderr, "bad.csv: line 3: input_tokens") {
		t.Errorf("malformed row: exit %d, %q", code, stderr)
	}
	if _, stderr, code := fleetCLI(t, "fleet", "--rate", "3"); code != 2 || !strings.Contains(stderr, "--requests") {
		t.Errorf("--rate without a count: exit %d, %q", code, stderr)
	}
	if _, stderr, code := fleetCLI(t, "fleet", "--rate", "3", "--requests", "5", "--router", "fastest"); code != 2 || !strings.Contains(stderr, "least-outstanding") {
		t.Errorf("unknown router: exit %d, %q", code, stderr)
	}
	for _, v := range []string{"-5", "NaN", "+Inf", "1e-9", "1e10"} {
		if _, stderr, code := fleetCLI(t, "fleet", "--rate", "3", "--requests", "5", "--router", "least-kv", "--router-refresh-ms", v); code != 2 || !strings.Contains(stderr, "--router-refresh-ms") {
			t.Errorf("--router-refresh-ms %s: exit %d, %q", v, code, stderr)
		}
	}
}

// TestFleetGroupFlag: a fleet given as one --group (with --replicas 0) prints the bytes of the
// same fleet given as --config and --replicas; a second group of another GPU shows in the
// report; malformed or contradictory groups are usage errors naming the flag and the value.
func TestFleetGroupFlag(t *testing.T) {
	dir := t.TempDir()
	cfg := func(name, vllm, gpu string) string {
		p := filepath.Join(dir, name)
		if _, stderr, code := fleetCLI(t, "config", "--vllm-cmd", vllm, "--gpu", gpu, "-o", p, "-q"); code != 0 {
			t.Fatalf("config %s: exit %d: %s", name, code, stderr)
		}
		return p
	}
	h100 := cfg("h100.toml", "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 16384", "H100-SXM")
	h200 := cfg("h200.toml", "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 16384", "H200-SXM")
	llama2 := cfg("llama2.toml", "vllm serve meta-llama/Llama-2-7b-hf", "H100-SXM")
	traffic := []string{"--rate", "60", "--requests", "300", "--router", "least-outstanding", "-q"}
	for _, format := range []string{"text", "json"} {
		byReplicas, stderr, code := fleetCLI(t, append([]string{"fleet", "--config", h100, "--replicas", "3", "--format", format}, traffic...)...)
		if code != 0 {
			t.Fatalf("--replicas: exit %d: %s", code, stderr)
		}
		byGroup, stderr, code := fleetCLI(t, append([]string{"fleet", "--replicas", "0", "--group", h100 + ":3", "--format", format}, traffic...)...)
		if code != 0 {
			t.Fatalf("--group: exit %d: %s", code, stderr)
		}
		if byGroup != byReplicas {
			t.Errorf("%s: one --group differs from --config and --replicas:\n%s\nwant:\n%s", format, byGroup, byReplicas)
		}
	}
	out, stderr, code := fleetCLI(t, append([]string{"fleet", "--config", h100, "--replicas", "2", "--group", h200 + ":2"}, traffic...)...)
	if code != 0 {
		t.Fatalf("two groups: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"4 replicas in 2 groups", "  g0  2 x meta-llama/Llama-3.1-8B-Instruct on 1 x H100-SXM\n",
		"  g1  2 x meta-llama/Llama-3.1-8B-Instruct on 1 x H200-SXM (" + h200 + ")\n", "per group", "replica  group"} {
		if !strings.Contains(out, want) {
			t.Errorf("two groups: no %q in:\n%s", want, out)
		}
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--group", h200 + ":x"}, 2, `--group "` + h200 + `:x": want FILE:N`},
		{[]string{"--group", h200}, 2, "want FILE:N"},
		{[]string{"--group", filepath.Join(dir, "none.toml") + ":2"}, 1, "none.toml"},
		{[]string{"--group", llama2 + ":1"}, 2, "meta-llama/Llama-2-7b-hf is not the first group's, meta-llama/Llama-3.1-8B-Instruct"},
		{[]string{"--replicas", "0", "--config", h100, "--group", h200 + ":1"}, 2, "--replicas 0: the --group deployments alone"},
		{[]string{"--replicas", "-1", "--group", h200 + ":1"}, 2, "--replicas -1"},
		{[]string{"--plan", "--slo-ttft-ms", "500", "--group", h200 + ":1"}, 2, "--plan does not take --group"},
	} {
		args := append([]string{"fleet", "--config", h100}, c.args...)
		if c.args[0] == "--replicas" {
			args = append([]string{"fleet"}, c.args...)
		}
		_, stderr, code := fleetCLI(t, append(args, traffic...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
}
