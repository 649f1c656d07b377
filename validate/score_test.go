package validate

import (
	"math"
	"testing"
)

func ratioOutcome(id string, gpus, tp, pp, in, out int, meas, pred float64) *Outcome {
	r := &Row{CaseID: id, Model: "m", GPUCount: gpus, TP: tp, PP: pp, InputTokens: float64(in), OutputTokens: float64(out),
		Measured: Measured{OutputTokS: meas}}
	return &Outcome{Case: &Case{ID: id, Row: r, Scoring: Ratio}, Pred: &Prediction{OutputTokS: pred}}
}

// TestRatios on a hand-computed example.
func TestRatios(t *testing.T) {
	outs := []*Outcome{
		ratioOutcome("a", 1, 1, 1, 128, 128, 100, 200),
		ratioOutcome("b", 2, 2, 1, 128, 128, 180, 300),
		ratioOutcome("c", 2, 1, 2, 128, 128, 150, 420),
		ratioOutcome("d", 1, 1, 1, 1000, 1000, 50, 80),
	}
	got := Ratios(outs)
	want := []RatioScore{
		// 2 GPUs over 1, per shape: b/a 1.8 measured, 1.5 predicted; c/a 1.5 and 2.1.
		{Kind: RatioGPUs, Num: "b", Den: "a", Measured: 1.8, Predicted: 1.5},
		{Kind: RatioGPUs, Num: "c", Den: "a", Measured: 1.5, Predicted: 2.1},
		// TP1 PP2 over TP2 at 2 GPUs: 150/180 and 420/300.
		{Kind: RatioTPPP, Num: "c", Den: "b", Measured: 150.0 / 180, Predicted: 1.4},
		// 128/128 over the 1000/1000 reference at TP1 PP1: 100/50 and 200/80.
		{Kind: RatioShape, Num: "a", Den: "d", Measured: 2, Predicted: 2.5},
	}
	if len(got) != len(want) {
		t.Fatalf("%d ratios, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		// Tolerance: the ratios are quotients of the exact inputs above (a few ulps).
		if g.Kind != w.Kind || g.Num != w.Num || g.Den != w.Den || math.Abs(g.Measured-w.Measured) > 1e-12 || math.Abs(g.Predicted-w.Predicted) > 1e-12 {
			t.Errorf("ratio %d: got %+v, want %+v", i, g, w)
		}
	}
	// Errors -16.67 % and +40 %: MAPE 28.33, median APE 28.33, bias +11.67.
	a := accuracy([]float64{got[0].Err(), got[1].Err()})
	if math.Abs(a.MAPE-85.0/3) > 1e-9 || math.Abs(a.MedianAPE-85.0/3) > 1e-9 || math.Abs(a.Bias-35.0/3) > 1e-9 || a.N != 2 {
		t.Errorf("gpu-count accuracy %+v, want 28.33 / 28.33 / +11.67", a)
	}
	if e := got[2].Err(); math.Abs(e-0.68) > 1e-12 {
		t.Errorf("tp-vs-pp error %v, want 0.68", e)
	}
}

func TestAccuracy(t *testing.T) {
	a := accuracy([]float64{0.1, -0.2, 0.3})
	if a.N != 3 || math.Abs(a.MAPE-20) > 1e-9 || math.Abs(a.MedianAPE-20) > 1e-9 || math.Abs(a.Bias-20.0/3) > 1e-9 {
		t.Errorf("got %+v, want MAPE 20, median APE 20, bias 6.67", a)
	}
	if e := accuracy(nil); e.N != 0 || !math.IsNaN(e.MAPE) {
		t.Errorf("empty: %+v", e)
	}
}

// TestCompare: like with like (the mean when the row has no median), and what the summaries
// leave out.
func TestCompare(t *testing.T) {
	nan := math.NaN()
	m := Measured{OutputTokS: 100, TPOTMedianMS: nan, TPOTMeanMS: 10, TTFTMedianMS: 50, TTFTMeanMS: 60, E2EMedianMS: nan, E2EMeanMS: nan,
		TPOTP99MS: nan, TTFTP90MS: nan, TTFTP99MS: nan, E2EP99MS: nan}
	p := &Prediction{OutputTokS: 110, TPOTMedianMS: 9, TPOTMeanMS: 12, TTFTMedianMS: 40, TTFTMeanMS: 45, E2EMedianMS: 1, E2EMeanMS: 1,
		TPOTP99MS: 1, TTFTP90MS: 1, TTFTP99MS: 1, E2EP99MS: 1}
	prim := map[string]string{}
	for _, c := range compare(&m, p, false, false) {
		if c.Primary {
			prim[c.Family] = c.Metric
		}
		if !c.Scored {
			t.Errorf("%s not scored", c.Metric)
		}
	}
	if prim[FamOutput] != "output_tok_s" || prim[FamTPOT] != "tpot_ms_mean" || prim[FamTTFT] != "ttft_ms_median" || prim[FamE2E] != "" {
		t.Errorf("primary statistics %v", prim)
	}
	for _, c := range compare(&m, p, true, false) {
		if c.Scored != (c.Family == FamOutput) {
			t.Errorf("overloaded: %s scored %v", c.Metric, c.Scored)
		}
	}
	for _, c := range compare(&m, p, false, true) {
		if c.Scored {
			t.Errorf("failed requests: %s scored", c.Metric)
		}
	}
}
