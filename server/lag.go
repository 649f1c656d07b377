package server

import (
	"math"
	"sort"
	"sync/atomic"
	"time"

	"github.com/servesim/servesim/internal/stats"
)

// lagBuckets are the buckets of servesim's lag histograms in /metrics, in seconds (vLLM-like: a
// 1-2.5-5 ladder from 100 us to 1 s).
func lagBuckets() []float64 {
	return []float64{0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}
}

const (
	// numLagBuckets is len(lagBuckets()).
	numLagBuckets = 15
	// lagSub is the number of log-linear bins per octave of nanoseconds: a quantile is known to
	// within 1/lagSub of its value (3 %).
	lagSub      = 32
	lagSubShift = 5 // log2(lagSub)
	// lagMaxShift bounds the bins at 2^40 ns (about 18 minutes); longer lags share the last one.
	lagMaxShift = 40
	numLagBins  = (lagMaxShift - lagSubShift + 1) * lagSub
)

// lagHist is a histogram of the server's lag behind the simulated clock: exact counts in the
// exported buckets (lagBuckets) and log-linear bins for quantiles. Every field is atomic, so the
// stream handlers add to one histogram without a lock, and a snapshot never stops them.
type lagHist struct {
	buckets [numLagBuckets + 1]atomic.Uint64 // the last one is +Inf
	bins    [numLagBins]atomic.Uint64
	sumNS   atomic.Int64
	maxNS   atomic.Int64
}

// lagBins are the quantile bins: stats.IntBins of lagSub bins per octave of nanoseconds.
func lagBins() stats.IntBins { return stats.IntBins{Sub: lagSubShift} }

// lagBin is the bin of a lag of v ns (exact below 2 lagSub ns, then lagSub bins per octave);
// lags from 2^lagMaxShift ns share the last bin.
func lagBin(v uint64) int { return lagBins().Index(min(v, 1<<lagMaxShift-1)) }

// lagBinUpper is the exclusive upper edge of bin i, in ns.
func lagBinUpper(i int) uint64 { return lagBins().Upper(i) }

func (h *lagHist) add(d time.Duration) {
	d = max(d, 0)
	s := d.Seconds()
	b := lagBuckets()
	h.buckets[sort.SearchFloat64s(b, s)].Add(1) // first bound >= s: Prometheus buckets are "le"
	h.bins[lagBin(uint64(d))].Add(1)
	h.sumNS.Add(int64(d))
	for {
		m := h.maxNS.Load()
		if int64(d) <= m || h.maxNS.CompareAndSwap(m, int64(d)) {
			break
		}
	}
}

// lagSnapshot is a lagHist's counts at one moment.
type lagSnapshot struct {
	buckets [numLagBuckets + 1]uint64
	bins    []uint64
	n       uint64
	sum     float64 // seconds
	maxNS   int64
}

func (h *lagHist) snapshot() lagSnapshot {
	s := lagSnapshot{bins: make([]uint64, numLagBins), sum: float64(h.sumNS.Load()) * 1e-9, maxNS: h.maxNS.Load()}
	for i := range h.buckets {
		s.buckets[i] = h.buckets[i].Load()
		s.n += s.buckets[i]
	}
	for i := range h.bins {
		s.bins[i] = h.bins[i].Load()
	}
	return s
}

// quantile is the q-quantile in seconds: the upper edge of its bin (within 3 %), at most the
// largest lag seen.
func (s *lagSnapshot) quantile(q float64) float64 {
	var total uint64
	for _, k := range s.bins {
		total += k
	}
	if total == 0 {
		return math.NaN()
	}
	rank := max(uint64(math.Ceil(q*float64(total))), 1)
	var c uint64
	for i, k := range s.bins {
		c += k
		if c >= rank {
			return float64(min(lagBinUpper(i), uint64(s.maxNS))) * 1e-9
		}
	}
	return float64(s.maxNS) * 1e-9
}

// prometheus is the histogram on lagBuckets.
func (s *lagSnapshot) prometheus() histogram {
	out := newHistogram(lagBuckets())
	copy(out.counts, s.buckets[:])
	out.sum, out.count = s.sum, s.n
	return out
}
