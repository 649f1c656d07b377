package main

import (
	"strings"
	"testing"

	"github.com/servesim/servesim/model/hf"
)

// TestModelListAndShowBuiltins: 'model list' names every built-in, and 'model show ID' works on
// each offline, with its quantization, max_model_len and MTP layers.
func TestModelListAndShowBuiltins(t *testing.T) {
	code, out, errs := runCLI("model", "list")
	if code != 0 {
		t.Fatalf("model list: exit %d: %s", code, errs)
	}
	for _, id := range hf.BuiltinIDs() {
		if !strings.Contains(out, id) {
			t.Errorf("model list lacks %s", id)
		}
	}
	for _, id := range hf.BuiltinIDs() {
		code, out, errs := runCLI("model", "show", id)
		if code != 0 {
			t.Errorf("model show %s: exit %d: %s", id, code, errs)
			continue
		}
		for _, want := range []string{"Layers by kind", "Parameters   total", "Weights", "Quantization", "Context", "KV cache"} {
			if !strings.Contains(out, want) {
				t.Errorf("model show %s lacks %q:\n%s", id, want, out)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"zai-org/GLM-5-FP8"}, []string{"Quantization fp8", "max_model_len 202,752", "1 multi-token-prediction layer", "sparse MLA", "fp8 "}},
		{[]string{"openai/gpt-oss-120b"}, []string{"Quantization mxfp4", "sliding window 128", "sinks", "mxfp4 60.91 GB"}},
		{[]string{"meta-llama/Llama-4-Scout-17B-16E-Instruct"}, []string{"chunked local 8192", "NoPE", "vision encoder", "max_model_len 10,485,760"}},
		{[]string{"meta-llama/Llama-3.1-8B-Instruct", "--quantization", "fp8"}, []string{"fp8-tensor 6.98 GB (fp8 GEMMs)", "Quantization fp8", "bf16 2.10 GB"}},
		{[]string{"meta-llama--llama-3.1-8b-instruct"}, []string{"total 8.03 B", "Quantization none"}},
	} {
		code, out, errs := runCLI(append([]string{"model", "show"}, tc.args...)...)
		for _, w := range tc.want {
			if code != 0 || !strings.Contains(out, w) {
				t.Errorf("model show %v lacks %q (exit %d, %s):\n%s", tc.args, w, code, errs, out)
			}
		}
	}
	if code, _, errs := runCLI("model", "show", "zai-org/GLM-5-FP8", "--quantization", "awq"); code != 1 || !strings.Contains(errs, "fp8 checkpoint") {
		t.Errorf("awq on an fp8 checkpoint: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI("model", "show", "meta-llama/Llama-3.1-405B"); code != 1 || !strings.Contains(errs, "no description found offline") ||
		!strings.Contains(errs, "huggingface-cli download meta-llama/Llama-3.1-405B config.json") {
		t.Errorf("unknown id: exit %d: %s", code, errs)
	}
}
