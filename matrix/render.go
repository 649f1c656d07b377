package matrix

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/servesim/servesim/model/param"
)

// Render writes pred, or pred against meas when meas is not nil, in one of the formats:
//
//   - "table": aligned plain text with fixed-width columns;
//   - "markdown": GitHub tables;
//   - "csv": WriteCSV of pred, or with meas one row per cell with predicted and measured values
//     and the signed error in percent;
//   - "json": WriteJSON of pred, or with meas {"predicted", "measured", "summary",
//     "only_predicted", "only_measured"}.
//
// Table and markdown follow the published page: the prefill table, the decode matrix of total
// tok/s and of TTFT (rows are contexts, columns concurrency; Q = requests queued, OC = over
// capacity), and all measurements. With meas each value shows "pred / meas err%", a status mark
// "!P/M" where the statuses differ, and a Summary section closes the output.
func Render(w io.Writer, pred, meas *Matrix, format string) error {
	if pred == nil {
		return errors.New("render: no predicted matrix")
	}
	switch format {
	case "csv":
		if meas == nil {
			return WriteCSV(w, pred)
		}
		return writeComparisonCSV(w, pred, meas)
	case "json":
		if meas == nil {
			return WriteJSON(w, pred)
		}
		return writeComparisonJSON(w, pred, meas)
	case "table", "markdown":
		r := &renderer{w: w, md: format == "markdown"}
		if meas == nil {
			r.single(pred)
		} else {
			r.compared(pred, meas)
		}
		return r.err
	}
	return fmt.Errorf("render: format %q: want table, markdown, csv or json", format)
}

// renderer writes headings, paragraphs and tables, keeping the first write error.
type renderer struct {
	w   io.Writer
	md  bool
	err error
}

func (r *renderer) write(s string) {
	if r.err == nil {
		_, r.err = io.WriteString(r.w, s)
	}
}

func (r *renderer) heading(level int, s string) {
	if r.md {
		r.write(strings.Repeat("#", level) + " " + s + "\n\n")
		return
	}
	rule := "="
	if level > 1 {
		rule = "-"
	}
	r.write(s + "\n" + strings.Repeat(rule, utf8.RuneCountInString(s)) + "\n\n")
}

func (r *renderer) para(lines ...string) {
	for _, l := range lines {
		r.write(l + "\n")
	}
	r.write("\n")
}

func (r *renderer) list(lines []string) {
	for _, l := range lines {
		if r.md {
			l = "- " + l
		}
		r.write(l + "\n")
	}
	r.write("\n")
}

func (r *renderer) table(t *textTable) {
	if r.err != nil {
		return
	}
	if r.md {
		r.err = t.writeMarkdown(r.w)
	} else {
		r.err = t.writePlain(r.w)
	}
	r.write("\n")
}

// maxGridEntries bounds a decode matrix (contexts x concurrencies); a sparser decode set is
// shown in the all-measurements table only, so output stays proportional to the input.
const maxGridEntries = 100_000

// gridFits reports whether a decode matrix of that shape is drawn, noting it when it is not.
func (r *renderer) gridFits(contexts, concurrencies int) bool {
	if contexts*concurrencies <= maxGridEntries {
		return true
	}
	r.para(fmt.Sprintf("(Decode matrices omitted: %d contexts x %d concurrency levels.)", contexts, concurrencies))
	return false
}

const decodeLegend = "Rows are contexts, columns are simultaneous requests. " +
	"Q = requests queued, OC = over capacity, ERR = error."

// single renders one matrix in the layout of the published page.
func (r *renderer) single(m *Matrix) {
	r.heading(1, "Speed test matrix")
	if line := infoLine(m.Info); line != "" {
		r.para(line)
	}
	if len(m.Prefill) > 0 {
		r.heading(2, "Prefill")
		r.table(prefillTable(m))
	}
	if len(m.Decode) > 0 && r.gridFits(len(m.DecodeContexts()), len(m.Concurrencies())) {
		r.heading(2, "Sustained decode: total tok/s")
		r.para(decodeLegend)
		r.table(decodeGrid(m, DecodeTotalTokS, 1))
		r.heading(2, "Sustained decode: TTFT ms")
		r.table(decodeGrid(m, DecodeTTFTms, 0))
	}
	r.heading(2, "All measurements")
	r.table(allTable(m))
}

