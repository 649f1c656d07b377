package workload

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/servesim/servesim/internal/editdist"
	"github.com/servesim/servesim/internal/fsutil"
)

// TraceRow is one request of a trace. Arrival times are relative to the earliest row (which is 0).
type TraceRow struct {
	ArrivalNS    int64 `json:"arrival_ns"`
	InputTokens  int   `json:"input_tokens"`
	OutputTokens int   `json:"output_tokens"`
	// PrefixID names a shared leading part of the prompt of PrefixTokens tokens (0: none). Rows
	// with the same PrefixID share that part in the prefix cache.
	PrefixID     uint64 `json:"prefix_id,omitempty"`
	PrefixTokens int    `json:"prefix_tokens,omitempty"`
	// Line is the row's line in the file, for messages.
	Line int `json:"-"`
}

// TraceOptions tune the parsers.
type TraceOptions struct {
	// TimeUnit is the unit of a bare "timestamp" (or "time") field: "s", "ms" or "us". Empty: ms
	// for JSONL (the Mooncake trace convention) and s for CSV (the BurstGPT convention). Fields
	// named *_s, *_ms, *_us carry their unit; datetime strings ("2023-11-16 18:15:46.6805900",
	// the Azure LLM inference trace, or RFC 3339) are read as such.
	TimeUnit string
}

// Column names (compared after lower-casing and removing spaces, '_' and '-'): the canonical
// arrival_s / input_tokens / output_tokens / prefix_id / prefix_tokens, and the names of public
// traces: Azure LLM inference (TIMESTAMP, ContextTokens, GeneratedTokens), BurstGPT (Timestamp,
// Request tokens, Response tokens) and Mooncake (timestamp in ms, input_length, output_length).
//
// arrivalUnit reports whether n names the arrival column, and its unit ("" = bare:
// TraceOptions.TimeUnit).
func arrivalUnit(n string) (string, bool) {
	switch n {
	case "arrivals", "timestamps", "times":
		return "s", true
	case "arrivalms", "timestampms", "timems":
		return "ms", true
	case "arrivalus", "timestampus":
		return "us", true
	case "arrival", "timestamp", "time":
		return "", true
	}
	return "", false
}

func isInputName(n string) bool {
	switch n {
	case "inputtokens", "prompttokens", "inputlength", "inputlen", "contexttokens", "requesttokens":
		return true
	}
	return false
}

func isOutputName(n string) bool {
	switch n {
	case "outputtokens", "maxtokens", "outputlength", "outputlen", "generatedtokens", "responsetokens", "completiontokens":
		return true
	}
	return false
}

func isPrefixIDName(n string) bool { return n == "prefixid" }

func isPrefixTokensName(n string) bool {
	return n == "prefixtokens" || n == "prefixlength" || n == "prefixlen"
}

const acceptedColumns = "arrival_s|arrival_ms|timestamp|TIMESTAMP (datetime), input_tokens|prompt_tokens|input_length|ContextTokens|Request tokens, output_tokens|max_tokens|output_length|GeneratedTokens|Response tokens, optional prefix_id and prefix_tokens"

func normName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if r == ' ' || r == '_' || r == '-' || r == '\ufeff' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unitScale(u string) (float64, error) {
	switch u {
	case "", "s":
		return 1e9, nil
	case "ms":
		return 1e6, nil
	case "us":
		return 1e3, nil
	}
	return 0, fmt.Errorf("time unit %q: %swant s, ms or us", u, didYouMean(u, "s", "ms", "us"))
}

// wantFormat says what a trace's format may be, with the one a near miss spells.
func wantFormat(f string) string {
	return didYouMean(f, "csv", "jsonl") + "want csv or jsonl"
}

// didYouMean is "did you mean X? " for the name of names that s nearly spells, else "".
func didYouMean(s string, names ...string) string {
	if n := editdist.Nearest(s, names); n != "" {
		return fmt.Sprintf("did you mean %q? ", n)
	}
	return ""
}

// maxArrivalNS bounds arrival times (about 3 years) so that differences stay inside int64.
const maxArrivalNS = 1e17

// rowBuilder accumulates one row's fields and checks them.
type rowBuilder struct {
	file     string
	bareUnit string
	clock    *clock
	row      TraceRow
	arrival  float64 // ns, before shifting
	haveT    bool
	prefixID string
	hasPID   bool
}

func (b *rowBuilder) fail(line int, field, format string, a ...any) error {
	return fmt.Errorf("%s: line %d: %s: %s", b.file, line, field, fmt.Sprintf(format, a...))
}

