package workload

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/servesim/servesim/vtime"
)

// Request is one generated request: when it arrives (open loop and traces; 0 in a closed loop),
// how long its prompt and output are, and which content it shares.
type Request struct {
	At           vtime.Time
	InputTokens  int
	OutputTokens int
	PromptID     uint64
	// PromptUnique: no other request of the workload has PromptID (sim.RequestSpec).
	PromptUnique bool
	PrefixID     uint64
	PrefixTokens int
	// Blocks names the prompt span by span, BlockSpan tokens each (a trace's prefix-block hash
	// ids, sim.RequestSpec.Blocks); nil for prompts named by PromptID and PrefixID alone.
	Blocks    []uint64
	BlockSpan int
	// Session groups the requests of one conversation (0: none), for session-affine routing.
	Session uint64
	// Line is the trace row it came from (0: generated).
	Line int
}

// Fits reports whether the request fits a max_model_len (vLLM's API server refuses it otherwise).
func (q *Request) Fits(maxModelLen int) bool { return q.InputTokens+q.OutputTokens <= maxModelLen }

// Content-id ranges: generated prompts, generated prefixes and trace prefixes (prefixHash) never
// collide, and none collides with the small ids of the benchmark cell.
const (
	promptIDBase = 1 << 62
	prefixIDBase = 1 << 61
)

// PCG stream constants: lengths and arrivals draw from separate streams, so changing one does not
// move the other.
const (
	streamLengths  = 0x6c656e67746873 // "lengths"
	streamArrivals = 0x6172726976616c // "arrival"
)

// Requests generates the requests of a closed, open or trace workload. The result depends only on
// the spec and the seed (math/rand/v2 PCG).
func (s *Spec) Requests(seed uint64) ([]Request, error) {
	switch s.Kind {
	case KindClosed:
		return s.lengths(seed, s.Closed.Requests, nil), nil
	case KindOpen:
		at, err := s.Open.arrivals(seed)
		if err != nil {
			return nil, err
		}
		return s.lengths(seed, len(at), at), nil
	case KindTrace:
		if s.Trace.rows == nil {
			if err := s.LoadTrace(); err != nil {
				return nil, err
			}
		}
		rows := s.Trace.rows
		if n := s.Trace.MaxRequests; n > 0 && n < len(rows) {
			rows = rows[:n]
		}
		speed := s.Trace.Speedup
		if speed == 0 {
			speed = 1
		}
		out := make([]Request, len(rows))
		for i, r := range rows {
			at := math.Round(float64(r.ArrivalNS) / speed)
			if at > maxArrivalNS {
				return nil, fmt.Errorf("trace.speedup = %v: the arrival at %.0f s becomes %.3g s, past the %.0f s a replay can span", speed, float64(r.ArrivalNS)/1e9, at/1e9, maxArrivalNS/1e9)
			}
			out[i] = Request{At: vtime.Time(at), InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
				PromptID: promptIDBase | uint64(i+1), PromptUnique: true, PrefixID: r.PrefixID, PrefixTokens: r.PrefixTokens, Line: r.Line}
			if ids := s.Trace.blocks[r.Line]; ids != nil {
				out[i].Blocks, out[i].BlockSpan = traceBlocks(ids, 0), MooncakeBlockTokens
			}
		}
		return out, nil
	case KindVLLMBench, KindOffline:
		if err := s.LoadDataset(); err != nil {
			return nil, err
		}
		reqs, _, err := s.VLLM.benchRequests(s.Kind)
		if err != nil {
			return nil, err
		}
		out := make([]Request, len(reqs))
		for i := range reqs {
			out[i] = reqs[i].Request
		}
		return out, nil
	}
	return nil, fmt.Errorf("workload kind %q has no request list", s.Kind)
}

