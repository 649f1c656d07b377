package stats

import (
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
)

// TestIntBins: the bins tile the integers without gap or overlap, exact below 2^(Sub+1), and
// each at most 2^-Sub of its values wide above.
func TestIntBins(t *testing.T) {
	for _, sub := range []uint{3, 5, 7} {
		b := IntBins{sub}
		prev := uint64(0)
		for i := 0; i < int(40<<sub); i++ {
			lo, w := b.Low(i)
			if lo != prev || w == 0 || b.Upper(i) != lo+w {
				t.Fatalf("sub %d bin %d: [%d, +%d) after %d", sub, i, lo, w, prev)
			}
			if b.Index(lo) != i || b.Index(lo+w-1) != i {
				t.Fatalf("sub %d bin %d [%d, %d): Index gives %d and %d", sub, i, lo, lo+w, b.Index(lo), b.Index(lo+w-1))
			}
			if lo < 2<<sub && w != 1 || lo >= 2<<sub && float64(w)/float64(lo) > 1/float64(uint(1)<<sub)+1e-12 {
				t.Fatalf("sub %d bin %d [%d, +%d): too wide", sub, i, lo, w)
			}
			prev = lo + w
		}
	}
}

// TestLogBins: every positive value lies in its bin, whose midpoint is within 2^-(Sub+1) of it.
func TestLogBins(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sub := range []uint{5, 10} {
		b := LogBins{sub}
		for k := 0; k < 10000; k++ {
			v := math.Exp(r.Float64()*60 - 30)
			i := b.Index(v)
			if !(b.Lower(i) <= v && v < b.Upper(i)) {
				t.Fatalf("sub %d: %g outside its bin [%g, %g)", sub, v, b.Lower(i), b.Upper(i))
			}
			if e := math.Abs(b.Mid(i)-v) / v; e > 1/float64(uint(2)<<sub) {
				t.Fatalf("sub %d: %g's bin midpoint %g off by %g", sub, v, b.Mid(i), e)
			}
			if b.Index(b.Upper(i)) != i+1 && b.Index(b.Upper(i)) <= i {
				t.Fatalf("sub %d: bins not ascending at %g", sub, v)
			}
		}
	}
}

// TestHistQuantiles: both histograms' quantiles of a known sample are within their bins'
// resolution of the exact order statistics, and merging k copies keeps the quantiles and
// multiplies the count and sum.
func TestHistQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var vals []float64
	lh := NewLogHist(10)
	ih := IntHist{Bins: IntBins{7}}
	for k := 0; k < 20000; k++ {
		v := math.Floor(math.Exp(r.Float64()*14)) + 1
		vals = append(vals, v)
		lh.Add(v, 1)
		ih.Add(int64(v), 1)
	}
	sorted := append([]float64(nil), vals...)
	sort.Float64s(sorted)
	s := lh.Sorted()
	for _, q := range []float64{0, 0.1, 0.5, 0.9, 0.99, 1} {
		want := Quantile(sorted, q)
		if got := s.Quantile(q); math.Abs(got-want)/want > 1.0/2048+1e-12 {
			t.Errorf("LogHist q%g = %g, exact %g", q, got, want)
		}
		rank := max(int(math.Ceil(q*float64(len(sorted)))), 1)
		if got, w := ih.Quantile(q), sorted[rank-1]; math.Abs(got-w) > math.Max(w/128, 0.5) { // a bin's midpoint: half an integer below 256
			t.Errorf("IntHist q%g = %g, order statistic %g", q, got, w)
		}
	}
	m := NewLogHist(10)
	m.Merge(lh, 3)
	mi := IntHist{Bins: IntBins{7}}
	mi.Merge(&ih, 3)
	if m.N() != 3*lh.N() || m.Sum() != 3*lh.Sum() || m.Sorted().Quantile(0.5) != s.Quantile(0.5) || mi.N() != 3*ih.N() || mi.Quantile(0.9) != ih.Quantile(0.9) {
		t.Errorf("merging three copies changed the quantiles or did not triple the count")
	}
}

// TestLogHistOrderStats: every order statistic of a histogram filled in random order, over values
// from 2^-40 to 2^40 (bins on both sides of zero, pages made below and above the first) and
// zeros, and of one merged from two halves, is the midpoint of the exact order statistic's bin
// (clamped to the exact extremes), as a sorted list of the values gives it.
func TestLogHistOrderStats(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	b := LogBins{10}
	var vals []float64
	h, lo, hi := NewLogHist(10), NewLogHist(10), NewLogHist(10)
	for k := 0; k < 5000; k++ {
		v := math.Ldexp(1+r.Float64(), r.IntN(81)-40)
		if k%97 == 0 {
			v = 0
		}
		vals = append(vals, v)
		h.Add(v, 1)
		if k%2 == 0 {
			lo.Add(v, 1)
		} else {
			hi.Add(v, 1)
		}
	}
	m := NewLogHist(10)
	m.Merge(hi, 1)
	m.Merge(lo, 1)
	sort.Float64s(vals)
	for name, hh := range map[string]*LogHist{"filled": h, "merged": m} {
		if hh.N() != uint64(len(vals)) || hh.Max() != vals[len(vals)-1] {
			t.Fatalf("%s: n %d max %g, want %d and %g", name, hh.N(), hh.Max(), len(vals), vals[len(vals)-1])
		}
		s := hh.Sorted()
		for i, v := range vals {
			want := 0.0
			if v > 0 {
				want = math.Min(math.Max(b.Mid(b.Index(v)), vals[0]), vals[len(vals)-1])
			}
			if got := s.OrderStat(uint64(i)); got != want {
				t.Fatalf("%s: order statistic %d = %g, want %g (value %g)", name, i, got, want, v)
			}
		}
	}
}

// TestLogHistAddEach checks that adding values in a batch leaves the histogram exactly as adding
// them one by one: counts, zeros, sum (same order of additions), minimum and maximum, over
// batches shorter and longer than the bins AddEach finds at once.
func TestLogHistAddEach(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 63, 64, 65, 1000} {
		vs := make([]float64, n)
		for i := range vs {
			switch rng.IntN(10) {
			case 0:
				vs[i] = 0
			case 1:
				vs[i] = 1e-7 // far below the others: pages before the first
			default:
				vs[i] = math.Exp(rng.NormFloat64()*3 + 4)
			}
		}
		for _, before := range []bool{false, true} {
			one, batch := NewLogHist(10), NewLogHist(10)
			if before { // not empty before the batch
				one.Add(42, 1)
				batch.Add(42, 1)
			}
			for _, v := range vs {
				one.Add(v, 1)
			}
			batch.AddEach(vs[:n/2])
			batch.AddEach(vs[n/2:])
			if !reflect.DeepEqual(one, batch) {
				t.Fatalf("n=%d: AddEach left n %d sum %v min %v max %v zeros %d, Add n %d sum %v min %v max %v zeros %d (or counts differ)",
					n, batch.n, batch.sum, batch.min, batch.max, batch.zeros, one.n, one.sum, one.min, one.max, one.zeros)
			}
		}
	}
}
