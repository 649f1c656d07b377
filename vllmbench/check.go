package vllmbench

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/servesim/servesim/model/deploy"
)

// modelKey is a model reference reduced for comparison: the last path element, lower case,
// without a trailing slash.
func modelKey(ref string) string {
	ref = strings.TrimRight(strings.TrimSpace(ref), "/")
	return strings.ToLower(path.Base(strings.ReplaceAll(ref, "\\", "/")))
}

// SameModel reports whether a result file's model reference names one of names (a scenario's
// model reference, architecture name, served model name): equal references, or one name inside
// the other (the checkpoint nvidia/GLM-5.3-Flash-NVFP4 and the architecture glm-5.3-flash). An
// empty reference matches anything.
func SameModel(ref string, names []string) bool {
	a := modelKey(ref)
	if a == "" || a == "." {
		return true
	}
	for _, n := range names {
		b := modelKey(n)
		if b == "" || b == "." {
			continue
		}
		if a == b || strings.Contains(a, b) || strings.Contains(b, a) {
			return true
		}
	}
	return false
}

// ModelMismatch is a result file measured on another model than the one simulated.
type ModelMismatch struct {
	File, Measured string
}

func (m *ModelMismatch) Error() string {
	return fmt.Sprintf("%s: measured model %q", m.File, m.Measured)
}

// CheckServer compares the file's model (model_id, else tokenizer_id) with the names the simulated
// model goes by, and the server flags its --metadata recorded (tensor_parallel_size=4,
// max_num_seqs=64, ...; tp, pp and dp for short) with the simulated engine's. A file measured on
// another model (*ModelMismatch) or another server is an error: its errors would describe the
// mismatch, not the simulator.
func (r *Result) CheckServer(names []string, e *deploy.EngineConfig) error {
	if r.ModelID != "" && !SameModel(r.ModelID, names) && (r.TokenizerID == "" || !SameModel(r.TokenizerID, names)) {
		return &ModelMismatch{File: r.Name, Measured: r.ModelID}
	}
	engine := map[string]int{
		"tensor_parallel_size":   e.TensorParallel,
		"pipeline_parallel_size": e.PipelineParallel,
		"data_parallel_size":     e.DataParallel,
		"max_num_seqs":           e.MaxNumSeqs,
		"max_num_batched_tokens": e.MaxNumBatchedTokens,
		"max_model_len":          e.MaxModelLen,
	}
	short := map[string]string{"tp": "tensor_parallel_size", "pp": "pipeline_parallel_size", "dp": "data_parallel_size"}
	var diffs []string
	for _, kv := range r.Metadata {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		key := strings.ReplaceAll(strings.ToLower(strings.TrimLeft(k, "-")), "-", "_")
		if long, ok := short[key]; ok {
			key = long
		}
		want, known := engine[key]
		if !known {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n == want {
			continue
		}
		diffs = append(diffs, fmt.Sprintf("%s %d (the scenario: %d)", key, n, want))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%s: the run's metadata records %s", r.Name, strings.Join(diffs, ", "))
	}
	return nil
}
