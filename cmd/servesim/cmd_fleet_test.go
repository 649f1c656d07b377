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
}
