package cost

import "github.com/servesim/servesim/model/param"

// The pieces of Step that an event-driven engine needs to price a step without visiting every
// request (package sim's fast mode): a step's time is its batch totals' terms (tokenTerms, CUDA-
// graph padding, the drafter's GEMMs, overhead, CPU) plus a sum over its requests of their own
// terms (attention, recurrent state, the drafter's attention). Seq gives one request's share,
// StepSum adds a precomputed sum of them to the totals' terms, and Wall combines GPU and CPU time.
// StepSum(totals, the sum of Seq over the batch) equals Step up to the order of the floating-
// point additions (span_test.go checks it on random batches of several models).

// SeqSeconds is one request's share of a step, by term: what Step adds for it alone.
type SeqSeconds struct {
	Attention float64 // indexer and attention (TermAttention)
	State     float64 // recurrent-state traffic and scan (TermState)
	Drafter   float64 // the drafter's attention over its 1 + k positions, when the entry emits (TermDrafter)
}

// Add returns a + b.
func (a SeqSeconds) Add(b SeqSeconds) SeqSeconds {
	return SeqSeconds{a.Attention + b.Attention, a.State + b.State, a.Drafter + b.Drafter}
}

// Sub returns a - b.
func (a SeqSeconds) Sub(b SeqSeconds) SeqSeconds {
	return SeqSeconds{a.Attention - b.Attention, a.State - b.State, a.Drafter - b.Drafter}
}

// Scale returns a x f.
func (a SeqSeconds) Scale(f float64) SeqSeconds {
	return SeqSeconds{a.Attention * f, a.State * f, a.Drafter * f}
}

// Total is the sum of the terms: what the request adds to the step's GPU time.
func (a SeqSeconds) Total() float64 { return a.Attention + a.State + a.Drafter }

// StepCounts are the batch totals Step reads besides the requests' own terms (StepShape's).
type StepCounts struct {
	Seqs, Tokens, DecodeSeqs, DecodeTokens, EmitSeqs int
	// MaxTokens is the most tokens one request runs in the step (its chunk): with pipeline
	// stages or data-parallel ranks the busiest micro-batch holds at least that request.
	MaxTokens int
}

// Counts returns the totals of s.
func (s *StepShape) Counts() StepCounts {
	n := StepCounts{Seqs: len(s.Seqs), Tokens: s.Tokens, DecodeSeqs: s.DecodeSeqs, DecodeTokens: s.DecodeTokens, EmitSeqs: s.EmitSeqs}
	for _, w := range s.Seqs {
		n.MaxTokens = max(n.MaxTokens, w.Tokens)
	}
	return n
}

// Seq returns the terms Step adds for request work w: its attention and state on every layer
// group, and, when it emits, the drafter's attention over 1 + k positions after it.
func (c *Model) Seq(w SeqWork) SeqSeconds {
	var st StepCost
	c.attnTime(c.attn, w, &st, TermAttention, TermState)
	out := SeqSeconds{Attention: st.Seconds[TermAttention], State: st.Seconds[TermState]}
	if c.draft && w.Emits {
		var d StepCost
		c.attnTime(c.draftAttn, SeqWork{Start: w.Start + w.Tokens, Tokens: 1 + c.specK, Decode: true}, &d, TermDrafter, TermDrafter)
		out.Drafter = d.Seconds[TermDrafter]
	}
	if c.spec != nil {
		out.Drafter += c.specSeq(w)
	}
	if c.mtpDrafts() {
		out.Drafter += c.mtpSeq(w)
	}
	return out
}

// StepSum returns the time of a step with totals n whose requests' own terms add up to per: Step
// without the walk over the requests. It is StepFinish(StepTotals(n), per).
func (c *Model) StepSum(n *StepCounts, per SeqSeconds) StepCost {
	return c.StepFinish(c.StepTotals(n), per)
}

