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

// LogHist is a histogram of non-negative numbers on LogBins, sparse by pages (only the pages of
// bins in use are kept, pageLen counts each, so an add touches one counter in a flat array
// rather than a hash map's groups): zeros have their own count; the count, sum, minimum and
// maximum are exact.
type LogHist struct {
	Bins     LogBins
	pages    []*logPage // pages[j] holds bins (first+j)<<pageBits onwards, nil if none in use
	first    int64
	zeros    uint64
	n        uint64
	sum      float64
	min, max float64
}

// pageBits sets the bins per page, pageLen: 256 counters, 2 KiB.
const (
	pageBits = 8
	pageLen  = 1 << pageBits
)

type logPage [pageLen]uint64

// NewLogHist is an empty histogram of 2^sub bins per power of two.
func NewLogHist(sub uint) *LogHist {
	return &LogHist{Bins: LogBins{sub}}
}

// counter is bin i's count, its page made if needed.
func (h *LogHist) counter(i int64) *uint64 {
	pg := i >> pageBits
	switch {
	case len(h.pages) == 0:
		h.first = pg
		h.pages = append(h.pages, nil)
	case pg < h.first:
		pages := make([]*logPage, h.first-pg+int64(len(h.pages)))
		copy(pages[h.first-pg:], h.pages)
		h.pages, h.first = pages, pg
	case pg >= h.first+int64(len(h.pages)):
		h.pages = append(h.pages, make([]*logPage, pg-h.first-int64(len(h.pages))+1)...)
	}
	p := h.pages[pg-h.first]
	if p == nil {
		p = new(logPage)
		h.pages[pg-h.first] = p
	}
	return &p[i&(pageLen-1)]
}

// each calls f with every bin in use and its count, in ascending order.
func (h *LogHist) each(f func(bin int64, c uint64)) {
	for j, p := range h.pages {
		if p == nil {
			continue
		}
		base := (h.first + int64(j)) << pageBits
		for k, c := range p {
			if c != 0 {
				f(base+int64(k), c)
			}
		}
	}
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
	*h.counter(h.Bins.Index(v)) += k
}

// AddEach records each of vs once, as Add(v, 1) on each in turn would. The counters are
// incremented after every bin is found, in a loop of independent increments, so a processor
// waiting for one counter's cache line goes on to the next: a histogram whose counters are out
// of the caches (one of many, in turn) pays for its misses together rather than one by one.
func (h *LogHist) AddEach(vs []float64) {
	var bins [64]int64
	for len(vs) > 0 {
		chunk := vs[:min(len(vs), len(bins))]
		vs = vs[len(chunk):]
		n := 0
		for _, v := range chunk {
			if h.n == 0 || v < h.min {
				h.min = v
			}
			if h.n == 0 || v > h.max {
				h.max = v
			}
			h.n++
			h.sum += v
			if v <= 0 {
				h.zeros++
				continue
			}
			bins[n] = h.Bins.Index(v)
			n++
		}
		for _, i := range bins[:n] {
			*h.counter(i)++
		}
	}
}

// Merge adds k copies of o (of the same bins).
func (h *LogHist) Merge(o *LogHist, k uint64) {
	if o.n == 0 {
		return
	}
	o.each(func(i int64, c uint64) { *h.counter(i) += c * k })
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
	var keys []int64
	var cum []uint64
	acc := h.zeros
	h.each(func(i int64, c uint64) {
		acc += c
		keys = append(keys, i)
		cum = append(cum, acc)
	})
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