// infoLine describes the run in one line ("" when Info is empty).
func infoLine(in Info) string {
	var parts []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	model := in.Model
	if in.GPU != "" {
		gpus := in.GPU
		if in.GPUCount > 0 {
			gpus = strconv.Itoa(in.GPUCount) + " x " + in.GPU
		}
		model += " on " + gpus
	}
	add(model)
	add(in.Engine + " " + in.EngineVersion)
	add(in.Quantization)
	if in.DurationS > 0 {
		add(strconv.FormatFloat(in.DurationS, 'f', -1, 64) + " s per cell")
	}
	if in.MaxOutput > 0 {
		add("max output " + countNumber(in.MaxOutput) + " tokens")
	}
	return strings.Join(parts, " · ")
}

func prefillTable(m *Matrix) *textTable {
	t := &textTable{header: []string{"Context", "Tokens", "Prefill tok/s", "TTFT ms"},
		right: []bool{false, true, true, true}}
	for i := range m.Prefill {
		c := &m.Prefill[i]
		t.add(c.Context, countNumber(c.ContextTokens), statusValue(c, c.TotalTokS, 1), statusValue(c, c.TTFTms, 0))
	}
	return t
}

// statusAbbrev is the short status mark of the matrices, "?" for an unknown status.
func statusAbbrev(s Status) string {
	if m := s.Mark(); m != "" {
		return m
	}
	return "?"
}

// statusValue is a matrix entry: the value, "Q" appended when queued; "OC" or "ERR" alone
// when the cell did not run.
func statusValue(c *Cell, v float64, decimals int) string {
	switch {
	case !c.Status.Ran():
		return statusAbbrev(c.Status)
	case c.Status == RequestsQueued:
		return numberText(v, decimals) + " Q"
	}
	return numberText(v, decimals)
}

// gridHeader is the decode matrix header: Context, then one column per concurrency.
func gridHeader(concs []int) *textTable {
	t := &textTable{header: []string{"Context"}, right: []bool{false}}
	for _, c := range concs {
		t.header = append(t.header, strconv.Itoa(c))
		t.right = append(t.right, true)
	}
	return t
}

func cellIndex(cells []Cell) map[Key]*Cell {
	idx := make(map[Key]*Cell, len(cells))
	for i := range cells {
		idx[matchKey(&cells[i])] = &cells[i]
	}
	return idx
}

func decodeGrid(m *Matrix, metric Column, decimals int) *textTable {
	concs := m.Concurrencies()
	idx := cellIndex(m.Decode)
	t := gridHeader(concs)
	for _, ctx := range m.DecodeContexts() {
		row := []string{ctx}
		for _, conc := range concs {
			text := ""
			if c, ok := idx[Key{Decode, ctx, conc}]; ok {
				text = statusValue(c, metric.Value(c), decimals)
			}
			row = append(row, text)
		}
		t.add(row...)
	}
	return t
}

func allTable(m *Matrix) *textTable {
	t := &textTable{header: []string{"Phase", "Context", "Tokens", "Concurrency", "Status", "Total tok/s",
		"Per-request tok/s", "TTFT ms", "TBT ms", "Avg active", "Completed", "Output tokens", "Measured s"},
		right: []bool{false, false, true, true, false, true, true, true, true, true, true, true, true}}
	for _, c := range m.Cells() {
		t.add(string(c.Phase), c.Context, countNumber(c.ContextTokens), strconv.Itoa(c.Concurrency), string(c.Status),
			numberText(c.TotalTokS, 1), numberText(c.PerRequestTokS, 1), numberText(c.TTFTms, 0),
			numberText(c.TBTms, 1), numberText(c.AvgActive, 2), countNumber(c.Completed),
			countNumber(c.OutputTokens), numberText(c.MeasuredS, 1))
	}
	return t
}

// RenderBand is Render preceded, when the band knows the parameters' provenance, by that
// provenance and the band's 80 % interval factors.
func RenderBand(w io.Writer, pred, meas *Matrix, band Band, format string) error {
	if s := band.Provenance; s != nil {
		f := band.Factors()
		fmt.Fprintf(w, "Parameters' provenance: %s\n", s.Line())
		fmt.Fprintf(w, "80%% intervals: total tok/s x/ %.2f, per-request tok/s and TBT x/ %.2f, TTFT x/ %.2f\n\n",
			f[param.MetricThroughput], f[param.MetricTPOT], f[param.MetricTTFT])
	}
	return Render(w, pred, meas, format)
}