func (b *rowBuilder) setArrival(line int, field, unit, v string, num float64, isNum bool) error {
	if unit == "" {
		unit = b.bareUnit
	}
	if !isNum {
		t := strings.TrimSpace(v)
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			num, isNum = f, true
		} else if ts, ok := parseDatetime(t); ok {
			if b.clock.kind == clockNumeric {
				return b.fail(line, field, "%q is a datetime, but earlier rows give numbers", clip(v))
			}
			ns := ts.UnixNano()
			if b.clock.kind == clockUnset {
				b.clock.kind, b.clock.base = clockDatetime, ns
			}
			b.arrival = float64(ns - b.clock.base) // exact for spans below 104 days
			b.haveT = true
			return nil
		} else {
			return b.fail(line, field, "%q is not a number or a datetime such as 2023-11-16 18:15:46.68", clip(v))
		}
	}
	if b.clock.kind == clockDatetime {
		return b.fail(line, field, "%v is a number, but earlier rows give datetimes", num)
	}
	b.clock.kind = clockNumeric
	scale, _ := unitScale(unit)
	ns := num * scale
	if math.IsNaN(ns) || math.IsInf(ns, 0) || math.Abs(ns) > maxArrivalNS*20 {
		return b.fail(line, field, "%v %s is not a usable time", num, unit)
	}
	b.arrival = ns
	b.haveT = true
	return nil
}

// clock remembers whether a file's arrivals are numbers or datetimes, and the first datetime.
type clock struct {
	kind int
	base int64
}

const (
	clockUnset = iota
	clockNumeric
	clockDatetime
)

func parseDatetime(s string) (time.Time, bool) {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func (b *rowBuilder) setCount(line int, field, v string, num float64, isNum bool, dst *int, min int) error {
	if !isNum {
		t := strings.TrimSpace(v)
		f, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return b.fail(line, field, "%q is not a token count", clip(v))
		}
		num = f
	}
	if num != math.Trunc(num) || num < float64(min) || num > maxTokens {
		return b.fail(line, field, "%v: want a whole number of tokens in %d..%d", num, min, maxTokens)
	}
	*dst = int(num)
	return nil
}

func (b *rowBuilder) finish(line int, haveIn, haveOut bool) (TraceRow, error) {
	r := b.row
	r.Line = line
	if !b.haveT {
		return r, b.fail(line, "arrival", "missing")
	}
	if !haveIn {
		return r, b.fail(line, "input_tokens", "missing")
	}
	if !haveOut {
		return r, b.fail(line, "output_tokens", "missing")
	}
	if r.PrefixTokens > r.InputTokens {
		return r, b.fail(line, "prefix_tokens", "%d is more than the %d input tokens", r.PrefixTokens, r.InputTokens)
	}
	if r.PrefixTokens > 0 && !b.hasPID {
		return r, b.fail(line, "prefix_tokens", "%d without a prefix_id: name the shared prefix", r.PrefixTokens)
	}
	if b.hasPID && b.prefixID != "" {
		if r.PrefixTokens == 0 {
			return r, b.fail(line, "prefix_id", "%q without prefix_tokens: say how long the shared prefix is", clip(b.prefixID))
		}
		r.PrefixID = prefixHash(b.prefixID)
	}
	return r, nil
}

// prefixHash maps a prefix name to a content id in a range no prompt id uses.
func prefixHash(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64() | 1<<63
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// finishRows shifts arrivals to start at 0 and sorts by arrival (stable: ties keep file order).
func finishRows(rows []TraceRow, arrivals []float64, file string) ([]TraceRow, error) {
	if len(rows) == 0 {
		return rows, nil
	}
	lo := math.Inf(1)
	for _, a := range arrivals {
		lo = math.Min(lo, a)
	}
	for i, a := range arrivals {
		d := a - lo
		if d > maxArrivalNS {
			return nil, fmt.Errorf("%s: line %d: arrival %.0f s after the first request: traces longer than about 3 years are not replayed", file, rows[i].Line, d/1e9)
		}
		rows[i].ArrivalNS = int64(math.Round(d))
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].ArrivalNS < rows[j].ArrivalNS })
	return rows, nil
}

