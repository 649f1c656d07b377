package matrix

import (
	"bufio"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
)

// The published page of llm-inference-bench is read line by line, as it is, quirks included:
//
//   - a title block, then "- Key" / "- Value" line pairs under headings (Hardware, Engine, Run);
//     a value may lack its "- " (the seed's Commit);
//   - "Launch command" and the command on one line, with the next heading ("Prefill") glued to
//     its end;
//   - the Prefill section ("8K context12K682 ms TTFT") and the decode matrix, which repeat the
//     table below in a lossy form and are skipped;
//   - the "All measurements" markdown table (header glued to the sentence before it), which is
//     authoritative: one row per prefill context, then per decode (context, concurrency).

// maxLineBytes bounds a line of the page; the longest real line (the launch command) is ~2 KB.
const maxLineBytes = 1 << 20

type pageState int

const (
	inHeader   pageState = iota // title and "- Key" / "- Value" pairs
	inLaunch                    // the line after "Launch command"
	inBody                      // Prefill section and decode matrix: skipped
	inTable                     // the "All measurements" table
	afterTable                  // everything after the table: ignored
)

// pageColumn maps a column header of the page's table to the CSV's column name.
func pageColumn(header string) (string, bool) {
	h := strings.ToLower(header)
	switch h {
	case "phase":
		return colPhase, true
	case "context":
		return colContext, true
	case "requests at once", "concurrency":
		return colConcurrency, true
	case "status":
		return colStatus, true
	}
	for _, mc := range metricColumns() {
		if mc.page == h {
			return mc.name, true
		}
	}
	return "", false
}

type textParser struct {
	name       string
	m          *Matrix
	state      pageState
	keyPending bool   // a "- Key" line waits for its value
	key        string // that key
	header     []string
	cols       map[string]int // CSV column name -> index in the table's rows
	seen       map[Key]int    // cell key -> line of its row
}

// ParseText parses the benchmark's published text page (see the seed file in testdata/seed.txt).
// name labels errors, which read "name:LINE:column: found: want". Context tokens follow the
// benchmark's fitting rule (LabelTokens) with --max-model-len from the launch command and the
// page's Max output.
func ParseText(r io.Reader, name string) (*Matrix, error) {
	p := &textParser{name: name, m: &Matrix{}, seen: map[Key]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		line := strings.ToValidUTF8(sc.Text(), "\uFFFD") // as JSON would write it
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if err := p.line(n, strings.TrimSpace(line)); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		want := "a readable line"
		if errors.Is(err, bufio.ErrTooLong) {
			want = "lines shorter than " + strconv.Itoa(maxLineBytes) + " bytes"
		}
		return nil, &ParseError{Name: name, Line: n + 1, Want: want, Err: err}
	}
	return p.finish()
}

func (p *textParser) line(n int, s string) error {
	switch p.state {
	case inTable:
		return p.tableLine(n, s)
	case afterTable:
		return nil
	case inLaunch:
		p.launchLine(s)
		return nil
	}
	if i := strings.IndexByte(s, '|'); i >= 0 {
		if cells := splitRow(s[i:]); len(cells) > 1 && strings.EqualFold(cells[0], "Phase") {
			return p.tableHeader(n, cells)
		}
	}
	if p.state == inHeader {
		return p.headerLine(n, s)
	}
	return nil
}

// sectionTitles are the page's headings, lower case, with the state each one starts.
func sectionTitles() map[string]pageState {
	return map[string]pageState{
		"hardware": inHeader, "engine": inHeader, "run": inHeader,
		"launch command": inLaunch,
		"prefill":        inBody, "sustained decode": inBody, "all measurements": inBody,
	}
}

