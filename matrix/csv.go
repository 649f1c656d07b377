package matrix

import (
	"bufio"
	"encoding/csv"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/servesim/servesim/internal/fsutil"
)

// CSVHeader returns the CSV columns in order: phase, context, context_tokens, concurrency,
// status, then the measurements total_tok_s, per_request_tok_s, ttft_ms, tbt_ms, avg_active,
// completed, output_tokens, measured_s.
func CSVHeader() []string {
	h := []string{colPhase, colContext, colContextTokens, colConcurrency, colStatus}
	for _, mc := range metricColumns() {
		h = append(h, mc.name)
	}
	return h
}

// WriteCSV writes the matrix as CSV: the header, then one row per prefill cell and per decode
// cell in matrix order. Absent (and non-finite) values are blank; tok/s and ms have 1 decimal,
// avg_active and measured_s 2. Prefill rows have concurrency 1. The matrix's Info is not written.
func WriteCSV(w io.Writer, m *Matrix) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader()); err != nil {
		return err
	}
	for _, cells := range [][]Cell{m.Prefill, m.Decode} {
		for i := range cells {
			if err := cw.Write(csvRecord(&cells[i])); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvRecord(c *Cell) []string {
	conc := c.Concurrency
	if c.Phase == Prefill {
		conc = 1
	}
	rec := []string{string(c.Phase), c.Context, countText(c.ContextTokens, 1), strconv.Itoa(conc), string(c.Status)}
	for _, mc := range metricColumns() {
		if mc.kind == kindCount {
			rec = append(rec, countText(*mc.count(c), 0))
		} else {
			rec = append(rec, floatText(*mc.float(c), mc.decimals))
		}
	}
	return rec
}

// countText formats n, blank when n < low.
func countText(n, low int) string {
	if n < low {
		return ""
	}
	return strconv.Itoa(n)
}

// floatText formats v with the given decimals, blank when v is NaN or infinite; a value that
// rounds to zero has no sign.
func floatText(v float64, decimals int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.HasPrefix(s, "-") && strings.Trim(s, "-0.") == "" {
		return s[1:] // -0.004 at 2 decimals is 0.00, not -0.00
	}
	return s
}

// ParseCSV parses CSV as WriteCSV writes it. The header must name each column of CSVHeader once
// (in any order); blank fields are absent; numbers may be any float strconv accepts (or the
// page's "1,335.7"); context_tokens may be blank (then the label times 1,024) and so may a
// prefill row's concurrency (then 1). Errors read "name:line:column: found: want".
func ParseCSV(r io.Reader, name string) (*Matrix, error) {
	cr := csv.NewReader(skipBOM(fsutil.LineLimitReader(r, name, fsutil.MaxLineBytes)))
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, csvReadError(name, err, "a header row: "+strings.Join(CSVHeader(), ","))
	}
	cols, err := csvColumns(name, header)
	if err != nil {
		return nil, err
	}
	m, err := readCSVRows(cr, name, cols, len(header))
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, &ParseError{Name: name, Want: "a consistent matrix", Err: err}
	}
	return m, nil
}

func skipBOM(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		_, _ = br.Discard(3)
	}
	return br
}

func csvReadError(name string, err error, want string) error {
	var tl *fsutil.TooLargeError
	if errors.As(err, &tl) && tl.Line > 0 {
		return &ParseError{Name: name, Line: tl.Line, Found: "a line longer than " + fsutil.Size(tl.Limit), Want: "lines of at most that length"}
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &ParseError{Name: name, Line: pe.Line, Want: "well-formed CSV", Err: pe.Err}
	}
	if errors.Is(err, io.EOF) {
		return &ParseError{Name: name, Found: "empty input", Want: want}
	}
	return &ParseError{Name: name, Want: want, Err: err}
}

