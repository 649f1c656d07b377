package matrix

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// cellPair is a key with its predicted and measured cells; either may be nil.
type cellPair struct {
	key        Key
	pred, meas *Cell
}

// joinPhase pairs the cells of one phase: measured order first, then cells only predicted.
func joinPhase(pred, meas []Cell) []cellPair {
	predIdx := cellIndex(pred)
	var out []cellPair
	inMeas := map[Key]bool{}
	for i := range meas {
		k := matchKey(&meas[i])
		inMeas[k] = true
		out = append(out, cellPair{key: meas[i].Key(), pred: predIdx[k], meas: &meas[i]})
	}
	for i := range pred {
		if !inMeas[matchKey(&pred[i])] {
			out = append(out, cellPair{key: pred[i].Key(), pred: &pred[i]})
		}
	}
	return out
}

func (p *cellPair) bothRan() bool {
	return p.pred != nil && p.meas != nil && p.pred.Status.Ran() && p.meas.Status.Ran()
}

// sideText is one side of a compared entry: the value when the cell ran, its status mark when
// it did not, "—" when the cell is missing.
func sideText(c *Cell, v func(*Cell) float64, decimals int) string {
	switch {
	case c == nil:
		return "—"
	case !c.Status.Ran():
		return statusAbbrev(c.Status)
	}
	return numberText(v(c), decimals)
}

// pairText is a compared matrix entry: "1,301 / 1,336 -2.6%", with " Q" when both queued and
// " !Q/V" (predicted/measured) when the statuses differ; "OC" when neither ran for the same reason.
func pairText(p *cellPair, v func(*Cell) float64, decimals int) string {
	if p.pred != nil && p.meas != nil && p.pred.Status == p.meas.Status && !p.pred.Status.Ran() {
		return statusAbbrev(p.pred.Status)
	}
	s := sideText(p.pred, v, decimals) + " / " + sideText(p.meas, v, decimals)
	if p.bothRan() {
		if e := SignedPct(v(p.pred), v(p.meas)); e == e {
			s += " " + pctText(e)
		}
	}
	return s + statusMark(p)
}

func statusMark(p *cellPair) string {
	switch {
	case p.pred == nil || p.meas == nil:
		return ""
	case p.pred.Status != p.meas.Status:
		return " !" + statusAbbrev(p.pred.Status) + "/" + statusAbbrev(p.meas.Status)
	case p.pred.Status == RequestsQueued:
		return " Q"
	}
	return ""
}

// errText is the signed error of a pair in percent, "—" unless both ran.
func errText(p *cellPair, v func(*Cell) float64) string {
	if !p.bothRan() {
		return "—"
	}
	return pctText(SignedPct(v(p.pred), v(p.meas)))
}

func valueText(c *Cell, v func(*Cell) float64, decimals int) string {
	if c == nil {
		return "—"
	}
	return numberText(v(c), decimals)
}

func statusText(c *Cell) string {
	if c == nil {
		return "—"
	}
	return string(c.Status)
}

// Field accessors shared by the compared tables.
func totalOf(c *Cell) float64      { return c.TotalTokS }
func perRequestOf(c *Cell) float64 { return c.PerRequestTokS }
func ttftOf(c *Cell) float64       { return c.TTFTms }
func tbtOf(c *Cell) float64        { return c.TBTms }

func (r *renderer) compared(pred, meas *Matrix) {
	cmp := Compare(pred, meas)
	prefill, decode := joinPhase(pred.Prefill, meas.Prefill), joinPhase(pred.Decode, meas.Decode)
	r.heading(1, "Predicted vs measured")
	r.para(sideInfo("Predicted", pred.Info), sideInfo("Measured", meas.Info),
		"Entries read predicted / measured, error = (predicted - measured) / measured.")
	if len(prefill) > 0 {
		r.heading(2, "Prefill")
		r.table(comparedPrefillTable(prefill))
	}
	ctxs := union(meas.DecodeContexts(), pred.DecodeContexts())
	concs := union(meas.Concurrencies(), pred.Concurrencies())
	if len(decode) > 0 && r.gridFits(len(ctxs), len(concs)) {
		r.heading(2, "Sustained decode: total tok/s")
		r.para(decodeLegend + " !P/M: predicted status P, measured M.")
		r.table(comparedGrid(ctxs, concs, decode, totalOf))
		r.heading(2, "Sustained decode: TTFT ms")
		r.table(comparedGrid(ctxs, concs, decode, ttftOf))
	}
	r.heading(2, "All measurements")
	r.table(comparedAllTable(slices.Concat(prefill, decode)))
	r.heading(2, "Summary")
	r.list(summaryLines(cmp))
}