func (p *textParser) headerLine(n int, s string) error {
	if s == "" {
		return nil
	}
	item, isItem := strings.CutPrefix(s, "- ")
	if s == "-" {
		item, isItem = "", true
	}
	next, isTitle := sectionTitles()[strings.ToLower(s)]
	if p.keyPending && (isItem || !isTitle) {
		p.keyPending = false
		if !isItem {
			item = s // a value without its "- " (the seed's Commit)
		}
		return p.setInfo(n, p.key, strings.TrimSpace(item))
	}
	if isItem {
		p.keyPending, p.key = true, strings.TrimSpace(item)
		return nil
	}
	p.keyPending = false
	if isTitle {
		p.state = next
	}
	return nil // a title line or a heading of the header block
}

// setInfo stores a header value; keys the simulator does not use are ignored.
func (p *textParser) setInfo(n int, key, val string) error {
	info := &p.m.Info
	var err error
	switch strings.ToLower(key) {
	case "served model":
		info.Model = val
	case "model":
		if info.Model == "" {
			info.Model = val
		}
	case "gpu":
		info.GPU = val
	case "gpu count":
		info.GPUCount, err = infoCount(val, "")
	case "engine":
		info.Engine = val
	case "version":
		info.EngineVersion = val
	case "quantization":
		info.Quantization = val
	case "benchmark tool":
		info.BenchTool = val
	case "time per measurement":
		info.DurationS, err = ParseSeconds(val)
		if math.IsNaN(info.DurationS) { // absent: unknown
			info.DurationS = 0
		}
	case "max output":
		info.MaxOutput, err = infoCount(val, "tokens")
	}
	if err != nil {
		return &ParseError{Name: p.name, Line: n, Column: key, Err: err}
	}
	return nil
}

// infoCount parses a header count such as "4" or "4,096 tokens"; absent gives 0 (unknown).
func infoCount(val, unit string) (int, error) {
	if unit != "" {
		val = strings.TrimSpace(strings.TrimSuffix(val, unit))
	}
	n, err := parseCount(val)
	return max(n, 0), err
}

// launchLine takes the launch command, cutting the next heading that the page glues to its end.
func (p *textParser) launchLine(s string) {
	if s == "" {
		return
	}
	p.state = inBody
	if _, isTitle := sectionTitles()[strings.ToLower(s)]; isTitle {
		return // no command on the page
	}
	for _, title := range []string{"Prefill", "Sustained decode", "All measurements"} {
		if cmd, ok := strings.CutSuffix(s, title); ok {
			s = strings.TrimSpace(cmd)
			break
		}
	}
	p.m.Info.LaunchCommand = s
}

// splitRow splits a markdown table row "| a | b |" into trimmed cells.
func splitRow(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "|")
	s = strings.TrimSuffix(s, "|")
	cells := strings.Split(s, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

func isSeparatorRow(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, ":-") != "" || c == "" {
			return false
		}
	}
	return true
}

func (p *textParser) tableHeader(n int, cells []string) error {
	p.header, p.cols, p.state = cells, map[string]int{}, inTable
	for i, h := range cells {
		col, ok := pageColumn(h)
		if !ok {
			continue // a column the simulator does not use
		}
		if _, dup := p.cols[col]; dup {
			return &ParseError{Name: p.name, Line: n, Column: h, Found: "a second " + quote(h) + " column",
				Want: "each column once"}
		}
		p.cols[col] = i
	}
	for _, col := range []string{colPhase, colContext, colConcurrency, colStatus} {
		if _, ok := p.cols[col]; !ok {
			return &ParseError{Name: p.name, Line: n, Found: "table header without a " + col + " column",
				Want: "| Phase | Context | Requests at once | Status | Total tok/s | ... |"}
		}
	}
	return nil
}

func (p *textParser) tableLine(n int, s string) error {
	if !strings.HasPrefix(s, "|") {
		p.state = afterTable
		return nil
	}
	cells := splitRow(s)
	if isSeparatorRow(cells) {
		return nil
	}
	if len(cells) != len(p.header) {
		return &ParseError{Name: p.name, Line: n, Found: strconv.Itoa(len(cells)) + " cells",
			Want: strconv.Itoa(len(p.header)) + " cells like the table header"}
	}
	return p.addRow(n, cells)
}