// csvColumns maps each column name to its index, requiring exactly the columns of CSVHeader
// (and allowing the interval columns of WriteCSVBand and param_source of WriteResultCSV, which
// are not measurements).
func csvColumns(name string, header []string) (map[string]int, error) {
	want := CSVHeader()
	cols := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if h == colParamSource || containsString(IntervalHeader(), h) {
			continue
		}
		if !containsString(want, h) {
			return nil, &ParseError{Name: name, Line: 1, Found: "column " + quote(h),
				Want: "the columns " + strings.Join(want, ",")}
		}
		if _, dup := cols[h]; dup {
			return nil, &ParseError{Name: name, Line: 1, Column: h, Found: "a second " + quote(h) + " column", Want: "each column once"}
		}
		cols[h] = i
	}
	for _, h := range want {
		if _, ok := cols[h]; !ok {
			return nil, &ParseError{Name: name, Line: 1, Found: "no " + h + " column", Want: "the columns " + strings.Join(want, ",")}
		}
	}
	return cols, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func readCSVRows(cr *csv.Reader, name string, cols map[string]int, width int) (*Matrix, error) {
	m := &Matrix{}
	seen := map[Key]int{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return m, nil
		}
		if err != nil {
			return nil, csvReadError(name, err, "a data row")
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != width {
			return nil, &ParseError{Name: name, Line: line, Found: strconv.Itoa(len(rec)) + " fields",
				Want: strconv.Itoa(width) + " fields like the header"}
		}
		row := csvRow{name: name, line: line, rec: rec, cols: cols}
		c, err := row.cell()
		if err != nil {
			return nil, err
		}
		k := matchKey(&c)
		if first, dup := seen[k]; dup {
			return nil, &ParseError{Name: name, Line: line, Found: "second row for " + c.Key().String(),
				Want: "one row per cell (first at line " + strconv.Itoa(first) + ")"}
		}
		seen[k] = line
		if c.Phase == Prefill {
			m.Prefill = append(m.Prefill, c)
		} else {
			m.Decode = append(m.Decode, c)
		}
	}
}

// csvRow is one data record with what its errors need to name.
type csvRow struct {
	name string
	line int
	rec  []string
	cols map[string]int
}

// get returns a field, trimmed, invalid UTF-8 replaced as JSON would write it.
func (r *csvRow) get(col string) string {
	return strings.ToValidUTF8(strings.TrimSpace(r.rec[r.cols[col]]), "\uFFFD")
}

func (r *csvRow) fail(col, found, want string) error {
	return &ParseError{Name: r.name, Line: r.line, Column: col, Found: quote(found), Want: want}
}

func (r *csvRow) cell() (Cell, error) {
	phase, err := parsePhase(r.get(colPhase))
	if err != nil {
		return Cell{}, r.fail(colPhase, r.get(colPhase), "prefill or decode")
	}
	label := r.get(colContext)
	tokens, err := r.contextTokens(label)
	if err != nil {
		return Cell{}, err
	}
	conc, err := r.concurrency(phase)
	if err != nil {
		return Cell{}, err
	}
	status, err := ParseStatus(r.get(colStatus))
	if err != nil {
		return Cell{}, r.fail(colStatus, r.get(colStatus), "Valid, Requests queued, Over capacity or Error")
	}
	c := NewCell(phase, label, tokens, conc)
	c.Status = status
	for _, mc := range metricColumns() {
		if err := r.metric(&c, &mc); err != nil {
			return Cell{}, err
		}
	}
	return c, nil
}

func (r *csvRow) contextTokens(label string) (int, error) {
	nominal, err := ParseContext(label)
	if err != nil && label == "" {
		return 0, r.fail(colContext, label, "a context label such as 8K")
	}
	s := r.get(colContextTokens)
	if s == "" {
		if err != nil {
			return 0, r.fail(colContext, label, "a context label such as 8K, or context_tokens")
		}
		return nominal, nil
	}
	n, err := csvCount(s)
	if err != nil || n < 1 {
		return 0, r.fail(colContextTokens, s, "a whole number of tokens >= 1")
	}
	return n, nil
}

func (r *csvRow) concurrency(phase Phase) (int, error) {
	s := r.get(colConcurrency)
	if s == "" && phase == Prefill {
		return 1, nil
	}
	n, err := csvCount(s)
	if err != nil || n < 1 {
		return 0, r.fail(colConcurrency, s, "a whole number >= 1")
	}
	return n, nil
}

func (r *csvRow) metric(c *Cell, mc *metricColumn) error {
	s := r.get(mc.name)
	if mc.kind == kindCount {
		n, err := csvCount(s)
		if err != nil {
			return r.fail(mc.name, s, "a whole number >= 0 or blank")
		}
		*mc.count(c) = n
		return nil
	}
	v, err := csvFloat(s)
	if err != nil {
		return r.fail(mc.name, s, "a number or blank")
	}
	*mc.float(c) = v
	return nil
}

// csvFloat parses any float strconv accepts, or the page's "1,335.7" / "13.2K"; blank is NaN.
func csvFloat(s string) (float64, error) {
	if s == "" {
		return math.NaN(), nil
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v, nil
	}
	return parseDecimal(s)
}

// csvCount parses a whole number >= 0 (also written as a float, "12.0"); blank is -1.
func csvCount(s string) (int, error) {
	if s == "" {
		return -1, nil
	}
	v, err := csvFloat(s)
	if err != nil || v != math.Trunc(v) || v < 0 || v > maxCount {
		return 0, errNotNumber
	}
	return int(v), nil
}
