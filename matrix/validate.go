package matrix

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// matchKey is the key cells are matched by: prefill rows are one per context, whatever
// concurrency they carry.
func matchKey(c *Cell) Key {
	k := c.Key()
	if k.Phase == Prefill {
		k.Concurrency = 0
	}
	return k
}

// Validate checks the matrix's invariants: each cell sits in the slice of its phase and has a
// clean context label (non-empty, trimmed, printable UTF-8), positive context tokens and
// concurrency, a known status, counts >= -1, measurements absent (NaN) or finite and >= 0, and no two cells share a key (prefill rows: no
// two share a context).
func (m *Matrix) Validate() error {
	seen := map[Key]bool{}
	for _, part := range []struct {
		phase Phase
		cells []Cell
	}{{Prefill, m.Prefill}, {Decode, m.Decode}} {
		for i := range part.cells {
			c := &part.cells[i]
			if err := validCell(c, part.phase, seen); err != nil {
				return fmt.Errorf("%s[%d] (%s): %w", part.phase, i, c.Key(), err)
			}
		}
	}
	return nil
}

// maxMeasurement bounds a measured value (tok/s, ms, s, requests): far above any real one.
const maxMeasurement = 1e15

func validCell(c *Cell, phase Phase, seen map[Key]bool) error {
	switch {
	case c.Phase != phase:
		return fmt.Errorf("phase %q: want %q", c.Phase, phase)
	case !cleanLabel(c.Context):
		return fmt.Errorf("context label %q: want a label such as 8K (no surrounding space or control characters)", c.Context)
	case c.ContextTokens <= 0:
		return fmt.Errorf("context tokens %d: want > 0", c.ContextTokens)
	case c.Concurrency < 1:
		return fmt.Errorf("concurrency %d: want >= 1", c.Concurrency)
	case !knownStatus(c.Status):
		return fmt.Errorf("status %q: want Valid, Requests queued, Over capacity or Error", c.Status)
	case c.Completed < -1 || c.OutputTokens < -1:
		return fmt.Errorf("counts %d, %d: want >= 0 or -1 (absent)", c.Completed, c.OutputTokens)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"total_tok_s", c.TotalTokS}, {"per_request_tok_s", c.PerRequestTokS}, {"ttft_ms", c.TTFTms},
		{"tbt_ms", c.TBTms}, {"avg_active", c.AvgActive}, {"measured_s", c.MeasuredS}} {
		if !math.IsNaN(f.v) && !(f.v >= 0 && f.v <= maxMeasurement) {
			return fmt.Errorf("%s = %v: want a finite number >= 0 (or absent)", f.name, f.v)
		}
	}
	k := matchKey(c)
	if seen[k] {
		return fmt.Errorf("duplicate cell: want one cell per key")
	}
	seen[k] = true
	return nil
}

func knownStatus(s Status) bool {
	return s == Valid || s == RequestsQueued || s == OverCapacity || s == Error
}

// cleanLabel reports whether a context label is non-empty, trimmed, valid UTF-8 and free of
// control characters, so that every format writes and reads it unchanged.
func cleanLabel(s string) bool {
	if s == "" || s != strings.TrimSpace(s) || !utf8.ValidString(s) {
		return false
	}
	return strings.IndexFunc(s, unicode.IsControl) < 0
}