// ParseCSV reads a CSV trace with a header row. Columns are matched by name (see acceptedColumns);
// others are ignored. Lines starting with '#' are comments. Errors name the file, line and column.
func ParseCSV(r io.Reader, file string, opt TraceOptions) ([]TraceRow, error) {
	if _, err := unitScale(opt.TimeUnit); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	bare := opt.TimeUnit
	if bare == "" {
		bare = "s"
	}
	cr := csv.NewReader(fsutil.LineLimitReader(r, file, fsutil.MaxLineBytes))
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	header = append([]string(nil), header...) // the reader reuses its record
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty: want a header row with %s", file, acceptedColumns)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, csvErr(err))
	}
	type col struct {
		idx  int
		name string
		unit string
	}
	tc, ic, oc, pc, ptc := col{idx: -1}, col{idx: -1}, col{idx: -1}, col{idx: -1}, col{idx: -1}
	for i, h := range header {
		n := normName(h)
		set := func(c *col, unit string) error {
			if c.idx >= 0 {
				return fmt.Errorf("%s: line 1: columns %q and %q both give the %s", file, header[c.idx], h, describeCol(c.name))
			}
			*c = col{idx: i, name: n, unit: unit}
			return nil
		}
		var err error
		if u, ok := arrivalUnit(n); ok {
			err = set(&tc, u)
			tc.name = "arrival"
		} else if isInputName(n) {
			err = set(&ic, "")
			ic.name = "input"
		} else if isOutputName(n) {
			err = set(&oc, "")
			oc.name = "output"
		} else if isPrefixIDName(n) {
			err = set(&pc, "")
		} else if isPrefixTokensName(n) {
			err = set(&ptc, "")
		}
		if err != nil {
			return nil, err
		}
	}
	if tc.idx < 0 || ic.idx < 0 || oc.idx < 0 {
		return nil, fmt.Errorf("%s: line 1: header %q lacks an arrival, input or output column: want %s", file, clip(strings.Join(header, ",")), acceptedColumns)
	}
	var rows []TraceRow
	var arrivals []float64
	var clk clock
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, csvErr(err))
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rows) >= MaxRequests {
			return nil, fmt.Errorf("%s: line %d: more than %d requests", file, line, MaxRequests)
		}
		b := rowBuilder{file: file, bareUnit: bare, clock: &clk}
		get := func(c col) (string, bool) {
			if c.idx < 0 || c.idx >= len(rec) {
				return "", false
			}
			return rec[c.idx], true
		}
		var haveIn, haveOut bool
		if v, ok := get(tc); ok && strings.TrimSpace(v) != "" {
			if err := b.setArrival(line, header[tc.idx], tc.unit, v, 0, false); err != nil {
				return nil, err
			}
		}
		if v, ok := get(ic); ok && strings.TrimSpace(v) != "" {
			if err := b.setCount(line, header[ic.idx], v, 0, false, &b.row.InputTokens, 1); err != nil {
				return nil, err
			}
			haveIn = true
		}
		if v, ok := get(oc); ok && strings.TrimSpace(v) != "" {
			if err := b.setCount(line, header[oc.idx], v, 0, false, &b.row.OutputTokens, 1); err != nil {
				return nil, err
			}
			haveOut = true
		}
		if v, ok := get(pc); ok && strings.TrimSpace(v) != "" {
			b.prefixID = strings.TrimSpace(v)
			b.hasPID = true
		}
		if v, ok := get(ptc); ok && strings.TrimSpace(v) != "" {
			if err := b.setCount(line, header[ptc.idx], v, 0, false, &b.row.PrefixTokens, 0); err != nil {
				return nil, err
			}
		}
		row, err := b.finish(line, haveIn, haveOut)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
		arrivals = append(arrivals, b.arrival)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no requests after the header", file)
	}
	return finishRows(rows, arrivals, file)
}

func describeCol(n string) string {
	switch n {
	case "arrival":
		return "arrival time"
	case "input":
		return "input tokens"
	case "output":
		return "output tokens"
	}
	return n
}

func csvErr(err error) error {
	var tl *fsutil.TooLargeError
	if errors.As(err, &tl) && tl.Line > 0 {
		return fmt.Errorf("line %d: longer than %s: servesim reads lines of at most that length", tl.Line, fsutil.Size(tl.Limit))
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("line %d, column %d: %v", pe.Line, pe.Column, pe.Err)
	}
	return err
}

// maxLineBytes bounds one JSONL line.
const maxLineBytes = 1 << 20

// ParseJSONL reads a JSON-lines trace: one object per line with the fields of ParseCSV (other
// fields are ignored; Mooncake's hash_ids are checked, and kept by ParseJSONLBlocks). Blank lines
// are skipped.
func ParseJSONL(r io.Reader, file string, opt TraceOptions) ([]TraceRow, error) {
	rows, _, err := ParseJSONLBlocks(r, file, opt)
	return rows, err
}

// ParseJSONLBlocks is ParseJSONL that also returns each row's prefix-block hash ids (Mooncake's
// hash_ids, one id per MooncakeBlockTokens of the prompt), by the row's line.
func ParseJSONLBlocks(r io.Reader, file string, opt TraceOptions) ([]TraceRow, map[int][]uint64, error) {
	rows, blocks, err := parseJSONL(r, file, opt)
	return rows, blocks, err
}

