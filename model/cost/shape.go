package cost

// SeqWork is one request's share of an engine step, as the cost model sees it.
type SeqWork struct {
	// Start is the number of tokens already in the cache; Tokens are processed now.
	Start, Tokens int
	// Decode is a verification/decode entry (1 + k tokens against a long context).
	Decode bool
	// Emits is true when the step samples output for the request (the drafter runs for it).
	Emits bool
}

// StepShape summarises a step's batch.
type StepShape struct {
	Seqs []SeqWork
	// Totals maintained by Add.
	Tokens        int // all scheduled tokens
	DecodeSeqs    int
	DecodeTokens  int
	PrefillTokens int
	EmitSeqs      int
}

// Reset empties the shape, keeping storage.
func (s *StepShape) Reset() {
	s.Seqs = s.Seqs[:0]
	s.Tokens, s.DecodeSeqs, s.DecodeTokens, s.PrefillTokens, s.EmitSeqs = 0, 0, 0, 0, 0
}

// Add appends one request's work.
func (s *StepShape) Add(w SeqWork) {
	s.Seqs = append(s.Seqs, w)
	s.Tokens += w.Tokens
	if w.Decode {
		s.DecodeSeqs++
		s.DecodeTokens += w.Tokens
	} else {
		s.PrefillTokens += w.Tokens
	}
	if w.Emits {
		s.EmitSeqs++
	}
}

// UniformDecode reports whether every entry is a decode entry (a full CUDA graph can run it).
func (s *StepShape) UniformDecode() bool { return len(s.Seqs) > 0 && s.DecodeSeqs == len(s.Seqs) }