// lengths draws n requests' lengths (vllm bench serve's random dataset: uniform integers within
// the range ratio) and assigns content ids.
func (s *Spec) lengths(seed uint64, n int, at []vtime.Time) []Request {
	l := s.Lengths
	rng := rand.New(rand.NewPCG(seed, streamLengths))
	inLo, inHi := loLen(l.InputTokens, l.RangeRatio), hiLen(l.InputTokens, l.RangeRatio)
	outLo, outHi := loLen(l.OutputTokens, l.RangeRatio), hiLen(l.OutputTokens, l.RangeRatio)
	groups := max(l.PrefixGroups, 1)
	out := make([]Request, n)
	for i := range out {
		r := &out[i]
		r.InputTokens = inLo
		if inHi > inLo {
			r.InputTokens += rng.IntN(inHi - inLo + 1)
		}
		r.OutputTokens = outLo
		if outHi > outLo {
			r.OutputTokens += rng.IntN(outHi - outLo + 1)
		}
		r.PromptID, r.PromptUnique = promptIDBase|uint64(i+1), true
		if l.SamePrompt {
			r.PromptID, r.PromptUnique = promptIDBase, false
		}
		if l.PrefixTokens > 0 {
			r.PrefixTokens = l.PrefixTokens
			r.PrefixID = prefixIDBase | uint64(i%groups+1)
			r.InputTokens = max(r.InputTokens, l.PrefixTokens+1)
		}
		if at != nil {
			r.At = at[i]
		}
	}
	return out
}

// arrivals generates open-loop arrival times. Gaps of mean 1 in operational time (the integral of
// the rate) are drawn from the process and mapped back to real time through the rate profile.
func (o *Open) arrivals(seed uint64) ([]vtime.Time, error) {
	rng := rand.New(rand.NewPCG(seed, streamArrivals))
	prof := newProfile(o)
	end := o.endS()
	shape := 1.0
	if o.Process == "gamma" {
		shape = 1 / (o.CV * o.CV)
	}
	var out []vtime.Time
	var s float64 // operational time
	for o.Requests == 0 || len(out) < o.Requests {
		var gap float64
		if o.Process == "gamma" {
			gap = gammaSample(rng, shape) / shape
		} else {
			gap = rng.ExpFloat64()
		}
		s += gap
		t, ok := prof.invert(s)
		if !ok || (end > 0 && t > end) {
			break
		}
		if len(out) >= MaxRequests {
			return nil, fmt.Errorf("open: more than %d arrivals: lower the rate or the duration", MaxRequests)
		}
		out = append(out, vtime.Time(vtime.FromSeconds(t)))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("open: no request arrives before the end (%g s)", end)
	}
	return out, nil
}

// profile is a piecewise-linear rate r(t) with its integral, inverted segment by segment.
type profile struct {
	t, r []float64 // corners
	area []float64 // cumulative integral up to corner i
	seg  int       // current segment (arrivals are monotone)
}

func newProfile(o *Open) *profile {
	p := &profile{}
	if len(o.Ramp) == 0 {
		p.t = []float64{0}
		p.r = []float64{o.RatePerS}
	} else {
		if o.Ramp[0].AtS > 0 {
			p.t = append(p.t, 0)
			p.r = append(p.r, o.Ramp[0].RatePerS)
		}
		for _, c := range o.Ramp {
			p.t = append(p.t, c.AtS)
			p.r = append(p.r, c.RatePerS)
		}
	}
	p.area = make([]float64, len(p.t))
	for i := 1; i < len(p.t); i++ {
		p.area[i] = p.area[i-1] + (p.r[i-1]+p.r[i])/2*(p.t[i]-p.t[i-1])
	}
	return p
}

// invert returns t with integral_0^t r = s, or false when the rate stays 0 beyond the last corner.
func (p *profile) invert(s float64) (float64, bool) {
	n := len(p.t)
	for p.seg < n-1 && s > p.area[p.seg+1] {
		p.seg++
	}
	i := p.seg
	if i == n-1 {
		r := p.r[n-1]
		if r <= 0 {
			return 0, false
		}
		return p.t[n-1] + (s-p.area[n-1])/r, true
	}
	a := s - p.area[i]
	r0 := p.r[i]
	m := (p.r[i+1] - r0) / (p.t[i+1] - p.t[i])
	// Solve r0 x + m x^2 / 2 = a for x in [0, segment]; stable form of the quadratic root.
	disc := r0*r0 + 2*m*a
	if disc < 0 {
		disc = 0
	}
	den := r0 + math.Sqrt(disc)
	if den <= 0 {
		return p.t[i], true
	}
	x := 2 * a / den
	return math.Min(p.t[i]+x, p.t[i+1]), true
}

// gammaSample draws Gamma(shape, 1) (Marsaglia and Tsang 2000; shape < 1 by the boost
// Gamma(a) = Gamma(a+1) U^(1/a)).
func gammaSample(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return gammaSample(rng, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x {
			return d * v
		}
		if u > 0 && math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
