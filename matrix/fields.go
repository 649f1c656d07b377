package matrix

import (
	"fmt"
	"strings"
)

// fieldKind says how a measurement column is written and read.
type fieldKind int

const (
	kindFloat   fieldKind = iota // plain number (tok/s, requests)
	kindMillis                   // duration in milliseconds
	kindSeconds                  // duration in seconds
	kindCount                    // whole number, -1 when absent
)

// metricColumn is one measurement column of the CSV (and the page's "All measurements" table).
type metricColumn struct {
	name     string // CSV column name
	page     string // the page's column header, lower case
	kind     fieldKind
	decimals int // digits after the point in CSV
	float    func(c *Cell) *float64
	count    func(c *Cell) *int
}

// metricColumns lists the measurement columns in CSV order.
func metricColumns() []metricColumn {
	return []metricColumn{
		{"total_tok_s", "total tok/s", kindFloat, 1, func(c *Cell) *float64 { return &c.TotalTokS }, nil},
		{"per_request_tok_s", "per request tok/s", kindFloat, 1, func(c *Cell) *float64 { return &c.PerRequestTokS }, nil},
		{"ttft_ms", "ttft", kindMillis, 1, func(c *Cell) *float64 { return &c.TTFTms }, nil},
		{"tbt_ms", "time between tokens", kindMillis, 1, func(c *Cell) *float64 { return &c.TBTms }, nil},
		{"avg_active", "average active requests", kindFloat, 2, func(c *Cell) *float64 { return &c.AvgActive }, nil},
		{"completed", "completed requests", kindCount, 0, nil, func(c *Cell) *int { return &c.Completed }},
		{"output_tokens", "output tokens", kindCount, 0, nil, func(c *Cell) *int { return &c.OutputTokens }},
		{"measured_s", "measured for", kindSeconds, 2, func(c *Cell) *float64 { return &c.MeasuredS }, nil},
	}
}

// Key columns, shared by the CSV header and the page table's canonical names.
const (
	colPhase         = "phase"
	colContext       = "context"
	colContextTokens = "context_tokens"
	colConcurrency   = "concurrency"
	colStatus        = "status"
)

// pageValue parses a measurement as the published page prints it.
func (mc *metricColumn) pageValue(c *Cell, s string) error {
	if mc.kind == kindCount {
		n, err := parseCount(s)
		*mc.count(c) = n
		return err
	}
	var v float64
	var err error
	switch mc.kind {
	case kindMillis:
		v, err = ParseMillis(s)
	case kindSeconds:
		v, err = ParseSeconds(s)
	default:
		v, err = ParseNumber(s)
	}
	*mc.float(c) = v
	return err
}

// parsePhase accepts "prefill", "decode" and the page's "Prefill" / "Sustained decode".
func parsePhase(s string) (Phase, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "prefill":
		return Prefill, nil
	case "decode", "sustained decode":
		return Decode, nil
	}
	return "", fmt.Errorf("phase %s: want Prefill or Sustained decode (prefill or decode)", quote(s))
}
