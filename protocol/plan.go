package protocol

import (
	"fmt"

	"github.com/servesim/servesim/matrix"
)

// Job is one cell of the plan: a prefill row (one cold scout request on an idle server) or a
// decode cell (the scout, then Concurrency closed-loop streams).
type Job struct {
	Index       int // position in the matrix: prefill rows first, then decode cells
	Phase       matrix.Phase
	Label       string
	Tokens      int
	Concurrency int
	// PromptID names the prompt's content: one per context row, identical in all its cells.
	PromptID uint64
	// Over marks a decode cell the benchmark refuses to run (OverCapacity).
	Over bool
}

// Key is the job's cell in the matrix.
func (j *Job) Key() matrix.Key {
	return matrix.Key{Phase: j.Phase, Context: j.Label, Concurrency: j.Concurrency}
}

// PromptID is the prompt of the row-th context row (Contexts, then PrefillOnly): every context
// has its own prompt text, and a context's cells share it.
func PromptID(row int) uint64 { return 0x1000 + uint64(row) }

// row is one context of the protocol, fitted to a max_model_len.
type row struct {
	index       int // in Contexts or PrefillOnly
	prefillOnly bool
	context     string // as written in the protocol
	label       string // the fitted context's label (a prefill-only row keeps its own)
	tokens      int
	err         error // the context does not parse or fit
}

func (r *row) errorf() error {
	field := "protocol.contexts"
	if r.prefillOnly {
		field = "protocol.prefill_only"
	}
	return fmt.Errorf("%s[%d] = %s: %w", field, r.index, r.context, r.err)
}

// rows fits every context: decode rows with MaxOutput, prefill-only rows with PrefillOnlyOutput.
func (p *Protocol) rows(maxModelLen int) (decode, prefillOnly []row) {
	for i, c := range p.Contexts {
		t, err := p.fitLabel(c, maxModelLen, p.MaxOutput)
		r := row{index: i, context: c, tokens: t, err: err}
		if err == nil {
			r.label = matrix.Label(t)
		}
		decode = append(decode, r)
	}
	for i, c := range p.PrefillOnly {
		t, err := p.fitLabel(c, maxModelLen, PrefillOnlyOutput)
		prefillOnly = append(prefillOnly, row{index: i, prefillOnly: true, context: c, label: c, tokens: t, err: err})
	}
	return decode, prefillOnly
}

// Plan lists the protocol's jobs for a server with maxModelLen and kvCacheSizeTokens, in matrix
// order: a prefill row per decode context, then the prefill-only rows, then the decode cells
// context by context, concurrency by concurrency. A context that does not fit is an error.
func (p *Protocol) Plan(maxModelLen, kvCacheSizeTokens int) ([]Job, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	dec, pre := p.rows(maxModelLen)
	var prefill, decode []Job
	for _, r := range dec {
		if r.err != nil {
			return nil, r.errorf()
		}
		pid := PromptID(r.index)
		prefill = append(prefill, Job{Phase: matrix.Prefill, Label: r.label, Tokens: r.tokens, Concurrency: 1, PromptID: pid})
		for _, c := range p.Concurrency {
			decode = append(decode, Job{Phase: matrix.Decode, Label: r.label, Tokens: r.tokens, Concurrency: c, PromptID: pid,
				Over: p.OverCapacity(c, r.tokens, kvCacheSizeTokens)})
		}
	}
	for _, r := range pre {
		if r.err != nil {
			return nil, r.errorf()
		}
		prefill = append(prefill, Job{Phase: matrix.Prefill, Label: r.label, Tokens: r.tokens, Concurrency: 1,
			PromptID: PromptID(len(p.Contexts) + r.index)})
	}
	if len(prefill) == 0 {
		return nil, fmt.Errorf("no protocol context fits max_model_len %d with %d output tokens", maxModelLen, p.MaxOutput)
	}
	jobs := append(prefill, decode...)
	for i := range jobs {
		jobs[i].Index = i
	}
	return jobs, nil
}

// Keys lists the cells the protocol produces for a max_model_len, in matrix order (prefill rows
// then decode cells), whatever the KV capacity. Contexts that do not fit are left out.
func (p *Protocol) Keys(maxModelLen int) []matrix.Key {
	dec, pre := p.rows(maxModelLen)
	var prefill, decode []matrix.Key
	for _, r := range dec {
		if r.err != nil {
			continue
		}
		prefill = append(prefill, matrix.Key{Phase: matrix.Prefill, Context: r.label, Concurrency: 1})
		for _, c := range p.Concurrency {
			decode = append(decode, matrix.Key{Phase: matrix.Decode, Context: r.label, Concurrency: c})
		}
	}
	for _, r := range pre {
		if r.err == nil {
			prefill = append(prefill, matrix.Key{Phase: matrix.Prefill, Context: r.label, Concurrency: 1})
		}
	}
	return append(prefill, decode...)
}

// CheckMeasured reports an error naming the first measured cell the protocol does not produce.
func (p *Protocol) CheckMeasured(m *matrix.Matrix, maxModelLen int) error {
	keys := p.Keys(maxModelLen)
	known := make(map[matrix.Key]bool, len(keys))
	for _, k := range keys {
		known[k] = true
	}
	found := 0
	for _, c := range m.Cells() {
		k := c.Key()
		if k.Phase == matrix.Prefill {
			k.Concurrency = 1
		}
		if !known[k] {
			return fmt.Errorf("measured cell %s is not one the scenario's protocol runs (contexts %v fitted to max_model_len %d, concurrency %v): the measurement and the scenario disagree",
				k, p.Contexts, maxModelLen, p.Concurrency)
		}
		found++
	}
	if found == 0 {
		return fmt.Errorf("the measured matrix has no cells")
	}
	return nil
}
