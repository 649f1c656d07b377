package calibration

import (
	"slices"
	"strings"
	"testing"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/param"
)

// decodeMatrix is a measured-looking matrix: a valid decode cell at every context and
// concurrency.
func decodeMatrix(ctxs []string, concs []int) *matrix.Matrix {
	m := &matrix.Matrix{}
	for _, x := range ctxs {
		n, _ := matrix.ParseContext(x)
		for _, c := range concs {
			cell := matrix.NewCell(matrix.Decode, x, n, c)
			cell.Status, cell.TotalTokS = matrix.Valid, 100
			m.Decode = append(m.Decode, cell)
		}
	}
	return m
}

// TestHalfSplits: the cross-validation splits train on the lower half of the measured levels:
// the seed's standard splits on the seed's levels, a 1K-8K matrix's contexts split at 2K (the
// fixed 64K left its test set empty), and a matrix of one context warns instead.
func TestHalfSplits(t *testing.T) {
	for _, c := range []struct {
		name  string
		m     *matrix.Matrix
		exprs []string
		warn  string
	}{
		{"seed levels", decodeMatrix([]string{"8K", "16K", "32K", "64K", "128K", "256K", "512K", "1019K"}, []int{1, 2, 4, 8, 16, 32, 64, 128}),
			[]string{"concurrency<=8", "context<=64K"}, ""},
		{"1K-8K", decodeMatrix([]string{"1K", "2K", "4K", "8K"}, []int{1, 4, 16}), []string{"concurrency<=4", "context<=2K"}, ""},
		{"one context", decodeMatrix([]string{"8K"}, []int{1, 2}), []string{"concurrency<=1", ""}, "cv split by context skipped: the measured decode cells have 1 context(s)"},
		{"one concurrency", decodeMatrix([]string{"8K", "16K"}, []int{4}), []string{"", "context<=8K"}, "cv split by concurrency skipped"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sps := halfSplits(c.m)
			var exprs, warns []string
			for _, s := range sps {
				exprs = append(exprs, s.expr)
				if s.warning != "" {
					warns = append(warns, s.warning)
				}
				if s.expr == "" {
					continue
				}
				f, err := ParseFilter(s.expr)
				if err != nil {
					t.Fatal(err)
				}
				train, test := 0, 0
				for i := range c.m.Decode {
					if f.Match(&c.m.Decode[i]) {
						train++
					} else {
						test++
					}
				}
				if train == 0 || test == 0 {
					t.Errorf("%s: %d training cells, %d test cells", s.expr, train, test)
				}
			}
			if !slices.Equal(exprs, c.exprs) {
				t.Errorf("splits %q, want %q", exprs, c.exprs)
			}
			if (c.warn == "") != (len(warns) == 0) || (c.warn != "" && !strings.Contains(warns[0], c.warn)) {
				t.Errorf("warnings %q, want %q", warns, c.warn)
			}
		})
	}
}

// TestCrossValidateSmallContexts runs --cv's splits on a 1K-8K matrix: the context split tests on
// 4K and 8K, no warning.
func TestCrossValidateSmallContexts(t *testing.T) {
	prob, _ := smallProblem(t)
	prob.Protocol.Contexts = []string{"1K", "2K", "4K", "8K"}
	prob.Protocol.Concurrency = []int{1, 4}
	measureAt(t, prob, param.Priors())
	prob.Free = []param.ID{param.MemBWEff}
	splits, warnings, err := CrossValidate(prob, &Settings{Starts: 1, MaxIter: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %q", warnings)
	}
	for _, s := range splits[:2] {
		t.Logf("%s (%s): train %d cells, test %d", s.Name, s.Filter, s.Train.Cells, s.Test.Cells)
		if s.Test.Cells == 0 || s.Train.Cells == 0 {
			t.Errorf("split %s (%s): train %d cells, test %d", s.Name, s.Filter, s.Train.Cells, s.Test.Cells)
		}
	}
	if splits[1].Filter != "context<=2K" {
		t.Errorf("context split %q, want context<=2K", splits[1].Filter)
	}
}

// TestWorseThanPriors: a metric the fit leaves worse than the priors is named with both errors;
// equal or better ones (within 0.1 point) and absent ones (-1) are not.
func TestWorseThanPriors(t *testing.T) {
	fitted := Errors{DecodeTotalMAPE: 3, DecodePerRequestMAPE: 4.05, PrefillMAPE: -1, TTFTMdAPE: 12.3, TBTMAPE: 2, StatusMatched: 7, StatusCells: 8}
	prior := Errors{DecodeTotalMAPE: 8, DecodePerRequestMAPE: 4, PrefillMAPE: 5, TTFTMdAPE: 9.8, TBTMAPE: 2, StatusMatched: 8, StatusCells: 8}
	got := WorseThanPriors(&fitted, &prior, "training cells")
	want := []string{
		"decode TTFT MdAPE on the training cells: 12.3% after the fit, 9.8% under the priors (the fit trades it for the weighted loss; see --weights)",
		"statuses on the training cells: 7/8 match after the fit, 8/8 under the priors",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	var b strings.Builder
	if err := WriteSummary(&b, &Report{Train: fitted, Priors: &prior, Warnings: got}); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "the same cells, priors") || !strings.Contains(s, "warning: decode TTFT MdAPE") {
		t.Errorf("summary:\n%s", s)
	}
}
