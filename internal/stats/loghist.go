package stats

import (
	"math"
	"sort"
)

// LogBins is a log-linear binning of positive numbers: every power of two is split into 2^Sub
// equal bins, so a bin spans at most 2^-Sub of its values. Bin indices ascend with the values
// (a value v = f x 2^e, f in [0.5, 1), is in bin e<<Sub | floor((2f-1) 2^Sub)).
type LogBins struct{ Sub uint }

// Index is the bin of v > 0.
func (b LogBins) Index(v float64) int64 {
	frac, exp := math.Frexp(v) // v = frac x 2^exp, frac in [0.5, 1)
	return int64(exp)<<b.Sub | int64((frac*2-1)*float64(int64(1)<<b.Sub))
}

// Lower is the lowest value of bin i.
func (b LogBins) Lower(i int64) float64 {
	exp := int(i >> b.Sub)
	sub := float64(i & (1<<b.Sub - 1))
	return math.Ldexp((1+sub/float64(int64(1)<<b.Sub))/2, exp)
}

// Width is the width of bin i.
func (b LogBins) Width(i int64) float64 {
	return math.Ldexp(0.5/float64(int64(1)<<b.Sub), int(i>>b.Sub))
}

// Upper is the exclusive upper edge of bin i.
func (b LogBins) Upper(i int64) float64 { return b.Lower(i) + b.Width(i) }

// Mid is the midpoint of bin i: within 2^-(Sub+1) of every value in it, relatively.
func (b LogBins) Mid(i int64) float64 { return b.Lower(i) + b.Width(i)/2 }

// LogHist is a histogram of non-negative numbers on LogBins, sparse (only the bins in use are
// kept): zeros have their own count; the count, sum, minimum and maximum are exact.
type LogHist struct {
	Bins     LogBins
	counts   map[int64]uint64 // bin -> count
	zeros    uint64
	n        uint64
	sum      float64
	min, max float64
}

// NewLogHist is an empty histogram of 2^sub bins per power of two.
func NewLogHist(sub uint) *LogHist {
	return &LogHist{Bins: LogBins{sub}, counts: map[int64]uint64{}}
}

// Add records k copies of v.
func (h *LogHist) Add(v float64, k uint64) {
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if h.n == 0 || v > h.max {
		h.max = v
	}
	h.n += k
	h.sum += v * float64(k)
	if v <= 0 {
		h.zeros += k
		return
	}
	h.counts[h.Bins.Index(v)] += k
}

// Merge adds k copies of o (of the same bins).
func (h *LogHist) Merge(o *LogHist, k uint64) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c * k
	}
	h.zeros += o.zeros * k
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if h.n == 0 || o.max > h.max {
		h.max = o.max
	}
	h.n += o.n * k
	h.sum += o.sum * float64(k)
}

// N, Sum and Max are the exact count, sum and maximum.
func (h *LogHist) N() uint64    { return h.n }
func (h *LogHist) Sum() float64 { return h.sum }
func (h *LogHist) Max() float64 { return h.max }

// Sorted is the histogram's bins in order with their cumulative counts, for order statistics
// and quantiles.
type Sorted struct {
	h    *LogHist
	keys []int64  // the bins in use, ascending
	cum  []uint64 // values up to and including each bin, zeros included
}

// Sorted orders the histogram's bins.
func (h *LogHist) Sorted() *Sorted {
	keys := make([]int64, 0, len(h.counts))
	for k := range h.counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	cum := make([]uint64, len(keys))
	acc := h.zeros
	for i, k := range keys {
		acc += h.counts[k]
		cum[i] = acc
	}
	return &Sorted{h: h, keys: keys, cum: cum}
}

// OrderStat is the i-th smallest value (0-based): its bin's midpoint, clamped to the exact
// minimum and maximum.
func (s *Sorted) OrderStat(i uint64) float64 {
	h := s.h
	if i < h.zeros {
		return 0
	}
	// The first bin whose cumulative count passes i.
	j := sort.Search(len(s.cum), func(j int) bool { return i < s.cum[j] })
	if j == len(s.cum) {
		return h.max
	}
	return math.Min(math.Max(h.Bins.Mid(s.keys[j]), h.min), h.max)
}

// Quantile interpolates linearly between order statistics (numpy's "linear", as Quantile does
// on exact values); NaN when empty.
func (s *Sorted) Quantile(q float64) float64 {
	n := s.h.n
	if n == 0 {
		return math.NaN()
	}
	pos := q * float64(n-1)
	i := uint64(pos)
	if i >= n-1 {
		return s.h.max
	}
	f := pos - float64(i)
	return (1-f)*s.OrderStat(i) + f*s.OrderStat(i+1)
}
