package matrix

import (
	"github.com/servesim/servesim/internal/stats"
	"math"
	"testing"
)

// decodeCell builds a decode cell with the four compared metrics.
func decodeCell(ctx string, conc int, s Status, total, perReq, ttftMS, tbtMS float64) Cell {
	tokens, _ := ParseContext(ctx)
	c := NewCell(Decode, ctx, tokens, conc)
	c.Status = s
	c.TotalTokS, c.PerRequestTokS, c.TTFTms, c.TBTms = total, perReq, ttftMS, tbtMS
	return c
}

func prefillCell(ctx string, tokS, ttftMS float64) Cell {
	tokens, _ := ParseContext(ctx)
	c := NewCell(Prefill, ctx, tokens, 1)
	c.Status, c.TotalTokS, c.TTFTms = Valid, tokS, ttftMS
	return c
}

// smallPair is a hand-built predicted and measured matrix. Expected errors, cell by cell
// (APE = |pred - meas| / meas * 100):
//
//	prefill 8K:  tok/s 11000 vs 10000 -> 10;  TTFT 700 vs 800 -> 12.5
//	8K x 1 V/V:  total 110 vs 100 -> 10;  per-req 200 vs 160 -> 25;  TTFT 300 vs 400 -> 25;  TBT 5 vs 5 -> 0
//	8K x 2 V/V:  total 180 vs 200 -> 10;  per-req 100 vs 100 -> 0;   TTFT 600 vs 500 -> 20;  TBT absent vs 6 -> skipped
//	8K x 4 Q/V:  total 390 vs 300 -> 30;  per-req 50 vs 50 -> 0;     TTFT 1000 vs 1000 -> 0; TBT 10 vs 8 -> 25
//	8K x 8 OC/V: not compared (the prediction did not run)
//	8K x 16:     measured only;  16K x 1: predicted only
//
// So decode total: n 3, MAPE (10+10+30)/3 = 16.667, MdAPE 10, worst 8K x 4, 8K x 1, 8K x 2 (tie
// in matrix order); per-request: n 3, MAPE 8.333, MdAPE 0; TTFT: n 3, MAPE 15, MdAPE 20;
// TBT: n 2, MAPE 12.5, MdAPE (0+25)/2 = 12.5; prefill tok/s 10, 10; prefill TTFT 12.5, 12.5.
// Statuses: 2 of the 4 decode cells in both match.
func smallPair() (pred, meas *Matrix) {
	pred = &Matrix{
		Prefill: []Cell{prefillCell("8K", 11000, 700)},
		Decode: []Cell{
			decodeCell("8K", 1, Valid, 110, 200, 300, 5),
			decodeCell("8K", 2, Valid, 180, 100, 600, math.NaN()),
			decodeCell("8K", 4, RequestsQueued, 390, 50, 1000, 10),
			decodeCell("8K", 8, OverCapacity, math.NaN(), math.NaN(), math.NaN(), math.NaN()),
			decodeCell("16K", 1, Valid, 100, 100, 100, 10),
		},
	}
	meas = &Matrix{
		Prefill: []Cell{prefillCell("8K", 10000, 800)},
		Decode: []Cell{
			decodeCell("8K", 1, Valid, 100, 160, 400, 5),
			decodeCell("8K", 2, Valid, 200, 100, 500, 6),
			decodeCell("8K", 4, Valid, 300, 50, 1000, 8),
			decodeCell("8K", 8, Valid, 500, 60, 2000, 16),
			decodeCell("8K", 16, OverCapacity, math.NaN(), math.NaN(), math.NaN(), math.NaN()),
		},
	}
	return pred, meas
}

