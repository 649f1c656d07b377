package stats

import (
	"math"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{math.NaN(), 5, 1}, 3},
		{[]float64{0.1, 0.2}, 0.15000000000000002}, // (0.1 + 0.2) / 2 in float64, as numpy gives it
		{nil, math.NaN()},
		{[]float64{math.NaN()}, math.NaN()},
	} {
		in := append([]float64(nil), c.in...)
		got := Median(in)
		if !(got == c.want || (math.IsNaN(got) && math.IsNaN(c.want))) {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if !(in[i] == c.in[i] || (math.IsNaN(in[i]) && math.IsNaN(c.in[i]))) {
				t.Errorf("Median(%v) changed its input to %v", c.in, in)
			}
		}
	}
}

func TestQuantile(t *testing.T) {
	s := []float64{10, 20, 30, 40, 50}
	for _, c := range []struct{ q, want float64 }{{0, 10}, {1, 50}, {0.5, 30}, {0.9, 46}, {0.25, 20}, {0.1, 14}} {
		if got := Quantile(s, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(%v) = %v, want %v (numpy linear)", c.q, got, c.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("Quantile of nothing: want NaN")
	}
}

func TestMean(t *testing.T) {
	if got := Mean([]float64{1, 2, 6}); got != 3 {
		t.Errorf("Mean = %v, want 3", got)
	}
	if !math.IsNaN(Mean(nil)) {
		t.Error("Mean of nothing: want NaN")
	}
}
