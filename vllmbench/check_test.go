package vllmbench

import (
	"strings"
	"testing"

	"github.com/servesim/servesim/model/deploy"
)

func TestCheckServer(t *testing.T) {
	for _, c := range []struct {
		ref   string
		names []string
		same  bool
	}{
		{"nvidia/GLM-5.3-Flash-NVFP4", []string{"nvidia/GLM-5.3-Flash-NVFP4"}, true},
		{"nvidia/GLM-5.3-Flash-NVFP4", []string{"", "glm-5.3-flash"}, true},
		{"nvidia/GLM-5.3-Flash-NVFP4", []string{"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct"}, false},
		{"/models/Llama-3.1-8B-Instruct/", []string{"meta-llama/Llama-3.1-8B-Instruct"}, true},
		{"", []string{"anything"}, true},
	} {
		if got := SameModel(c.ref, c.names); got != c.same {
			t.Errorf("SameModel(%q, %q) = %v, want %v", c.ref, c.names, got, c.same)
		}
	}
	e := &deploy.EngineConfig{TensorParallel: 4, PipelineParallel: 1, DataParallel: 1, MaxNumSeqs: 32}
	r := &Result{Name: "run.json", ModelID: "m", Metadata: []string{"tp=4", "max-num-seqs=32", "note=x"}}
	if err := r.CheckServer([]string{"m"}, e); err != nil {
		t.Errorf("matching metadata: %v", err)
	}
	r.Metadata = []string{"tp=8", "max_num_seqs=64"}
	if err := r.CheckServer([]string{"m"}, e); err == nil || !strings.Contains(err.Error(), "tensor_parallel_size 8 (the scenario: 4), max_num_seqs 64 (the scenario: 32)") {
		t.Errorf("other server: %v", err)
	}
	r.ModelID = "other"
	if err := r.CheckServer([]string{"m"}, e); err == nil || !strings.Contains(err.Error(), `measured model "other"`) {
		t.Errorf("other model: %v", err)
	}
}
