package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesim/servesim/calibration"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/validate"
)

func excerptData(t *testing.T) *multiData {
	t.Helper()
	rows, err := validate.ReadFile(corpusExcerpt)
	if err != nil {
		t.Fatal(err)
	}
	return &multiData{rows: rows, w: calibration.DefaultWeights(), opt: validate.FitOptions{MaxJobs: 3, MaxRequests: 20, Weights: calibration.DefaultWeights()}}
}

// TestLOSOSplit: leaving a source out, no simulation of the fit comes from it; leaving a GPU
// out, no simulation runs on it; and the held-out part is exactly what the fit did not see.
func TestLOSOSplit(t *testing.T) {
	d := excerptData(t)
	d.opt.MaxJobs = 0 // every row
	source := map[string]string{}
	for _, r := range d.rows {
		source[r.CaseID] = r.Source
	}
	all := everything()
	names := d.names()
	if len(names) < 3 {
		t.Fatalf("sources %v: the excerpt should have three", names)
	}
	total := 0
	for _, s := range d.sources(all) {
		total += len(s.Jobs)
	}
	for _, held := range names {
		held := held
		n := 0
		f := everything()
		f.source = func(x string) bool { return x != held }
		for _, s := range d.sources(f) {
			if s.Name == held {
				t.Errorf("held out %s: still a fit source", held)
			}
			for _, j := range s.Jobs {
				n++
				if src, ok := source[j.Label]; ok && src == held {
					t.Errorf("held out %s: job %s of it in the fit", held, j.Label)
				}
			}
		}
		test := 0
		in := everything()
		in.source = func(x string) bool { return x == held }
		for _, s := range d.sources(in) {
			test += len(s.Jobs)
		}
		if n+test != total || test == 0 {
			t.Errorf("held out %s: %d fit + %d held-out simulations, want %d in all with some held out", held, n, test, total)
		}
	}
	gpus := d.gpus()
	if len(gpus) < 3 {
		t.Fatalf("GPUs %v: the excerpt should have at least three", gpus)
	}
	for _, g := range gpus {
		g := g
		f := everything()
		f.gpu = func(x string) bool { return x != g }
		for _, s := range d.sources(f) {
			for _, j := range s.Jobs {
				if j.Deployment.Hardware.GPU.Name == g {
					t.Errorf("held out GPU %s: job %s runs on it", g, j.Label)
				}
			}
		}
	}
	// Leave one model family out: no job of the held-out family stays in the fit, and the
	// excerpt's families (Llama and Mixtral at least) are each a fold.
	fams := d.families()
	if len(fams) < 2 {
		t.Fatalf("families %v: the excerpt should have at least two", fams)
	}
	for _, fam := range fams {
		fam := fam
		f := everything()
		f.family = func(x string) bool { return x != fam }
		n := 0
		for _, s := range d.sources(f) {
			for _, j := range s.Jobs {
				n++
				if j.Deployment.Model.Family == fam {
					t.Errorf("held out family %s: job %s of it in the fit", fam, j.Label)
				}
			}
		}
		if n == 0 || n == total {
			t.Errorf("held out family %s: %d of %d simulations in the fit, want some but not all", fam, n, total)
		}
	}
}

// TestFitLOSODeterministic: a small leave-one-source-out run prints the same figures twice.
func TestFitLOSODeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the excerpt several times")
	}
	args := []string{"fit", "--cv", "loso", "--no-seed", "--max-jobs", "2", "--max-requests", "20", "--max-iter", "1", "--workers", "2",
		corpusExcerpt}
	var outs [2]string
	for i := range outs {
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
