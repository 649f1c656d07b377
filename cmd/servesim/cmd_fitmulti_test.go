package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesim/servesim/scenario"
)

// TestFitLOSODeterministic: a small leave-one-source-out run prints the same figures twice.
func TestFitLOSODeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the excerpt several times")
	}
	args := []string{"fit", "--cv", "loso", "--no-seed", "--max-jobs", "2", "--max-requests", "20", "--max-iter", "1", "--workers", "2",
		corpusExcerpt}
	var outs [2]string
	for i := range outs {
		if raceEnabled && i > 0 {
			// One run shows the workers' races; two runs' equality is the plain run's check.
			outs[i] = outs[0]
			continue
		}
		code, out, errs := runCLI(args...)
		if code != 0 {
			t.Fatalf("fit: exit %d: %s", code, errs)
		}
		if !strings.Contains(errs, "fold 3/3") {
			t.Errorf("progress: %q", errs)
		}
		outs[i] = out
	}
	if outs[0] != outs[1] {
		t.Errorf("two runs differ:\n%s\n%s", outs[0], outs[1])
	}
	if !strings.Contains(outs[0], "inference-sim-training") {
		t.Errorf("output:\n%s", outs[0])
	}
}

// TestFitMultiOut: a multi-source fit writes its values as sets, one per GPU, engine series and
// model the data moved, and a prediction with --params applies the set of its GPU: the excerpt's
// Llama-2-7B row on an H100 runs with the fitted H100 values (calibrated), and the file reads
// back. --out with --cv is refused (one fit per fold, nothing to write).
func TestFitMultiOut(t *testing.T) {
	if code, _, errs := runCLI("fit", "--cv", "loso", "--out", filepath.Join(t.TempDir(), "x.toml"), corpusExcerpt); code != 2 || !strings.Contains(errs, "one fit per fold") {
		t.Errorf("--out with --cv: exit %d: %s", code, errs)
	}
	out := filepath.Join(t.TempDir(), "sets.toml")
	code, _, errs := runCLI("fit", "--no-seed", "--max-jobs", "2", "--max-requests", "20", "--max-iter", "1", "--workers", "2", "--out", out, corpusExcerpt)
	if code != 0 {
		t.Fatalf("fit: exit %d: %s", code, errs)
	}
	f, err := scenario.LoadParamsFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var h100 *scenario.ParamSet
	for i, s := range f.Keyed {
		if s.Level == "gpu" && s.Key == "H100-SXM" {
			h100 = &f.Keyed[i]
		}
	}
	if h100 == nil || h100.Generation != "hopper" || len(h100.Params) == 0 {
		t.Fatalf("sets %+v: want an H100 set of the Hopper generation", f.Keyed)
	}
	code, _, errs = runCLI("simulate", "--params", out, "--vllm-cmd", "vllm serve meta-llama/Llama-2-7b-hf", "--gpu", "H100-SXM", "--workload", "1k1k")
	if code != 0 {
		t.Fatalf("simulate --params: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "gpu H100-SXM (calibrated)") {
		t.Errorf("simulate --params: the H100 set not applied: %s", errs)
	}
}
