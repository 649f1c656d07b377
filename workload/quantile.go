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
	hist  *stats.LogHist
	// limit, if positive, replaces exactLimit (a fleet's replicas share the exact budget).
	limit int
}

func newFineHist() *stats.LogHist { return stats.NewLogHist(fineSub) }

// add records v; NaN (undefined for this request) is skipped.
func (s *sampleSet) add(v float64) {
	if math.IsNaN(v) {
		return
	}
	if s.hist != nil {
		s.hist.Add(v, 1)
		return
	}
	s.exact = append(s.exact, v)
	if len(s.exact) > exactLimit || (s.limit > 0 && len(s.exact) > s.limit) {
		s.toHist()
	}
}

// addEach records every value of vs (none NaN), in order.
func (s *sampleSet) addEach(vs []float64) {
	for len(vs) > 0 && s.hist == nil {
		s.add(vs[0])
		vs = vs[1:]
	}
	if len(vs) > 0 {
		s.hist.AddEach(vs)
	}
}

func (s *sampleSet) toHist() {
	h := newFineHist()
	for _, v := range s.exact {
		h.Add(v, 1)
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
			s.hist.Add(v, uint64(k))
		}
		return
	}
	s.hist.Merge(o.hist, uint64(k))
}

// summary is a finished sampleSet: sorted values, or the histogram's bins in order.
type summary struct {
	sorted []float64 // exact
	h      *stats.LogHist
	hs     *stats.Sorted
}

func (s *sampleSet) summary() *summary {
	if s.hist == nil {
		sort.Float64s(s.exact)
		return &summary{sorted: s.exact}
	}
	return &summary{h: s.hist, hs: s.hist.Sorted()}
}

func (m *summary) n() int {
	if m.h != nil {
		return int(m.h.N())
	}
	return len(m.sorted)
}

// quantile interpolates linearly between order statistics (numpy "linear"), exactly or from the
// histogram's.
func (m *summary) quantile(q float64) float64 {
	if m.h == nil {
		return stats.Quantile(m.sorted, q)
	}
	return m.hs.Quantile(q)
}

func (m *summary) dist() Dist {
	if m.h == nil {
		return dist(m.sorted)
	}
	d := Dist{N: int(m.h.N()), RelErr: QuantileRelErr}
	if m.h.N() == 0 {
		return d
	}
	d.Mean = m.h.Sum() / float64(m.h.N())
	d.P50 = m.quantile(0.5)
	d.P90 = m.quantile(0.9)
	d.P99 = m.quantile(0.99)
	d.Max = m.h.Max()
	d.Curve = make([]float64, CurvePoints+1)
	for i := range d.Curve {
		d.Curve[i] = m.quantile(float64(i) / CurvePoints)
	}
	return d
}