func sideInfo(side string, in Info) string {
	if line := infoLine(in); line != "" {
		return side + ": " + line
	}
	return side + ": (no run description)"
}

func comparedPrefillTable(pairs []cellPair) *textTable {
	t := &textTable{header: []string{"Context", "Tokens", "tok/s pred", "tok/s meas", "tok/s err",
		"TTFT ms pred", "TTFT ms meas", "TTFT err"}, right: []bool{false, true, true, true, true, true, true, true}}
	for i := range pairs {
		p := &pairs[i]
		tokens := p.meas
		if tokens == nil {
			tokens = p.pred
		}
		t.add(p.key.Context, countNumber(tokens.ContextTokens),
			sideText(p.pred, totalOf, 1), sideText(p.meas, totalOf, 1), errText(p, totalOf),
			sideText(p.pred, ttftOf, 0), sideText(p.meas, ttftOf, 0), errText(p, ttftOf))
	}
	return t
}

// union returns a then the values of b not in a, in order.
func union[T comparable](a, b []T) []T {
	out := append([]T(nil), a...)
	seen := make(map[T]bool, len(a))
	for _, x := range a {
		seen[x] = true
	}
	for _, x := range b {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func comparedGrid(ctxs []string, concs []int, pairs []cellPair, v func(*Cell) float64) *textTable {
	idx := make(map[Key]*cellPair, len(pairs))
	for i := range pairs {
		idx[pairs[i].key] = &pairs[i]
	}
	t := gridHeader(concs)
	for _, ctx := range ctxs {
		row := []string{ctx}
		for _, conc := range concs {
			text := ""
			if p, ok := idx[Key{Decode, ctx, conc}]; ok {
				text = pairText(p, v, 0)
			}
			row = append(row, text)
		}
		t.add(row...)
	}
	return t
}

func comparedAllTable(pairs []cellPair) *textTable {
	t := &textTable{header: []string{"Phase", "Context", "Concurrency", "Status pred", "Status meas",
		"Total pred", "Total meas", "Total err", "Per-req pred", "Per-req meas", "Per-req err",
		"TTFT pred", "TTFT meas", "TTFT err", "TBT pred", "TBT meas", "TBT err"}}
	t.right = []bool{false, false, true, false, false}
	for range 12 {
		t.right = append(t.right, true)
	}
	for i := range pairs {
		p := &pairs[i]
		row := []string{string(p.key.Phase), p.key.Context, strconv.Itoa(p.key.Concurrency),
			statusText(p.pred), statusText(p.meas)}
		for _, f := range []struct {
			v        func(*Cell) float64
			decimals int
		}{{totalOf, 1}, {perRequestOf, 1}, {ttftOf, 0}, {tbtOf, 1}} {
			row = append(row, valueText(p.pred, f.v, f.decimals), valueText(p.meas, f.v, f.decimals), errText(p, f.v))
		}
		t.add(row...)
	}
	return t
}

// shortKey names a cell in a summary: "8K x 64" (decode) or "8K" (prefill).
func shortKey(k Key) string {
	if k.Phase == Prefill {
		return k.Context
	}
	return fmt.Sprintf("%s x %d", k.Context, k.Concurrency)
}

func summaryLines(cmp *Comparison) []string {
	s := cmp.Summary
	lines := []string{fmt.Sprintf("Statuses: %d/%d decode cells match", s.StatusMatched, s.DecodeCells)}
	var differ []string
	for i := range cmp.Pairs {
		p := &cmp.Pairs[i]
		if p.Key.Phase == Decode && !p.StatusMatch {
			differ = append(differ, fmt.Sprintf("%s (%s/%s)", shortKey(p.Key),
				statusAbbrev(p.Pred.Status), statusAbbrev(p.Meas.Status)))
		}
	}
	if len(differ) > 0 {
		lines = append(lines, "Statuses differ (pred/meas): "+strings.Join(differ, ", "))
	}
	for _, ms := range s.Columns {
		lines = append(lines, metricLine(&ms))
	}
	if len(cmp.OnlyPred) > 0 {
		lines = append(lines, "Only in predicted: "+keyList(cmp.OnlyPred))
	}
	if len(cmp.OnlyMeas) > 0 {
		lines = append(lines, "Only in measured: "+keyList(cmp.OnlyMeas))
	}
	return lines
}

// metricLine is "decode total tok/s: n 43, MAPE 4.1%, MdAPE 3.0%, worst 8K x 64 +12.0%, ...".
func metricLine(ms *ColumnSummary) string {
	worst := make([]string, 0, len(ms.Worst))
	for _, e := range ms.Worst {
		worst = append(worst, shortKey(e.Key)+" "+pctText(e.SignedPct()))
	}
	w := "—"
	if len(worst) > 0 {
		w = strings.Join(worst, ", ")
	}
	return fmt.Sprintf("%s: n %d, MAPE %s, MdAPE %s, worst %s", ms.Column, ms.N,
		apeText(ms.MAPEPct), apeText(ms.MdAPEPct), w)
}

func keyList(keys []Key) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.String()
	}
	return strings.Join(parts, ", ")
}