func TestCompareSmall(t *testing.T) {
	cmp := Compare(smallPair())
	s := cmp.Summary
	if s.DecodeCells != 4 || s.StatusMatched != 2 {
		t.Errorf("statuses: got %d/%d, want 2/4", s.StatusMatched, s.DecodeCells)
	}
	want := []struct {
		n           int
		mape, mdape float64
	}{
		{3, 50.0 / 3, 10}, {3, 25.0 / 3, 0}, {3, 15, 20}, {2, 12.5, 12.5}, {1, 10, 10}, {1, 12.5, 12.5},
	}
	for i, ms := range s.Columns {
		w := want[i]
		// 1e-9: the APEs are sums and quotients of a few exact decimals.
		if ms.Column != Column(i) || ms.N != w.n || !close(ms.MAPEPct, w.mape, 1e-9) || !close(ms.MdAPEPct, w.mdape, 1e-9) {
			t.Errorf("%s: got n %d, MAPE %v, MdAPE %v; want n %d, MAPE %v, MdAPE %v",
				ms.Column, ms.N, ms.MAPEPct, ms.MdAPEPct, w.n, w.mape, w.mdape)
		}
	}
	worst := s.Columns[DecodeTotalTokS].Worst
	wantWorst := []Key{{Decode, "8K", 4}, {Decode, "8K", 1}, {Decode, "8K", 2}}
	if len(worst) != 3 {
		t.Fatalf("worst: got %d cells, want 3", len(worst))
	}
	for i, k := range wantWorst {
		if worst[i].Key != k {
			t.Errorf("worst[%d]: got %s, want %s", i, worst[i].Key, k)
		}
	}
	if got := worst[0].SignedPct(); !close(got, 30, 1e-9) {
		t.Errorf("worst[0] signed error: got %v, want +30", got)
	}
	if got := cmp.Pairs[2].APEPct[DecodeTotalTokS]; !close(got, 10, 1e-9) { // 8K x 2 (pairs: prefill, x1, x2, ...)
		t.Errorf("8K x 2 APE: got %v, want 10", got)
	}
	if len(cmp.OnlyPred) != 1 || cmp.OnlyPred[0] != (Key{Decode, "16K", 1}) {
		t.Errorf("only predicted: got %v, want [decode 16K x 1]", cmp.OnlyPred)
	}
	if len(cmp.OnlyMeas) != 1 || cmp.OnlyMeas[0] != (Key{Decode, "8K", 16}) {
		t.Errorf("only measured: got %v, want [decode 8K x 16]", cmp.OnlyMeas)
	}
}

func TestCompareSeedWithItself(t *testing.T) {
	m := loadSeed(t)
	s := Compare(m, m).Summary
	if s.DecodeCells != 64 || s.StatusMatched != 64 {
		t.Errorf("statuses: got %d/%d, want 64/64", s.StatusMatched, s.DecodeCells)
	}
	for _, ms := range s.Columns {
		wantN := 43
		if ms.Column.Phase() == Prefill {
			wantN = 9
		}
		if ms.N != wantN || ms.MAPEPct != 0 || ms.MdAPEPct != 0 {
			t.Errorf("%s: got n %d, MAPE %v, MdAPE %v; want n %d, 0, 0", ms.Column, ms.N, ms.MAPEPct, ms.MdAPEPct, wantN)
		}
	}
}

func TestCompareNil(t *testing.T) {
	m := loadSeed(t)
	cmp := Compare(nil, m)
	if len(cmp.Pairs) != 0 || len(cmp.OnlyMeas) != 73 || cmp.Summary.DecodeCells != 0 {
		t.Errorf("Compare(nil, seed): got %d pairs, %d only measured", len(cmp.Pairs), len(cmp.OnlyMeas))
	}
	if ms := cmp.Summary.Columns[0]; ms.N != 0 || !math.IsNaN(ms.MAPEPct) || len(ms.Worst) != 0 {
		t.Errorf("empty metric: got %+v, want n 0 and NaN", ms)
	}
}

func TestAPE(t *testing.T) {
	tests := []struct{ pred, meas, want float64 }{
		{110, 100, 10},
		{90, 100, 10},
		{1301, 1335.7, 2.5978887474732}, // |1301 - 1335.7| / 1335.7 * 100
		{0, 0, 0},
		{1, 0, math.Inf(1)},
		{math.NaN(), 1, math.NaN()},
		{1, math.NaN(), math.NaN()},
	}
	for _, tt := range tests {
		if got := APE(tt.pred, tt.meas); !close(got, tt.want, 1e-9) && got != tt.want {
			t.Errorf("APE(%v, %v) = %v, want %v", tt.pred, tt.meas, got, tt.want)
		}
	}
}

func TestMAPEMedian(t *testing.T) {
	tests := []struct {
		in          []float64
		mape, media float64
	}{
		{nil, math.NaN(), math.NaN()},
		{[]float64{4}, 4, 4},
		{[]float64{3, 1, 2}, 2, 2},
		{[]float64{4, 1, 3, 2}, 2.5, 2.5}, // even count: mean of 2 and 3
		{[]float64{10, math.NaN(), 0, 30}, 40.0 / 3, 10},
		{[]float64{1, 1, 1, 100}, 25.75, 1},
	}
	for _, tt := range tests {
		in := append([]float64(nil), tt.in...)
		if got := MAPE(tt.in); !close(got, tt.mape, 1e-12) {
			t.Errorf("MAPE(%v) = %v, want %v", tt.in, got, tt.mape)
		}
		if got := stats.Median(tt.in); !close(got, tt.media, 0) {
			t.Errorf("stats.Median(%v) = %v, want %v", tt.in, got, tt.media)
		}
		for i := range in {
			if !close(in[i], tt.in[i], 0) {
				t.Errorf("Median modified its input: %v", tt.in)
			}
		}
	}
}
