package server

import (
	"math"
	"sync"
	"testing"
	"time"
)

// TestLagBins: the log-linear bins tile the nanoseconds without gap or overlap, each at most
// 1/lagSub wide relative to its values, and the exported bucket count matches lagBuckets.
func TestLagBins(t *testing.T) {
	if len(lagBuckets()) != numLagBuckets {
		t.Fatalf("numLagBuckets %d, lagBuckets has %d", numLagBuckets, len(lagBuckets()))
	}
	prevUpper := uint64(0)
	for i := 0; i < numLagBins; i++ {
		lo, up := prevUpper, lagBinUpper(i)
		if up <= lo {
			t.Fatalf("bin %d: upper edge %d not above %d", i, up, lo)
		}
		if lagBin(lo) != i || lagBin(up-1) != i {
			t.Fatalf("bin %d [%d, %d): lagBin gives %d and %d", i, lo, up, lagBin(lo), lagBin(up-1))
		}
		if w := float64(up - lo); lo >= 2*lagSub && w/float64(lo) > 1.0/lagSub+1e-12 {
			t.Fatalf("bin %d [%d, %d): %.3f of its value wide", i, lo, up, w/float64(lo))
		}
		prevUpper = up
	}
	if got := lagBin(math.MaxUint64); got != numLagBins-1 {
		t.Errorf("the largest lag falls in bin %d, want the last (%d)", got, numLagBins-1)
	}
}

// TestLagQuantiles: quantiles of known lags within the bins' 3 %, the exported buckets exact,
// and adds from many goroutines all counted.
func TestLagQuantiles(t *testing.T) {
	var h lagHist
	var wg sync.WaitGroup
	// 1..1000 us, ten times each, from ten goroutines.
	for g := 0; g < 10; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for us := 1; us <= 1000; us++ {
				h.add(time.Duration(us) * time.Microsecond)
			}
		}()
	}
	wg.Wait()
	s := h.snapshot()
	if s.n != 10000 {
		t.Fatalf("%d lags counted, want 10000", s.n)
	}
	for _, c := range []struct{ q, want float64 }{{0.5, 500e-6}, {0.99, 990e-6}, {1, 1000e-6}, {0.001, 1e-6}} {
		got := s.quantile(c.q)
		if got < c.want || got > c.want*(1+1.0/lagSub) {
			t.Errorf("q%g = %g s, want %g s to +3 %%", c.q, got, c.want)
		}
	}
	p := s.prometheus()
	// le 0.0001: 1..100 us; le 0.00025: 101..250 us; ... +Inf: none.
	want := map[float64]uint64{0.0001: 1000, 0.00025: 1500, 0.0005: 2500, 0.001: 5000}
	for i, b := range p.bounds {
		if w, ok := want[b]; ok && p.counts[i] != w {
			t.Errorf("bucket le %g holds %d, want %d", b, p.counts[i], w)
		}
	}
	if p.count != 10000 || math.Abs(p.sum-10*500.5e-3) > 1e-9 {
		t.Errorf("count %d sum %g, want 10000 and %g", p.count, p.sum, 10*500.5e-3)
	}
	var empty lagHist
	es := empty.snapshot()
	if !math.IsNaN(es.quantile(0.5)) {
		t.Error("an empty histogram's median is not NaN")
	}
}

// TestLabelEscaping: label values escaped as the Prometheus text format wants.
func TestLabelEscaping(t *testing.T) {
	got := string(appendLabels(nil, [][2]string{{"model_name", "a\\b\"c\nd"}, {"engine", "0"}}))
	if want := `{model_name="a\\b\"c\nd",engine="0"}`; got != want {
		t.Errorf("labels %s, want %s", got, want)
	}
}