func parseJSONL(r io.Reader, file string, opt TraceOptions) (rowsOut []TraceRow, blocks map[int][]uint64, errOut error) {
	if _, err := unitScale(opt.TimeUnit); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	bare := opt.TimeUnit
	if bare == "" {
		bare = "ms"
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLineBytes)
	var rows []TraceRow
	var arrivals []float64
	var clk clock
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if len(rows) >= MaxRequests {
			return nil, nil, fmt.Errorf("%s: line %d: more than %d requests", file, line, MaxRequests)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(text, &obj); err != nil {
			return nil, nil, fmt.Errorf("%s: line %d: want a JSON object such as {\"arrival_s\": 0.5, \"input_tokens\": 1024, \"output_tokens\": 128}: %v", file, line, err)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys) // deterministic error messages
		b := rowBuilder{file: file, bareUnit: bare, clock: &clk}
		var haveIn, haveOut bool
		seen := map[string]string{}
		claim := func(kind, k string) error {
			if prev, ok := seen[kind]; ok {
				return fmt.Errorf("%s: line %d: fields %q and %q both give the %s", file, line, prev, k, describeCol(kind))
			}
			seen[kind] = k
			return nil
		}
		for _, k := range keys {
			raw := obj[k]
			n := normName(k)
			if n == "hashids" {
				var ids []uint64
				if err := json.Unmarshal(raw, &ids); err != nil {
					return nil, nil, b.fail(line, k, "want a list of integer block ids, got %s", clip(string(raw)))
				}
				if len(ids) > 0 {
					if blocks == nil {
						blocks = map[int][]uint64{}
					}
					blocks[line] = ids
				}
				continue
			}
			num, isNum, str, isStr := jsonScalar(raw)
			if !isNum && !isStr {
				if string(bytes.TrimSpace(raw)) == "null" {
					continue
				}
				if _, known := fieldKind(n); known {
					return nil, nil, b.fail(line, k, "want a number or a string, got %s", clip(string(raw)))
				}
				continue
			}
			kind, known := fieldKind(n)
			if !known {
				continue
			}
			if err := claim(kind, k); err != nil {
				return nil, nil, err
			}
			var err error
			switch kind {
			case "arrival":
				unit, _ := arrivalUnit(n)
				err = b.setArrival(line, k, unit, str, num, isNum)
			case "input":
				err = b.setCount(line, k, str, num, isNum, &b.row.InputTokens, 1)
				haveIn = true
			case "output":
				err = b.setCount(line, k, str, num, isNum, &b.row.OutputTokens, 1)
				haveOut = true
			case "prefix_id":
				if isNum {
					str = strconv.FormatFloat(num, 'g', -1, 64)
				}
				b.prefixID = str
				b.hasPID = str != ""
			case "prefix_tokens":
				err = b.setCount(line, k, str, num, isNum, &b.row.PrefixTokens, 0)
			}
			if err != nil {
				return nil, nil, err
			}
		}
		row, err := b.finish(line, haveIn, haveOut)
		if err != nil {
			return nil, nil, err
		}
		if ids := blocks[line]; ids != nil {
			if want := (row.InputTokens + MooncakeBlockTokens - 1) / MooncakeBlockTokens; len(ids) > want {
				return nil, nil, b.fail(line, "hash_ids", "%d ids for %d input tokens: want at most %d (one per %d tokens)", len(ids), row.InputTokens, want, MooncakeBlockTokens)
			}
		}
		rows = append(rows, row)
		arrivals = append(arrivals, b.arrival)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, nil, fmt.Errorf("%s: line %d: longer than %d bytes", file, line+1, maxLineBytes)
		}
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("%s: no requests: want one JSON object per line with %s", file, acceptedColumns)
	}
	rows, err := finishRows(rows, arrivals, file)
	return rows, blocks, err
}

func fieldKind(n string) (string, bool) {
	if _, ok := arrivalUnit(n); ok {
		return "arrival", true
	}
	switch {
	case isInputName(n):
		return "input", true
	case isOutputName(n):
		return "output", true
	case isPrefixIDName(n):
		return "prefix_id", true
	case isPrefixTokensName(n):
		return "prefix_tokens", true
	}
	return "", false
}

// jsonScalar decodes a number or a string.
func jsonScalar(raw json.RawMessage) (num float64, isNum bool, str string, isStr bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return
	}
	if t[0] == '"' {
		if err := json.Unmarshal(t, &str); err == nil {
			return 0, false, str, true
		}
		return
	}
	if f, err := strconv.ParseFloat(string(t), 64); err == nil {
		return f, true, "", false
	}
	return
}
