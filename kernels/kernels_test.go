package kernels

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/hardware"
)

// The acceptance thresholds of the kernel check: median absolute percentage errors of the GEMMs
// over token counts and TP degrees, and of NCCL all-reduces of 1 MB and more.
const (
	maxGEMMMdAPE      = 0.15
	maxAllReduceMdAPE = 0.15
)

// checkThresholds runs the check and holds the GEMM and large all-reduce errors to the thresholds.
func checkThresholds(t *testing.T, p *Profiles) *Report {
	t.Helper()
	pts, err := Check(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := NewReport(pts)
	for _, s := range append(append([]Summary(nil), rep.GEMM...), rep.GEMMByModel...) {
		if s.MdAPE > maxGEMMMdAPE {
			t.Errorf("%s: median APE %.1f%% over %d points, want <= %.0f%%", s.Key, 100*s.MdAPE, s.N, 100*maxGEMMMdAPE)
		}
	}
	for _, s := range rep.NetworkLarge {
		if !strings.HasSuffix(s.Key, "all_reduce >= 1 MB (all n)") {
			continue
		}
		if s.MdAPE > maxAllReduceMdAPE {
			t.Errorf("%s: median APE %.1f%% over %d points, want <= %.0f%%", s.Key, 100*s.MdAPE, s.N, 100*maxAllReduceMdAPE)
		}
	}
	if len(rep.GEMM) == 0 || len(rep.NetworkLarge) == 0 {
		t.Errorf("no GEMM or collective points: %d files", len(p.Files))
	}
	return rep
}

// TestSubset checks the kernel formulas on the subset kept in testdata (always available).
func TestSubset(t *testing.T) {
	p, err := LoadDir(filepath.Join("testdata", "vidur"))
	if err != nil {
		t.Fatal(err)
	}
	rep := checkThresholds(t, p)
	for _, s := range rep.GEMM {
		t.Logf("%s: n %d, MdAPE %.1f%%", s.Key, s.N, 100*s.MdAPE)
	}
}

// sharedVidur finds the validation corpus's Vidur folder above the module (../shared, as the team's
// checkout lays it out), or "" when it is absent.
func sharedVidur() string {
	if d := os.Getenv("SERVESIM_VIDUR_DIR"); d != "" {
		return d
	}
	dir, err := filepath.Abs("..")
	if err != nil {
		return ""
	}
	for i := 0; i < 4; i++ {
		c := filepath.Join(dir, "..", "shared", "validation", "kernels", "vidur")
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

// TestFullProfiles checks every profile of the validation corpus when it is there.
func TestFullProfiles(t *testing.T) {
	dir := sharedVidur()
	if dir == "" {
		t.Skip("the Vidur profiles of the validation corpus ($SERVESIM_VIDUR_DIR: Vidur's data/profiling) are not here; the testdata subset is checked by TestSubset")
	}
	p, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkThresholds(t, p)
}

// TestFitReproducesPriors refits the Hopper and Ampere priors from the full profiles: the
// generation table must hold what the profiles give (to 2 %, the table's rounding).
func TestFitReproducesPriors(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("fits every profile (about 10 s of CPU)")
	}
	dir := sharedVidur()
	if dir == "" {
		t.Skip("the Vidur profiles of the validation corpus are not here")
	}
	p, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := FitCompute(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fn, err := FitNetwork(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	gens := map[string]hardware.Generation{"h100": hardware.GenHopper, "a100": hardware.GenAmpere,
		"h100_dgx (nvlink)": hardware.GenHopper, "a100_dgx (nvlink)": hardware.GenAmpere,
		"h100_pairwise_nvlink (pcie)": hardware.GenHopper, "a100_pairwise_nvlink (pcie)": hardware.GenAmpere}
	for _, f := range append(fc, fn...) {
		gen, ok := gens[f.Group]
		if !ok {
			continue
		}
		fabric := hardware.LinkNVLink
		if strings.HasSuffix(f.Group, "(pcie)") {
			fabric = hardware.LinkPCIe
		}
		ps, err := hardware.GenerationPriors(gen, fabric)
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range ps {
			v, ok := f.Values[pr.ID]
			if !ok {
				continue
			}
			if d := v/pr.Value - 1; d > 0.02 || d < -0.02 {
				t.Errorf("%s: %s fits %.4g, the %s prior is %.4g", f.Group, pr.ID.Def().Name, v, gen, pr.Value)
			}
		}
	}
}
