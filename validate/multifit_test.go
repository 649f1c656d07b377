package validate

import (
	"testing"

	"github.com/servesim/servesim/calibration"
)

func excerptData(t *testing.T) *MultiData {
	t.Helper()
	rows, err := ReadFile(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	return &MultiData{Rows: rows, Weights: calibration.DefaultWeights(), Opt: FitOptions{MaxJobs: 3, MaxRequests: 20, Weights: calibration.DefaultWeights()}}
}

// TestLOSOSplit: leaving a source out, no simulation of the fit comes from it; leaving a GPU
// out, no simulation runs on it; and the held-out part is exactly what the fit did not see.
func TestLOSOSplit(t *testing.T) {
	d := excerptData(t)
	d.Opt.MaxJobs = 0 // every row
	source := map[string]string{}
	for _, r := range d.Rows {
		source[r.CaseID] = r.Source
	}
	all := Fold{}
	names := d.Names()
	if len(names) < 3 {
		t.Fatalf("sources %v: the excerpt should have three", names)
	}
	total := 0
	for _, s := range d.Sources(all) {
		total += len(s.Jobs)
	}
	for _, held := range names {
		held := held
		n := 0
		f := Fold{}
		f.Source = func(x string) bool { return x != held }
		for _, s := range d.Sources(f) {
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
		in := Fold{}
		in.Source = func(x string) bool { return x == held }
		for _, s := range d.Sources(in) {
			test += len(s.Jobs)
		}
		if n+test != total || test == 0 {
			t.Errorf("held out %s: %d fit + %d held-out simulations, want %d in all with some held out", held, n, test, total)
		}
	}
	gpus := d.GPUs()
	if len(gpus) < 3 {
		t.Fatalf("GPUs %v: the excerpt should have at least three", gpus)
	}
	for _, g := range gpus {
		g := g
		f := Fold{}
		f.GPU = func(x string) bool { return x != g }
		for _, s := range d.Sources(f) {
			for _, j := range s.Jobs {
				if j.Deployment.Hardware.GPU.Name == g {
					t.Errorf("held out GPU %s: job %s runs on it", g, j.Label)
				}
			}
		}
	}
	// Leave one model family out: no job of the held-out family stays in the fit, and the
	// excerpt's families (Llama and Mixtral at least) are each a fold.
	fams := d.Families()
	if len(fams) < 2 {
		t.Fatalf("families %v: the excerpt should have at least two", fams)
	}
	for _, fam := range fams {
		fam := fam
		f := Fold{}
		f.Family = func(x string) bool { return x != fam }
		n := 0
		for _, s := range d.Sources(f) {
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
