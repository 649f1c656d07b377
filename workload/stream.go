package workload

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"github.com/servesim/servesim/vtime"
)

// OpenStream generates an open-loop workload's requests one at a time: the requests
// Spec.Requests lists, the same draws in the same order, in memory that does not grow with them
// (and without Spec.Requests' bound on their number).
type OpenStream struct {
	s                *Spec
	arr, lens        *rand.Rand
	prof             *profile
	end, shape, opS  float64
	i                int
	inLo, inHi       int
	outLo, outHi     int
	groups           int
	gamma, exhausted bool
}

// ListStream replays a list of requests (tests, and small generated lists).
type ListStream struct {
	reqs []Request
	i    int
}

// NewListStream streams reqs in their order.
func NewListStream(reqs []Request) *ListStream { return &ListStream{reqs: reqs} }

// Next returns the next request.
func (l *ListStream) Next() (Request, bool) {
	if l.i >= len(l.reqs) {
		return Request{}, false
	}
	l.i++
	return l.reqs[l.i-1], true
}

// Err is nil: a list does not fail.
func (l *ListStream) Err() error { return nil }

// ValidateStream is Validate for a spec that is streamed (Stream): an open loop may then have up
// to MaxStreamRequests requests.
func (s *Spec) ValidateStream() error { return s.validate(MaxStreamRequests) }

// Stream returns a stream of the spec's requests: an open loop generated as it goes (up to
// MaxStreamRequests requests, nothing kept per request), a trace read
// row by row (rows must be in arrival order); other kinds are not streams (a closed loop's
// arrivals depend on the server). The caller closes a trace stream (Close, when it has one).
func (s *Spec) Stream(seed uint64) (Stream, error) {
	if err := s.validate(MaxStreamRequests); err != nil {
		return nil, err
	}
	switch s.Kind {
	case KindOpen:
		o := &s.Open
		st := &OpenStream{s: s, arr: rand.New(rand.NewPCG(seed, streamArrivals)), lens: rand.New(rand.NewPCG(seed, streamLengths)),
			prof: newProfile(o), end: o.endS(), shape: 1, gamma: o.Process == "gamma"}
		if st.gamma {
			st.shape = 1 / (o.CV * o.CV)
		}
		l := s.Lengths
		st.inLo, st.inHi = loLen(l.InputTokens, l.RangeRatio), hiLen(l.InputTokens, l.RangeRatio)
		st.outLo, st.outHi = loLen(l.OutputTokens, l.RangeRatio), hiLen(l.OutputTokens, l.RangeRatio)
		st.groups = max(l.PrefixGroups, 1)
		return st, nil
	case KindTrace:
		if s.Trace.rows != nil && s.Trace.File == "" {
			reqs, err := s.Requests(seed)
			if err != nil {
				return nil, err
			}
			return NewListStream(reqs), nil
		}
		p := s.Trace.File
		if !filepath.IsAbs(p) && s.dir != "" {
			p = filepath.Join(s.dir, p)
		}
		return OpenTrace(p, StreamOptions{TraceOptions: TraceOptions{TimeUnit: s.Trace.TimeUnit}, Format: s.Trace.Format, Speed: s.Trace.Speedup})
	}
	return nil, fmt.Errorf("workload %q: kind %s is not a stream of arrivals: a fleet takes open-loop (a rate) or trace traffic", s.Name, s.Kind)
}

// Next returns the next request.
func (st *OpenStream) Next() (Request, bool) {
	o := &st.s.Open
	if st.exhausted || (o.Requests > 0 && st.i >= o.Requests) {
		return Request{}, false
	}
	var gap float64
	if st.gamma {
		gap = gammaSample(st.arr, st.shape) / st.shape
	} else {
		gap = st.arr.ExpFloat64()
	}
	st.opS += gap
	t, ok := st.prof.invert(st.opS)
	if !ok || (st.end > 0 && t > st.end) {
		st.exhausted = true
		return Request{}, false
	}
	st.i++
	r := Request{At: vtime.Time(vtime.FromSeconds(t))}
	l := st.s.Lengths
	r.InputTokens = st.inLo
	if st.inHi > st.inLo {
		r.InputTokens += st.lens.IntN(st.inHi - st.inLo + 1)
	}
	r.OutputTokens = st.outLo
	if st.outHi > st.outLo {
		r.OutputTokens += st.lens.IntN(st.outHi - st.outLo + 1)
	}
	r.PromptID, r.PromptUnique = promptIDBase|uint64(st.i), true
	if l.SamePrompt {
		r.PromptID, r.PromptUnique = promptIDBase, false
	}
	if l.PrefixTokens > 0 {
		r.PrefixTokens = l.PrefixTokens
		r.PrefixID = prefixIDBase | uint64((st.i-1)%st.groups+1)
		r.InputTokens = max(r.InputTokens, l.PrefixTokens+1)
	}
	return r, true
}

// Err is nil: generation does not fail.
func (st *OpenStream) Err() error { return nil }