// StepTotals is the part of StepSum that depends on the totals alone (every term but the
// requests' own, and the CPU time); a caller pricing many steps with equal totals computes it
// once.
func (c *Model) StepTotals(n *StepCounts) StepCost {
	if c.split() {
		return c.splitTotals(n)
	}
	return c.stepTotals(n)
}

// stepTotals is StepTotals of one batch on one rank.
func (c *Model) stepTotals(n *StepCounts) StepCost {
	var st StepCost
	if n.Seqs == 0 {
		return st
	}
	t := float64(n.Tokens)
	logits := float64(n.DecodeTokens + n.EmitSeqs - n.DecodeSeqs)
	c.tokenTerms(t, logits, &st)
	st.Seconds[TermAllReduce] += c.dcpSeconds(float64(n.DecodeTokens))
	if n.DecodeSeqs == n.Seqs {
		if pt := c.padTokens(n.Tokens); pt != n.Tokens {
			var pad, base StepCost
			c.tokenTerms(float64(pt), logits, &pad)
			c.tokenTerms(t, logits, &base)
			for i := range pad.Seconds {
				st.Seconds[TermPadding] += pad.Seconds[i] - base.Seconds[i]
			}
		}
	}
	if c.draft && n.EmitSeqs > 0 {
		var d StepCost
		q := float64(n.EmitSeqs * (1 + c.specK))
		c.gemmTime(c.draftKV, t, &d, TermDrafter)
		c.gemmTime(c.draftDense, q, &d, TermDrafter)
		c.gemmTime(c.lmHead, float64(n.EmitSeqs*c.specK), &d, TermDrafter)
		d.Seconds[TermDrafter] += c.gatherSeconds(float64(n.EmitSeqs*c.specK) * c.vocab * 4)
		d.Seconds[TermDrafter] += c.allReduceSeconds(q, 2*c.draftLayers)
		d.Seconds[TermDrafter] += c.draftFixedSeconds
		st.Seconds[TermDrafter] += d.Seconds[TermDrafter]
	}
	if c.spec != nil {
		c.specTotals(n, &st)
	}
	if c.mtpDrafts() {
		c.mtpTotals(n, &st)
	}
	st.Seconds[TermOverhead] += c.p[param.StepOverheadUS]*1e-6 + c.fixedSeconds
	st.CPUSeconds = (c.p[param.CPUStepUS] + c.p[param.CPUPerReqUS]*float64(n.Seqs)) * 1e-6
	return st
}

// StepFinish completes a StepTotals with the requests' own terms: GPU time, wall time, and the
// CPU time async scheduling does not hide.
func (c *Model) StepFinish(st StepCost, per SeqSeconds) StepCost {
	if st.Seconds == ([NumTerms]float64{}) && st.CPUSeconds == 0 {
		return st // no request
	}
	if st.SeqShare > 0 {
		// The busiest micro-batch's or rank's share of the requests' own terms.
		per = per.Scale(st.SeqShare)
	}
	st.Seconds[TermAttention] += per.Attention
	st.Seconds[TermState] += per.State
	st.Seconds[TermDrafter] += per.Drafter
	for _, v := range st.Seconds {
		st.GPUSeconds += v
	}
	st.TotalSeconds = c.Wall(st.GPUSeconds, st.CPUSeconds)
	if c.async && st.CPUSeconds > st.GPUSeconds {
		st.Seconds[TermOverhead] += st.CPUSeconds - st.GPUSeconds
	} else if !c.async {
		st.Seconds[TermOverhead] += st.CPUSeconds
	}
	return st
}

// Wall is a step's wall time from its GPU and CPU time: the longer of the two under async
// scheduling (the CPU prepares the next step while the GPU runs this one), else their sum.
func (c *Model) Wall(gpuSeconds, cpuSeconds float64) float64 {
	if c.async {
		return max(gpuSeconds, cpuSeconds)
	}
	return gpuSeconds + cpuSeconds
}
