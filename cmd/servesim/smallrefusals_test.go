package main

import (
	"strings"
	"testing"
)

// TestSmallRefusals: values that ran silently wrong are refused or noted. A bad plan list value
// and a --tp that divides no GPU count are usage errors (exit 2); a --vllm-bench for result files
// is given once or once per file; max-num-batched-tokens below max-num-seqs is refused as vLLM
// refuses it; a vLLM version later than any servesim knows gets a note.
func TestSmallRefusals(t *testing.T) {
	plan := []string{"plan", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--input-tokens", "1000", "--output-tokens", "100", "--users", "2",
		"--gpu-kinds", "H100", "--quiet"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-num-seqs", "0"}, "max-num-seqs 0: must be in 1.."},
		{[]string{"--gpu-memory-utilization", "2"}, "gpu-memory-utilization 2: must be in (0, 1]"},
		{[]string{"--kv-cache-dtype", "fp7"}, `kv-cache-dtype "fp7"`},
		{[]string{"--gpu-counts", "4", "--tp", "3"}, "tp [3] divides none of the GPU counts [4]"},
	} {
		code, _, stderr := runCLI(append(append([]string(nil), plan...), c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("plan %v: exit %d: %s; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}

	res := resultFiles[:2]
	b := "vllm bench serve --model nvidia/GLM-5.3-Flash-NVFP4 --dataset-name random --random-input-len 1000 --random-output-len 100 --num-prompts 10"
	for _, cmd := range []string{"validate", "fit"} {
		args := []string{cmd}
		if cmd == "fit" {
			args = append(args, "--measured", res[0], "--measured", res[1])
		} else {
			args = append(args, res...)
		}
		args = append(args, "--vllm-bench", b, "--vllm-bench", b, "--vllm-bench", b, "--quiet")
		code, _, stderr := runCLI(args...)
		if code != 2 || !strings.Contains(stderr, "--vllm-bench given 3 times for 2 result file") {
			t.Errorf("%s with 2 result files and 3 --vllm-bench: exit %d: %s", cmd, code, stderr)
		}
	}

	serve := "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192"
	code, _, stderr := runCLI("simulate", "--gpu", "H100", "--vllm-cmd", serve+" --max-num-batched-tokens 64 --max-num-seqs 256", "--workload", "chat", "--quiet")
	if code == 0 || !strings.Contains(stderr, "max_num_batched_tokens = 64 is below max_num_seqs = 256: vLLM refuses this") {
		t.Errorf("64 batched tokens, 256 sequences: exit %d: %s", code, stderr)
	}
	for v, note := range map[string]bool{"999.0.0": true, "0.33.0": true, "0.32.1rc1.dev96+g8c60cf07b": false, "0.28.0": false} {
		code, _, stderr := runCLI("simulate", "--gpu", "H100", "--vllm-cmd", serve, "--vllm-version", v, "--workload", "chat", "--quiet")
		if got := strings.Contains(stderr, "later than any release servesim knows"); code != 0 || got != note {
			t.Errorf("--vllm-version %s: exit %d, note %v (want %v): %s", v, code, got, note, stderr)
		}
	}
}
