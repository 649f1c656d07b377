package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/servesim/servesim/matrix"
)

// Error thresholds for the colour of an error cell (absolute percent).
const (
	goodPct = 10
	fairPct = 25
)

// errClass colours an absolute percentage error: good (< 10 %), fair (< 25 %), poor.
func errClass(ape float64) string {
	switch {
	case math.IsNaN(ape):
		return ""
	case ape < goodPct:
		return "err-good"
	case ape < fairPct:
		return "err-fair"
	}
	return "err-poor"
}

func statusClass(s matrix.Status) string {
	switch s {
	case matrix.Valid:
		return "st-valid"
	case matrix.RequestsQueued:
		return "st-queued"
	case matrix.OverCapacity:
		return "st-oc"
	case matrix.Error:
		return "st-error"
	}
	return "st-none"
}

func statusAbbrev(s matrix.Status) string {
	if m := s.Mark(); m != "" {
		return m
	}
	return "—"
}

func pctText(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	if math.IsInf(v, 0) {
		return "∞"
	}
	s := strconv.FormatFloat(v, 'f', 1, 64) + " %"
	if v >= 0 {
		s = "+" + s
	}
	return s
}

func apeText(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " %"
}

func shortKey(k matrix.Key) string {
	if k.Phase == matrix.Prefill {
		return k.Context
	}
	return k.Context + "×" + strconv.Itoa(k.Concurrency)
}

func summaryTable(cmp *matrix.Comparison) *table {
	t := &table{ID: "table-summary", Caption: "Errors of the prediction against the measurement (cells that ran in both)",
		Head: []string{"metric", "cells", "MAPE", "median APE", "worst cells (signed error)"}}
	for _, ms := range cmp.Summary.Columns {
		var worst []string
		for _, e := range ms.Worst {
			worst = append(worst, shortKey(e.Key)+" "+pctText(e.SignedPct()))
		}
		w := strings.Join(worst, ", ")
		if w == "" {
			w = "—"
		}
		t.Rows = append(t.Rows, []cellView{
			{Text: ms.Column.String(), Class: "name"}, {Text: strconv.Itoa(ms.N), Class: "num"},
			{Text: apeText(ms.MAPEPct), Class: "num " + errClass(ms.MAPEPct)},
			{Text: apeText(ms.MdAPEPct), Class: "num " + errClass(ms.MdAPEPct)},
			{Text: w},
		})
	}
	return t
}

func statusLine(cmp *matrix.Comparison) string {
	s := cmp.Summary
	line := fmt.Sprintf("Statuses: %d of %d decode cells match.", s.StatusMatched, s.DecodeCells)
	var differ []string
	for i := range cmp.Pairs {
		p := &cmp.Pairs[i]
		if p.Key.Phase == matrix.Decode && !p.StatusMatch {
			differ = append(differ, fmt.Sprintf("%s (predicted %s, measured %s)", shortKey(p.Key), p.Pred.Status, p.Meas.Status))
		}
	}
	if len(differ) > 0 {
		line += " Differ: " + strings.Join(differ, "; ") + "."
	}
	if n := len(cmp.OnlyPred); n > 0 {
		line += fmt.Sprintf(" %d cells only predicted.", n)
	}
	if n := len(cmp.OnlyMeas); n > 0 {
		line += fmt.Sprintf(" %d cells only measured.", n)
	}
	return line
}

// valueCell shows one side's value, or its status when the cell did not run.
func valueCell(c *matrix.Cell, v float64, decimals int) cellView {
	if c == nil {
		return cellView{Text: "", Class: "st-none"}
	}
	tip := fmt.Sprintf("%s: %s", shortKey(c.Key()), c.Status)
	if !c.Status.Ran() {
		return cellView{Text: statusAbbrev(c.Status), Class: "num " + statusClass(c.Status), Title: tip}
	}
	text := fnum(v, decimals)
	if c.Status == matrix.RequestsQueued {
		text += " Q"
	}
	return cellView{Text: text, Class: "num " + statusClass(c.Status), Title: tip}
}

// errCell is the signed error of pred against meas, coloured by its size; a status mismatch is
// marked instead of coloured.
func errCell(pred, meas *matrix.Cell, m matrix.Column) cellView {
	switch {
	case pred == nil || meas == nil:
		return cellView{Class: "st-none"}
	case pred.Status != meas.Status && !(pred.Status.Ran() && meas.Status.Ran()):
		return cellView{Text: statusAbbrev(pred.Status) + "/" + statusAbbrev(meas.Status), Class: "num mismatch",
			Title: fmt.Sprintf("%s: predicted %s, measured %s", shortKey(meas.Key()), pred.Status, meas.Status)}
	case !pred.Status.Ran():
		return cellView{Text: statusAbbrev(pred.Status), Class: "num " + statusClass(pred.Status)}
	}
	pv, mv := m.Value(pred), m.Value(meas)
	e := matrix.SignedPct(pv, mv)
	cv := cellView{Text: pctText(e), Class: "num " + errClass(math.Abs(e)),
		Title: fmt.Sprintf("%s: predicted %s, measured %s", shortKey(meas.Key()), fnum(pv, 1), fnum(mv, 1))}
	if pred.Status != meas.Status {
		cv.Class += " mismatch"
		cv.Text += " " + statusAbbrev(pred.Status) + "/" + statusAbbrev(meas.Status)
	}
	return cv
}

