package workload

import (
	"github.com/servesim/servesim/internal/stats"
	"math"
	"sort"
)

// exactLimit is how many values a latency distribution keeps exactly: up to it, quantiles are the
// order statistics' linear interpolation (numpy's default); past it, a log-linear histogram.
const exactLimit = 1 << 17

// fineSub is log2 of a fine histogram's sub-buckets per power of two: a bucket spans at most
// 2^-fineSub of its values, so its midpoint is within half that, 2^-(fineSub+1) = 0.049 %.
const fineSub = 10

// QuantileRelErr bounds the relative error of every quantile of a Dist with more than exactLimit
// values (Dist.RelErr): each order statistic is replaced by its histogram bucket's midpoint, within
// half a bucket, and a quantile interpolates two of them.
const QuantileRelErr = 1.0 / (2 << fineSub)

// sampleSet is one latency over requests (ms), built a value at a time: exact up to exactLimit
// values, then a log-linear histogram of bounded relative error, so a trace of millions of
// requests keeps kilobytes per metric instead of eight bytes per request.
type sampleSet struct {
	exact []float64 // nil once approximate
	hist  *fineHist
	// limit, if positive, replaces exactLimit (a fleet's replicas share the exact budget).
	limit int
}

// fineHist is a log-linear histogram of non-negative floats: value v > 0 with binary exponent e
// and mantissa m in [1, 2) falls in bucket (e, floor(m x 2^fineSub)); zeros have their own count.
// The count, sum, minimum and maximum are exact.
type fineHist struct {
	counts   map[int64]uint64 // bucket -> count
	zeros    uint64
	n        uint64
	sum      float64
	min, max float64
}

func fineIndex(v float64) int64 {
	frac, exp := math.Frexp(v) // v = frac x 2^exp, frac in [0.5, 1)
	return int64(exp)<<fineSub | int64((frac*2-1)*(1<<fineSub))
}

// fineMid is the midpoint of bucket i.
func fineMid(i int64) float64 {
	exp := int(i >> fineSub)
	sub := float64(i & (1<<fineSub - 1))
	lo := math.Ldexp((1+sub/(1<<fineSub))/2, exp)
	w := math.Ldexp(0.5/(1<<fineSub), exp)
	return lo + w/2
}

func (h *fineHist) add(v float64, k uint64) {
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
	h.counts[fineIndex(v)] += k
}

func newFineHist() *fineHist { return &fineHist{counts: map[int64]uint64{}} }

// add records v; NaN (undefined for this request) is skipped.
func (s *sampleSet) add(v float64) {
	if math.IsNaN(v) {
		return
	}
	if s.hist != nil {
		s.hist.add(v, 1)
		return
	}
	s.exact = append(s.exact, v)
	if len(s.exact) > exactLimit || (s.limit > 0 && len(s.exact) > s.limit) {
		s.toHist()
	}
}

func (s *sampleSet) toHist() {
	h := newFineHist()
	for _, v := range s.exact {
		h.add(v, 1)
	}
	s.exact, s.hist = nil, h
}

// merge adds k copies of o (identical replicas).
func (s *sampleSet) merge(o *sampleSet, k int) {
	if o.hist == nil && s.hist == nil && len(s.exact)+k*len(o.exact) <= exactLimit {
		for i := 0; i < k; i++ {
			s.exact = append(s.exact, o.exact...)
		}
		return
	}
	if s.hist == nil {
		s.toHist()
	}
	if o.hist == nil {
		for _, v := range o.exact {
			s.hist.add(v, uint64(k))
		}
		return
	}
	h := o.hist
	if h.n == 0 {
		return
	}
	kk := uint64(k)
	for i, c := range h.counts {
		s.hist.counts[i] += c * kk
	}
	s.hist.zeros += h.zeros * kk
	if s.hist.n == 0 || h.min < s.hist.min {
		s.hist.min = h.min
	}
	if s.hist.n == 0 || h.max > s.hist.max {
		s.hist.max = h.max
	}
	s.hist.n += h.n * kk
	s.hist.sum += h.sum * float64(k)
}

// summary is a finished sampleSet: sorted values, or the histogram's buckets in order.
type summary struct {
	sorted []float64 // exact
	h      *fineHist
	keys   []int64  // the histogram's buckets, ascending
	cum    []uint64 // values up to and including each bucket, zeros included
}

func (s *sampleSet) summary() *summary {
	if s.hist == nil {
		sort.Float64s(s.exact)
		return &summary{sorted: s.exact}
	}
	keys := make([]int64, 0, len(s.hist.counts))
	for k := range s.hist.counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	cum := make([]uint64, len(keys))
	acc := s.hist.zeros
	for i, k := range keys {
		acc += s.hist.counts[k]
		cum[i] = acc
	}
	return &summary{h: s.hist, keys: keys, cum: cum}
}

func (m *summary) n() int {
	if m.h != nil {
		return int(m.h.n)
	}
	return len(m.sorted)
}

// orderStat returns the i-th smallest value (0-based) of a histogram: its bucket's midpoint,
// clamped to the exact minimum and maximum.
func (m *summary) orderStat(i uint64) float64 {
	h := m.h
	if i < h.zeros {
		return 0
	}
	// The first bucket whose cumulative count passes i.
	j := sort.Search(len(m.cum), func(j int) bool { return i < m.cum[j] })
	if j == len(m.cum) {
		return h.max
	}
	return math.Min(math.Max(fineMid(m.keys[j]), h.min), h.max)
}

// quantile interpolates linearly between order statistics (numpy "linear"), exactly or from the
// histogram's.
func (m *summary) quantile(q float64) float64 {
	if m.h == nil {
		return stats.Quantile(m.sorted, q)
	}
	n := m.h.n
	if n == 0 {
		return math.NaN()
	}
	pos := q * float64(n-1)
	i := uint64(pos)
	if i >= n-1 {
		return m.h.max
	}
	f := pos - float64(i)
	return (1-f)*m.orderStat(i) + f*m.orderStat(i+1)
}

func (m *summary) dist() Dist {
	if m.h == nil {
		return dist(m.sorted)
	}
	d := Dist{N: int(m.h.n), RelErr: QuantileRelErr}
	if m.h.n == 0 {
		return d
	}
	d.Mean = m.h.sum / float64(m.h.n)
	d.P50 = m.quantile(0.5)
	d.P90 = m.quantile(0.9)
	d.P99 = m.quantile(0.99)
	d.Max = m.h.max
	d.Curve = make([]float64, CurvePoints+1)
	for i := range d.Curve {
		d.Curve[i] = m.quantile(float64(i) / CurvePoints)
	}
	return d
}
