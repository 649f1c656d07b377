package validate

import (
	"math"
	"testing"

	"github.com/servesim/servesim/model/param"
)

// The in-sample prior width puts 80 % of the prior rows' values inside their intervals; leaving
// a source out estimates the width from the others only, so a source whose errors are larger
// than the rest is covered less.
func TestIntervalCoverage(t *testing.T) {
	var prov param.Provenance
	prior := param.Summarize(&prov, param.Uses{})
	var cases []CaseReport
	add := func(src string, n int, spread float64) {
		for i := 0; i < n; i++ {
			e := spread * (float64(i)/float64(n-1)*2 - 1) // uniform in [-spread, spread]
			cases = append(cases, CaseReport{ID: src, Source: src, Scoring: Absolute, Expressed: true, Provenance: &prior,
				Comparisons: []Comparison{{Metric: "tpot_ms_median", Family: FamTPOT, Predicted: 10, Measured: 10 * math.Exp(e), Primary: true, Scored: true}}})
		}
	}
	add("narrow", 50, 0.1)
	add("wide", 50, 1.0)
	ir := NewIntervalReport(cases)
	get := func(cs CoverageSet, src, m string) Coverage {
		for _, c := range cs.Cells {
			if c.Source == src && c.Metric == m {
				return c
			}
		}
		t.Fatalf("no cell %s %s in %s", src, m, cs.Widths)
		return Coverage{}
	}
	if f := get(ir.InSample, "all", "all").Fraction(); math.Abs(f-0.8) > 0.03 {
		t.Errorf("in-sample coverage %.2f, want 0.80", f)
	}
	if f := get(ir.LOSO, "wide", FamTPOT).Fraction(); f > 0.2 {
		t.Errorf("wide source scored with the narrow one's width: coverage %.2f, want small", f)
	}
	if f := get(ir.LOSO, "narrow", FamTPOT).Fraction(); f != 1 {
		t.Errorf("narrow source scored with the wide one's width: coverage %.2f, want 1", f)
	}
	if w := ir.LOSOWidths["wide"][param.MetricTPOT]; !(w < 0.1) {
		t.Errorf("width without the wide source %g, want < 0.1", w)
	}
}