func prefillTable(pred, meas *matrix.Matrix) *table {
	t := &table{ID: "table-prefill", Caption: "Prefill rows: one cold request per context"}
	t.Head = []string{"context", "prompt tokens", "tok/s predicted"}
	if meas != nil {
		t.Head = append(t.Head, "tok/s measured", "error")
	}
	t.Head = append(t.Head, "TTFT ms predicted")
	if meas != nil {
		t.Head = append(t.Head, "TTFT ms measured", "error")
	}
	rows := append([]matrix.Cell(nil), pred.Prefill...)
	seen := map[string]bool{}
	for _, c := range rows {
		seen[c.Context] = true
	}
	if meas != nil {
		for _, c := range meas.Prefill {
			if !seen[c.Context] {
				rows = append(rows, c)
			}
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].ContextTokens < rows[j].ContextTokens })
	for i := range rows {
		k := matrix.Key{Phase: matrix.Prefill, Context: rows[i].Context, Concurrency: 1}
		p, _ := pred.Find(k)
		var m *matrix.Cell
		if meas != nil {
			m, _ = meas.Find(k)
		}
		row := []cellView{{Text: rows[i].Context, Class: "name"}, {Text: fnum(float64(rows[i].ContextTokens), 0), Class: "num"}}
		for _, mt := range []struct {
			metric   matrix.Column
			decimals int
		}{{matrix.PrefillTokS, 0}, {matrix.PrefillTTFTms, 0}} {
			row = append(row, sideCell(p, mt.metric, mt.decimals))
			if meas != nil {
				row = append(row, sideCell(m, mt.metric, mt.decimals), errCell(p, m, mt.metric))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func sideCell(c *matrix.Cell, m matrix.Column, decimals int) cellView {
	if c == nil {
		return cellView{Class: "st-none"}
	}
	return valueCell(c, m.Value(c), decimals)
}

// gridMetrics are the decode metrics shown as context × concurrency grids.
func gridMetrics() []gridMetric {
	return []gridMetric{
		{matrix.DecodeTotalTokS, "decode-total-toks", "Decode total tok/s (all streams)", 0},
		{matrix.DecodePerRequestTokS, "decode-per-request-toks", "Decode tok/s per request", 1},
		{matrix.DecodeTTFTms, "decode-ttft", "Decode TTFT, ms (median)", 0},
		{matrix.DecodeTBTms, "decode-tbt", "Decode time between tokens, ms (median)", 1},
	}
}

type gridMetric struct {
	metric   matrix.Column
	id       string
	title    string
	decimals int
}

func decodeGrids(pred, meas *matrix.Matrix) []gridSet {
	if len(pred.Decode) == 0 && (meas == nil || len(meas.Decode) == 0) {
		return nil
	}
	cc := contextsOf(pred, meas)
	concs := concurrenciesOf(pred, meas)
	var out []gridSet
	for _, gm := range gridMetrics() {
		gs := gridSet{ID: "grid-" + gm.id, Title: gm.title}
		sides := []struct {
			name string
			m    *matrix.Matrix
		}{{"predicted", pred}}
		if meas != nil {
			sides = append(sides, struct {
				name string
				m    *matrix.Matrix
			}{"measured", meas})
		}
		for _, side := range sides {
			t := gridTable("table-"+gm.id+"-"+side.name, side.name, concs)
			for _, ctx := range cc {
				row := []cellView{{Text: ctx, Class: "name"}}
				for _, c := range concs {
					cell, ok := side.m.Find(matrix.Key{Phase: matrix.Decode, Context: ctx, Concurrency: c})
					if !ok {
						row = append(row, cellView{Class: "st-none"})
						continue
					}
					row = append(row, valueCell(cell, gm.metric.Value(cell), gm.decimals))
				}
				t.Rows = append(t.Rows, row)
			}
			gs.Tables = append(gs.Tables, t)
		}
		if meas != nil {
			t := gridTable("table-"+gm.id+"-error", "error (predicted − measured) / measured", concs)
			for _, ctx := range cc {
				row := []cellView{{Text: ctx, Class: "name"}}
				for _, c := range concs {
					k := matrix.Key{Phase: matrix.Decode, Context: ctx, Concurrency: c}
					p, pok := pred.Find(k)
					m, mok := meas.Find(k)
					if !pok {
						p = nil
					}
					if !mok {
						m = nil
					}
					row = append(row, errCell(p, m, gm.metric))
				}
				t.Rows = append(t.Rows, row)
			}
			gs.Tables = append(gs.Tables, t)
		}
		out = append(out, gs)
	}
	return out
}

func gridTable(id, caption string, concs []int) *table {
	t := &table{ID: id, Caption: caption, Head: []string{"context \\ C"}}
	for _, c := range concs {
		t.Head = append(t.Head, strconv.Itoa(c))
	}
	return t
}

// contextsOf lists the decode contexts of both matrices by prompt tokens.
func contextsOf(ms ...*matrix.Matrix) []string {
	tokens := map[string]int{}
	for _, m := range ms {
		if m == nil {
			continue
		}
		for _, c := range m.Decode {
			tokens[c.Context] = c.ContextTokens
		}
	}
	var out []string
	for l := range tokens {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if tokens[out[i]] != tokens[out[j]] {
			return tokens[out[i]] < tokens[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

func concurrenciesOf(ms ...*matrix.Matrix) []int {
	seen := map[int]bool{}
	var out []int
	for _, m := range ms {
		if m == nil {
			continue
		}
		for _, c := range m.Concurrencies() {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	sort.Ints(out)
	return out
}
