package main

import (
	"strings"
	"testing"
)

// TestSmallFaults: the output faults a user trips over: token counts with K on --output-tokens,
// PP on the Server line, no drafter row without a drafter, an H200's FP4 peak, one stream.
func TestSmallFaults(t *testing.T) {
	// --output-tokens takes 1K as --input-tokens takes 8K.
	code, out, errs := runCLI("plan", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--input-tokens", "1000", "--output-tokens", "1K", "--users", "2",
		"--gpu-kinds", "H100", "--gpu-counts", "1", "--max-num-seqs", "8", "--max-num-batched-tokens", "8192", "--kv-cache-dtype", "auto",
		"--spec", "off", "--gpu-memory-utilization", "0.9", "--weights", "native", "--slo-tpot-ms", "30", "--quiet")
	if code != 0 || !strings.Contains(out, "output 1024 tokens") {
		t.Errorf("plan --output-tokens 1K: exit %d: %s\n%s", code, errs, out)
	}
	// One row is "1 row"; the answer column stands apart from P(meet).
	if !strings.Contains(out, "; 1 row, 1 simulation:") || !strings.Contains(out, "P(meet)  answer") || strings.Contains(out, "0 pruned (") {
		t.Errorf("plan table:\n%s", out)
	}
	// The Server line names pipeline parallelism.
	code, out, errs = runCLI("simulate", "--vllm-cmd", "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 2 --pipeline-parallel-size 2",
		"--gpu", "H100", "--workload", "bench-8Kx1", "--quiet")
	if code != 0 || !strings.Contains(out, "on 4 x H100-SXM, TP2 PP2,") {
		t.Errorf("simulate with PP 2: exit %d: %s\nServer line without PP:\n%s", code, errs, out)
	}
	if !strings.Contains(out, "x 1 stream,") {
		t.Errorf("simulate bench-8Kx1: want 'x 1 stream,' in the workload line:\n%s", out)
	}
	// No drafter row without a drafter; the seed's drafter keeps it.
	code, out, _ = runCLI("capacity", "--vllm-cmd", "vllm serve meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100", "--quiet")
	if code != 0 || strings.Contains(out, "weights: drafter") {
		t.Errorf("capacity without a drafter: exit %d, a drafter row:\n%s", code, out)
	}
	if _, out, _ = runCLI("capacity", "--quiet"); !strings.Contains(out, "weights: drafter") {
		t.Errorf("seed capacity: no drafter row")
	}
	// A GPU without fp4 tensor cores says so, not "0 TFLOPS" or "- TFLOPS".
	_, out, _ = runCLI("hardware", "show", "H200")
	if !strings.Contains(out, "dense FP4              none") || strings.Contains(out, "- TFLOPS") || strings.Contains(out, " 0 TFLOPS") {
		t.Errorf("hardware show H200:\n%s", out)
	}
}
