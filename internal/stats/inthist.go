package stats

import (
	"math"
	"math/bits"
)

// IntBins is the log-linear (HDR-style) binning of non-negative integers (durations in
// nanoseconds): exact below 2^(Sub+1), then 2^Sub equal bins per power of two, so a bin is at
// most 2^-Sub of its values wide. Bin i holds the integers Low(i) .. Upper(i)-1.
type IntBins struct{ Sub uint }

// Index is the bin of v.
func (b IntBins) Index(v uint64) int {
	if v < 1<<b.Sub {
		return int(v)
	}
	e := uint(bits.Len64(v)) - 1 - b.Sub // shift so the top Sub+1 bits remain
	return int(e+1)<<b.Sub + int(v>>e) - 1<<b.Sub
}

// Low is the smallest value of bin i and the bin's width.
func (b IntBins) Low(i int) (lo, width uint64) {
	if i < 1<<b.Sub {
		return uint64(i), 1
	}
	e := uint(i>>b.Sub) - 1
	m := uint64(i&(1<<b.Sub-1) + 1<<b.Sub)
	return m << e, uint64(1) << e
}

// Upper is the exclusive upper edge of bin i.
func (b IntBins) Upper(i int) uint64 {
	lo, w := b.Low(i)
	return lo + w
}

// IntHist is a dense histogram of non-negative integers on IntBins: millions of values in a few
// kilobytes; the count, sum and maximum are exact.
type IntHist struct {
	Bins   IntBins
	counts []uint64
	n      uint64
	sum    int64 // exact: the mean does not depend on the order of the adds
	max    int64
}

// Add records n copies of v (a negative v counts as 0).
func (h *IntHist) Add(v int64, n uint64) {
	if n == 0 {
		return
	}
	if v < 0 {
		v = 0
	}
	i := h.Bins.Index(uint64(v))
	if i >= len(h.counts) {
		h.counts = append(h.counts, make([]uint64, i+1-len(h.counts))...)
	}
	h.counts[i] += n
	h.n += n
	h.sum += v * int64(n)
	h.max = max(h.max, v)
}

// Merge adds k copies of o (of the same bins).
func (h *IntHist) Merge(o *IntHist, k uint64) {
	if len(o.counts) > len(h.counts) {
		h.counts = append(h.counts, make([]uint64, len(o.counts)-len(h.counts))...)
	}
	for i, c := range o.counts {
		h.counts[i] += c * k
	}
	h.n += o.n * k
	h.sum += o.sum * int64(k)
	h.max = max(h.max, o.max)
}

// N, Sum and Max are the exact count, sum and maximum.
func (h *IntHist) N() uint64  { return h.n }
func (h *IntHist) Sum() int64 { return h.sum }
func (h *IntHist) Max() int64 { return h.max }

// Quantile is the q quantile: the midpoint of the bin holding the ceil(q n)-th value, at most
// the maximum; NaN when empty.
func (h *IntHist) Quantile(q float64) float64 {
	if h.n == 0 {
		return math.NaN()
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = max(rank, 1)
	var acc uint64
	for i, c := range h.counts {
		acc += c
		if acc >= rank {
			lo, w := h.Bins.Low(i)
			return math.Min(float64(lo)+float64(w)/2, float64(h.max))
		}
	}
	return float64(h.max)
}
