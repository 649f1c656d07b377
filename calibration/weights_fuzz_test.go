package calibration

import (
	"math"
	"strings"
	"testing"
)

// FuzzParseWeights (fit --weights): parsed weights are finite and non-negative, their sum stays
// finite (a weighted loss cannot overflow), and String reads back to the same weights.
func FuzzParseWeights(f *testing.F) {
	for _, s := range []string{"", "ttft=0.5", "total=1.5,per_request=1,tbt=0.25", "prior=0,robust=0.1", "ttft=-1", "total=1e308,tbt=1e308", "x=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<10 {
			return
		}
		w, err := ParseWeights(s)
		if err != nil {
			if !strings.Contains(err.Error(), "weight ") {
				t.Fatalf("error does not name the weight: %v", err)
			}
			return
		}
		vals := []float64{w.DecodeTotal, w.PerRequest, w.TBT, w.TTFT, w.Prefill, w.PrefillTTFT, w.Status, w.RobustScale, w.Prior}
		sum := 0.0
		for _, v := range vals {
			if !(v >= 0) || math.IsInf(v, 0) {
				t.Fatalf("%q: weight %v", s, v)
			}
			sum += v * v
		}
		if math.IsInf(sum, 0) {
			t.Fatalf("%q: weights %v overflow a weighted sum", s, vals)
		}
		back, err := ParseWeights(w.String())
		if err != nil || back != w {
			t.Fatalf("%q: String %q reads back as %+v, %v", s, w.String(), back, err)
		}
	})
}

// TestWeightsBounded: a weight above 1e6 is refused (1e308 was accepted and overflowed the loss).
func TestWeightsBounded(t *testing.T) {
	if _, err := ParseWeights("total=1e308"); err == nil || !strings.Contains(err.Error(), "want a non-negative number up to 1e+06") {
		t.Errorf("total=1e308: %v", err)
	}
	if _, err := ParseWeights("total=1e6"); err != nil {
		t.Errorf("total=1e6: %v", err)
	}
}
