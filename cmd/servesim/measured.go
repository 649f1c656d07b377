package main

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/vllmbench"
	"github.com/servesim/servesim/workload"
)

// resultWorkload is the one mapping of a vllm bench serve result file to a simulated run, shared
// by simulate --measured, validate and fit: the workload recovered from the file (with the i-th
// --vllm-bench command for its dataset), the command and the notes on what was assumed. The run
// is seeded with the scenario's seed (--seed) wherever it is simulated.
func resultWorkload(res *vllmbench.Result, bf *benchFlags, fs *pflag.FlagSet, i int) (*workload.Spec, *vllmbench.Command, []string, error) {
	cmd, err := bf.command(i)
	if err != nil {
		return nil, nil, nil, err
	}
	o := bf.options(fs)
	spec, notes, err := res.Workload(vllmbench.RecoverOptions{Command: cmd, SpecialTokens: o.SpecialTokens, CharsPerToken: o.CharsPerToken})
	if err != nil {
		return nil, nil, nil, err
	}
	return spec, cmd, notes, nil
}

// modelKey is a model reference reduced for comparison: the last path element, lower case, without
// a trailing slash.
func modelKey(ref string) string {
	ref = strings.TrimRight(strings.TrimSpace(ref), "/")
	return strings.ToLower(path.Base(strings.ReplaceAll(ref, "\\", "/")))
}

// sameModel reports whether a result file's model names the scenario's: equal references, or one
// name inside the other (the checkpoint nvidia/GLM-5.3-Flash-NVFP4 and the architecture
// glm-5.3-flash).
func sameModel(file string, names []string) bool {
	a := modelKey(file)
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

// scenarioModelNames are the names a result file may give the scenario's model: the model
// reference, the served model name, the architecture's name and the model file.
func scenarioModelNames(r *scenario.Resolved) []string {
	names := []string{r.Scenario.Model.Name, r.Deployment.Model.Name, r.Deployment.Engine.ServedModel}
	if r.Scenario.Model.File != "" {
		names = append(names, path.Dir(strings.ReplaceAll(r.Scenario.Model.File, "\\", "/")))
	}
	return names
}

// checkResult compares a result file's model (model_id and tokenizer_id) and the server flags its
// --metadata recorded (tensor_parallel_size=4, max_num_seqs=64, ...) with the scenario's server,
// and refuses a file measured on another model or server: its errors would describe the mismatch,
// not the simulator.
func checkResult(res *vllmbench.Result, r *scenario.Resolved) error {
	names := scenarioModelNames(r)
	if res.ModelID != "" && !sameModel(res.ModelID, names) && (res.TokenizerID == "" || !sameModel(res.TokenizerID, names)) {
		return usagef("%s: measured model %q, but the scenario serves %q (%s): give the server that ran it (--vllm-cmd \"vllm serve %s ...\" --gpu NAME, or --config)",
			res.Name, res.ModelID, r.Scenario.Model.Name, r.Deployment.Model.Name, res.ModelID)
	}
	e := &r.Deployment.Engine
	recorded := map[string]int{
		"tensor_parallel_size":   e.TensorParallel,
		"pipeline_parallel_size": e.PipelineParallel,
		"data_parallel_size":     e.DataParallel,
		"max_num_seqs":           e.MaxNumSeqs,
		"max_num_batched_tokens": e.MaxNumBatchedTokens,
		"max_model_len":          e.MaxModelLen,
	}
	var diffs []string
	for _, kv := range res.Metadata {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		key := strings.ReplaceAll(strings.ToLower(strings.TrimLeft(k, "-")), "-", "_")
		switch key {
		case "tp":
			key = "tensor_parallel_size"
		case "pp":
			key = "pipeline_parallel_size"
		case "dp":
			key = "data_parallel_size"
		}
		want, known := recorded[key]
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
		return usagef("%s: the run's metadata records %s: give the server that ran it (--vllm-cmd \"vllm serve ...\", or --config)", res.Name, strings.Join(diffs, ", "))
	}
	return nil
}
