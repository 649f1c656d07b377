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

// StageKind is what one stage of the tool's run does.
type StageKind int

const (
	// StageWarmup is a hidden warm-up request (one prompt, MaxTokens output); its result is
	// discarded.
	StageWarmup StageKind = iota
	// StageWarmupDecode is the hidden C = 1 decode warm-up: its prompt is prefilled first (one
	// request with a one-token output), then one stream decodes for WarmupDecodeS and is
	// cancelled. Its result is discarded.
	StageWarmupDecode
	// StagePrefill is a prefill row measured by a scout alone: a prefill-only row, or a context
	// whose first-column decode cell is over capacity.
	StagePrefill
	// StageCell is a decode cell: the clock starts, the scout, then Concurrency streams.
	StageCell
)

func (k StageKind) String() string {
	switch k {
	case StageWarmup:
		return "warm-up"
	case StageWarmupDecode:
		return "warm-up decode"
	case StagePrefill:
		return "prefill"
	case StageCell:
		return "cell"
	}
	return "unknown"
}

// Stage is one step of the tool's run, in the order it runs them. Every stage starts on a
// drained server, and the server is drained again after it; a decode cell is followed by PauseS
// of idle time.
type Stage struct {
	Kind StageKind
	// Job is the index in the plan's jobs of the decode cell or prefill row the stage measures;
	// -1 for a warm-up.
	Job int
	// Scout is the index of the prefill row a decode cell's scout measures (the first cell of its
	// context); -1 when its scout is not reported (the prompt is usually cached by then).
	Scout int
	// PromptTokens, MaxTokens and PromptID are the warm-ups' request (the other stages take them
	// from their job).
	PromptTokens, MaxTokens int
	PromptID                uint64
}

// Warm-up requests before the matrix (llm_decode_bench.py run_benchmark), each with its own
// prompt: a short "count to 20" request and an 8K prefill.
const (
	WarmupCountPromptTokens = 32
	WarmupCountOutput       = 64
	WarmupPrefillTokens     = 8192
)

// WarmupPromptID is the prompt of the i-th warm-up: distinct from every context's prompt.
func WarmupPromptID(i int) uint64 { return 0x2000 + uint64(i) }

// Schedule lists the protocol's jobs (Plan, matrix order) and the stages the tool runs them in on
// one server whose prefix cache is never reset:
//
//  1. the hidden warm-ups, when Warmup is set: a 32-token prompt with a 64-token output ("count
//     to 20"), then an 8K prefill;
//  2. the prefill-only rows, each one scout;
//  3. the hidden C = 1 decode warm-up at the largest decode context whose C = 1 cell is not over
//     capacity (when Warmup is set), with its own prompt;
//  4. the first concurrency column, context by context: each cell's scout is the context's first
//     use of its prompt, a cold prefill, and gives the context's prefill row;
//  5. the first context's other cells, in concurrency order; then every other context's row.
//
// Over-capacity cells are not run. A context whose first-column cell is over capacity still gets
// its prefill row, from a scout alone where that cell would have run.
func (p *Protocol) Schedule(maxModelLen, kvCacheSizeTokens int) ([]Job, []Stage, error) {
	jobs, err := p.Plan(maxModelLen, kvCacheSizeTokens)
	if err != nil {
		return nil, nil, err
	}
	dec, pre := p.rows(maxModelLen)
	nc := len(p.Concurrency)
	cell := func(row, ci int) int { return len(dec) + len(pre) + row*nc + ci }
	var st []Stage
	warm := 0
	addWarm := func(kind StageKind, prompt, out int) {
		st = append(st, Stage{Kind: kind, Job: -1, Scout: -1, PromptTokens: prompt, MaxTokens: out, PromptID: WarmupPromptID(warm)})
		warm++
	}
	if p.Warmup {
		if p.Room(maxModelLen, WarmupCountOutput) >= WarmupCountPromptTokens {
			addWarm(StageWarmup, WarmupCountPromptTokens, WarmupCountOutput)
		}
		if t, ok := p.Fit(WarmupPrefillTokens, maxModelLen, PrefillOnlyOutput); ok {
			addWarm(StageWarmup, t, PrefillOnlyOutput)
		}
	}
	for i := range pre {
		st = append(st, Stage{Kind: StagePrefill, Job: len(dec) + i, Scout: -1})
	}
	if p.Warmup {
		largest := -1
		for i := range dec {
			if !p.OverCapacity(1, dec[i].tokens, kvCacheSizeTokens) && (largest < 0 || dec[i].tokens > dec[largest].tokens) {
				largest = i
			}
		}
		if largest >= 0 {
			addWarm(StageWarmupDecode, dec[largest].tokens, p.MaxOutput)
		}
	}
	if nc == 0 {
		for r := range dec {
			st = append(st, Stage{Kind: StagePrefill, Job: r, Scout: -1})
		}
		return jobs, st, nil
	}
	for r := range dec {
		if j := cell(r, 0); jobs[j].Over {
			st = append(st, Stage{Kind: StagePrefill, Job: r, Scout: -1})
		} else {
			st = append(st, Stage{Kind: StageCell, Job: j, Scout: r})
		}
	}
	for r := range dec {
		for ci := 1; ci < nc; ci++ {
			if j := cell(r, ci); !jobs[j].Over {
				st = append(st, Stage{Kind: StageCell, Job: j, Scout: -1})
			}
		}
	}
	return jobs, st, nil
}
