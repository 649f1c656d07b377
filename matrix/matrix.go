package matrix

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Phase is the benchmark phase of a cell.
type Phase string

const (
	Prefill Phase = "prefill"
	Decode  Phase = "decode"
)

// Status is a cell's outcome as the benchmark labels it.
type Status string

const (
	Valid          Status = "Valid"
	RequestsQueued Status = "Requests queued"
	OverCapacity   Status = "Over capacity"
	Error          Status = "Error"
)

// Mark is the status's short mark in tables and figures: V (Valid), Q (Requests queued), OC
// (Over capacity), ERR (Error); "" for anything else.
func (s Status) Mark() string {
	switch s {
	case Valid:
		return "V"
	case RequestsQueued:
		return "Q"
	case OverCapacity:
		return "OC"
	case Error:
		return "ERR"
	}
	return ""
}

// ParseStatus accepts a status label, case-insensitively.
func ParseStatus(s string) (Status, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "valid":
		return Valid, nil
	case "requests queued", "queued", "requests_queued":
		return RequestsQueued, nil
	case "over capacity", "over_capacity", "overcapacity":
		return OverCapacity, nil
	case "error", "invalid":
		return Error, nil
	}
	return "", fmt.Errorf("unknown status %q (want Valid, Requests queued, Over capacity or Error)", s)
}

// Ran reports whether the cell produced measurements.
func (s Status) Ran() bool { return s == Valid || s == RequestsQueued }

// Cell is one row of the benchmark's "All measurements" table. Float fields are NaN and int fields
// are -1 where the benchmark prints "—" (not applicable or not run).
type Cell struct {
	Phase          Phase   `json:"phase"`
	Context        string  `json:"context"`        // label as the benchmark prints it: "8K" ... "1019K", "1024K"
	ContextTokens  int     `json:"context_tokens"` // prompt tokens sent
	Concurrency    int     `json:"concurrency"`
	Status         Status  `json:"status"`
	TotalTokS      float64 `json:"total_tok_s"`       // decode: output tok/s over all streams; prefill: prompt tok/s
	PerRequestTokS float64 `json:"per_request_tok_s"` // 1 / median time between tokens
	TTFTms         float64 `json:"ttft_ms"`           // median time to first token
	TBTms          float64 `json:"tbt_ms"`            // median time between tokens
	AvgActive      float64 `json:"avg_active"`        // mean of num_requests_running samples
	Completed      int     `json:"completed"`         // requests completed inside the window
	OutputTokens   int     `json:"output_tokens"`     // completion tokens inside the window
	MeasuredS      float64 `json:"measured_s"`        // window length
}

// NewCell returns a cell with every measurement absent.
func NewCell(phase Phase, context string, tokens, concurrency int) Cell {
	nan := math.NaN()
	return Cell{Phase: phase, Context: context, ContextTokens: tokens, Concurrency: concurrency,
		TotalTokS: nan, PerRequestTokS: nan, TTFTms: nan, TBTms: nan, AvgActive: nan,
		Completed: -1, OutputTokens: -1, MeasuredS: nan}
}

// Key identifies a cell within a matrix.
type Key struct {
	Phase       Phase
	Context     string
	Concurrency int
}

// Key returns the cell's key.
func (c *Cell) Key() Key { return Key{c.Phase, c.Context, c.Concurrency} }

func (k Key) String() string {
	if k.Phase == Prefill {
		return "prefill " + k.Context
	}
	return fmt.Sprintf("decode %s x %d", k.Context, k.Concurrency)
}

// Info is the run's description as the published page gives it.
type Info struct {
	Model         string  `json:"model,omitempty"`
	GPU           string  `json:"gpu,omitempty"`
	GPUCount      int     `json:"gpu_count,omitempty"`
	Engine        string  `json:"engine,omitempty"`
	EngineVersion string  `json:"engine_version,omitempty"`
	Quantization  string  `json:"quantization,omitempty"`
	BenchTool     string  `json:"bench_tool,omitempty"`
	DurationS     float64 `json:"duration_s,omitempty"`
	MaxOutput     int     `json:"max_output,omitempty"`
	LaunchCommand string  `json:"launch_command,omitempty"`
	// KVCacheSizeTokens is the server's reported KV capacity when known (0 = unknown).
	KVCacheSizeTokens int `json:"kv_cache_size_tokens,omitempty"`
	// Intervals, on a predicted matrix, are its 80 % prediction intervals (nil: none).
	Intervals *Intervals `json:"intervals_80,omitempty"`
}

// Matrix is a full benchmark result: prefill rows then decode cells, in the benchmark's order
// (decode: by context row, then by concurrency).
type Matrix struct {
	Info    Info   `json:"info"`
	Prefill []Cell `json:"prefill"`
	Decode  []Cell `json:"decode"`
}

// Cells returns prefill rows then decode cells.
func (m *Matrix) Cells() []Cell {
	out := make([]Cell, 0, len(m.Prefill)+len(m.Decode))
	out = append(out, m.Prefill...)
	return append(out, m.Decode...)
}

// Find returns the cell with key k.
func (m *Matrix) Find(k Key) (*Cell, bool) {
	cells := m.Decode
	if k.Phase == Prefill {
		cells = m.Prefill
	}
	for i := range cells {
		if cells[i].Context == k.Context && (k.Phase == Prefill || cells[i].Concurrency == k.Concurrency) {
			return &cells[i], true
		}
	}
	return nil, false
}

// DecodeContexts lists the decode row labels in order of first appearance.
func (m *Matrix) DecodeContexts() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range m.Decode {
		if !seen[c.Context] {
			seen[c.Context] = true
			out = append(out, c.Context)
		}
	}
	return out
}

// Concurrencies lists the decode concurrency levels in order of first appearance.
func (m *Matrix) Concurrencies() []int {
	var out []int
	seen := map[int]bool{}
	for _, c := range m.Decode {
		if !seen[c.Concurrency] {
			seen[c.Concurrency] = true
			out = append(out, c.Concurrency)
		}
	}
	return out
}

// Label is the benchmark's context label for a token count: KiB of tokens, rounded down
// (8,192 -> "8K"; 1,044,416 -> "1019K").
func Label(tokens int) string { return strconv.Itoa(tokens/1024) + "K" }

// ParseContext parses a context written as tokens ("8192") or KiB of tokens ("8K", "8k", "1019K").
func ParseContext(s string) (int, error) {
	t := strings.TrimSpace(s)
	mult := 1
	if strings.HasSuffix(t, "K") || strings.HasSuffix(t, "k") {
		mult = 1024
		t = t[:len(t)-1]
	} else if strings.HasSuffix(t, "M") || strings.HasSuffix(t, "m") {
		mult = 1024 * 1024
		t = t[:len(t)-1]
	}
	t = strings.ReplaceAll(t, ",", "")
	n, err := strconv.Atoi(t)
	if err != nil || n <= 0 || n > math.MaxInt32/mult {
		return 0, fmt.Errorf("context %q: want a positive token count such as 8192, 8K or 1019K", s)
	}
	return n * mult, nil
}