// comparisonCSVHeader is the header of the compared CSV: keys, statuses, then for each of total,
// per-request, TTFT and TBT the predicted and measured value and the signed error in percent.
func comparisonCSVHeader() []string {
	return []string{"phase", "context", "context_tokens", "concurrency", "pred_status", "meas_status",
		"pred_total_tok_s", "meas_total_tok_s", "err_total_pct",
		"pred_per_request_tok_s", "meas_per_request_tok_s", "err_per_request_pct",
		"pred_ttft_ms", "meas_ttft_ms", "err_ttft_pct", "pred_tbt_ms", "meas_tbt_ms", "err_tbt_pct"}
}

func writeComparisonCSV(w io.Writer, pred, meas *Matrix) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(comparisonCSVHeader()); err != nil {
		return err
	}
	pairs := slices.Concat(joinPhase(pred.Prefill, meas.Prefill), joinPhase(pred.Decode, meas.Decode))
	for i := range pairs {
		if err := cw.Write(comparisonRecord(&pairs[i])); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func comparisonRecord(p *cellPair) []string {
	tokens := p.meas
	if tokens == nil {
		tokens = p.pred
	}
	rec := []string{string(p.key.Phase), p.key.Context, countText(tokens.ContextTokens, 1),
		strconv.Itoa(p.key.Concurrency), csvStatus(p.pred), csvStatus(p.meas)}
	raw := func(c *Cell, v func(*Cell) float64) string {
		if c == nil {
			return ""
		}
		return floatText(v(c), 1)
	}
	for _, v := range []func(*Cell) float64{totalOf, perRequestOf, ttftOf, tbtOf} {
		e := ""
		if p.bothRan() {
			e = floatText(SignedPct(v(p.pred), v(p.meas)), 2)
		}
		rec = append(rec, raw(p.pred, v), raw(p.meas, v), e)
	}
	return rec
}

func csvStatus(c *Cell) string {
	if c == nil {
		return ""
	}
	return string(c.Status)
}

func writeComparisonJSON(w io.Writer, pred, meas *Matrix) error {
	cmp := Compare(pred, meas)
	keys := func(ks []Key) []keyJSON {
		out := make([]keyJSON, len(ks))
		for i, k := range ks {
			out[i] = newKeyJSON(k)
		}
		return out
	}
	return writeIndented(w, struct {
		Predicted     *Matrix   `json:"predicted"`
		Measured      *Matrix   `json:"measured"`
		Summary       Summary   `json:"summary"`
		OnlyPredicted []keyJSON `json:"only_predicted"`
		OnlyMeasured  []keyJSON `json:"only_measured"`
	}{jsonMatrix(pred), jsonMatrix(meas), cmp.Summary, keys(cmp.OnlyPred), keys(cmp.OnlyMeas)})
}