func (p *textParser) addRow(n int, cells []string) error {
	c, err := p.rowKey(n, cells)
	if err != nil {
		return err
	}
	for _, mc := range metricColumns() {
		i, ok := p.cols[mc.name]
		if !ok {
			continue
		}
		if err := mc.pageValue(&c, cells[i]); err != nil {
			return &ParseError{Name: p.name, Line: n, Column: p.header[i], Err: err}
		}
	}
	k := matchKey(&c)
	if first, dup := p.seen[k]; dup {
		return &ParseError{Name: p.name, Line: n, Found: "second row for " + c.Key().String(),
			Want: "one row per cell (first at line " + strconv.Itoa(first) + ")"}
	}
	p.seen[k] = n
	if c.Phase == Prefill {
		p.m.Prefill = append(p.m.Prefill, c)
	} else {
		p.m.Decode = append(p.m.Decode, c)
	}
	return nil
}

// rowKey reads a row's phase, context, concurrency and status into a cell with no measurements.
func (p *textParser) rowKey(n int, cells []string) (Cell, error) {
	at := func(col string) (int, string) { i := p.cols[col]; return i, cells[i] }
	fail := func(i int, err error) (Cell, error) {
		return Cell{}, &ParseError{Name: p.name, Line: n, Column: p.header[i], Err: err}
	}
	i, s := at(colPhase)
	phase, err := parsePhase(s)
	if err != nil {
		return fail(i, err)
	}
	i, label := at(colContext)
	if _, err := ParseContext(label); err != nil {
		return fail(i, err)
	}
	i, s = at(colConcurrency)
	conc, err := parseCount(s)
	if err == nil && conc < 1 {
		err = errors.New("concurrency " + quote(s) + ": want a whole number >= 1")
	}
	if err != nil {
		return fail(i, err)
	}
	i, s = at(colStatus)
	status, err := ParseStatus(s)
	if err != nil {
		return fail(i, err)
	}
	c := NewCell(phase, label, 0, conc)
	c.Status = status
	return c, nil
}

// finish checks that a table was read and fills context tokens by the fitting rule.
func (p *textParser) finish() (*Matrix, error) {
	if p.cols == nil {
		return nil, &ParseError{Name: p.name, Found: "no measurements table",
			Want: `a line like "| Phase | Context | Requests at once | Status | ... |" (the "All measurements" table)`}
	}
	if len(p.seen) == 0 {
		return nil, &ParseError{Name: p.name, Found: "an empty measurements table", Want: "at least one row"}
	}
	mml := LaunchMaxModelLen(p.m.Info.LaunchCommand)
	for _, cells := range [][]Cell{p.m.Prefill, p.m.Decode} {
		for i := range cells {
			c := &cells[i]
			c.ContextTokens, _ = LabelTokens(c.Context, c.Phase, mml, p.m.Info.MaxOutput)
		}
	}
	if err := p.m.Validate(); err != nil {
		return nil, &ParseError{Name: p.name, Want: "a consistent matrix", Err: err}
	}
	return p.m, nil
}

// LaunchMaxModelLen returns the --max-model-len of a vllm serve command line, 0 when it is not
// given or not a plain number. vLLM's suffixes are read as vLLM reads them: k/m decimal, K/M binary.
func LaunchMaxModelLen(cmd string) int {
	fields := strings.Fields(cmd)
	for i, f := range fields {
		f = strings.Replace(f, "_", "-", 2)
		switch {
		case f == "--max-model-len" && i+1 < len(fields):
			return modelLen(fields[i+1])
		case strings.HasPrefix(f, "--max-model-len="):
			return modelLen(strings.TrimPrefix(f, "--max-model-len="))
		}
	}
	return 0
}

func modelLen(s string) int {
	s = strings.Trim(s, `"'`)
	mult := 1
	if s != "" {
		switch s[len(s)-1] {
		case 'k':
			mult = 1000
		case 'K':
			mult = 1024
		case 'm':
			mult = 1000 * 1000
		case 'M':
			mult = 1024 * 1024
		}
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0
	}
	return n * mult
}
