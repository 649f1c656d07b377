package matrix

import (
	"encoding/csv"
	"io"
	"math"

	"github.com/servesim/servesim/model/param"
)

// Band is a matrix's 80 % prediction intervals: the parameters' provenance (one for the whole
// matrix: one deployment) and the interval of each metric (param.Summary.Interval80).
type Band struct {
	Provenance *param.Summary
}

// intervalColumns are the metrics with intervals and the kind of prediction each is: total tok/s
// a throughput (decode output or prefill prompt tok/s), per-request tok/s and time between
// tokens the time per output token, TTFT the time to first token.
func intervalColumns() []struct {
	name   string
	metric param.Metric
	get    func(*Cell) float64
} {
	return []struct {
		name   string
		metric param.Metric
		get    func(*Cell) float64
	}{
		{"total_tok_s", param.MetricThroughput, func(c *Cell) float64 { return c.TotalTokS }},
		{"per_request_tok_s", param.MetricTPOT, func(c *Cell) float64 { return c.PerRequestTokS }},
		{"ttft_ms", param.MetricTTFT, func(c *Cell) float64 { return c.TTFTms }},
		{"tbt_ms", param.MetricTPOT, func(c *Cell) float64 { return c.TBTms }},
	}
}

// IntervalHeader lists the interval columns: for total_tok_s, per_request_tok_s, ttft_ms and
// tbt_ms, NAME_lo80 and NAME_hi80.
func IntervalHeader() []string {
	var h []string
	for _, c := range intervalColumns() {
		h = append(h, c.name+"_lo80", c.name+"_hi80")
	}
	return h
}

// IntervalRecord is a cell's interval columns (blank where the value is absent).
func (b Band) IntervalRecord(c *Cell) []string {
	var rec []string
	for _, col := range intervalColumns() {
		v := col.get(c)
		if math.IsNaN(v) || math.IsInf(v, 0) || b.Provenance == nil {
			rec = append(rec, "", "")
			continue
		}
		iv := b.Provenance.Interval80(col.metric, v)
		rec = append(rec, floatText(iv.Lo, 1), floatText(iv.Hi, 1))
	}
	return rec
}

// Factors is each interval metric's half-width as a factor (the interval is value / f .. value x
// f): what a JSON reader needs to bound every cell.
func (b Band) Factors() map[param.Metric]float64 {
	out := map[param.Metric]float64{}
	for _, m := range []param.Metric{param.MetricThroughput, param.MetricTPOT, param.MetricTTFT} {
		out[m] = b.Provenance.Interval80(m, 1).Factor()
	}
	return out
}

// WriteCSVBand writes the matrix as WriteCSV does, each row followed by its interval columns
// (IntervalHeader). ParseCSV reads the file back (it ignores the interval columns).
func WriteCSVBand(w io.Writer, m *Matrix, b Band) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append(CSVHeader(), IntervalHeader()...)); err != nil {
		return err
	}
	for _, cells := range [][]Cell{m.Prefill, m.Decode} {
		for i := range cells {
			if err := cw.Write(append(csvRecord(&cells[i]), b.IntervalRecord(&cells[i])...)); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// Intervals is a predicted matrix's interval record in its JSON (Info.Intervals): the
// parameters' provenance and, per metric, the factor f of every cell's interval value / f ..
// value x f (throughput: total_tok_s; tpot: per_request_tok_s and tbt_ms; ttft: ttft_ms).
type Intervals struct {
	Provenance *param.Summary           `json:"provenance"`
	Factors    map[param.Metric]float64 `json:"factors"`
}

// Info is the band as recorded in a matrix's Info.
func (b Band) Info() *Intervals {
	if b.Provenance == nil {
		return nil
	}
	return &Intervals{Provenance: b.Provenance, Factors: b.Factors()}
}
