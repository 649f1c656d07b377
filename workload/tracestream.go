package workload

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/vtime"
)

// Requests of a streamed trace carry what the row gives beyond lengths: the prompt's prefix-block
// hash ids (Mooncake's hash_ids, one id per BlockSpan tokens: equal ids are equal content, so
// requests share their leading KV blocks as far as their leading ids agree) and a session.

// blockIDBase is the content-id range of trace block hash ids: clear of prompts (promptIDBase),
// generated prefixes (prefixIDBase) and named prefixes (prefixHash).
const blockIDBase = 1 << 60

// traceBlocks maps a row's hash ids to content ids, copy c of the row in its own range.
func traceBlocks(ids []uint64, c int) []uint64 {
	out := make([]uint64, len(ids))
	for i, id := range ids {
		out[i] = blockIDBase | (id*1024+uint64(c))&(blockIDBase-1)
	}
	return out
}

// MooncakeBlockTokens is the span of one Mooncake hash id: 512 tokens of the prompt.
const MooncakeBlockTokens = 512

// StreamOptions select and scale the part of a trace a stream replays.
type StreamOptions struct {
	TraceOptions
	// Format is "csv" or "jsonl"; empty: from the file's extension (.csv, else JSON lines).
	Format string
	// Speed divides arrival times (2: the day replays in half the time at twice the rate);
	// 0 means 1.
	Speed float64
	// RateScale multiplies the request rate while keeping the day's shape and span: below 1 each
	// row is kept with that probability; above 1 each row is sent floor(RateScale) times, plus
	// once more with probability of the fraction. Copies get their own prompts and block ids (a
	// copy shares the prefix cache with the other rows of its copy, not with the original).
	// Draws come from Seed. 0 means 1.
	RateScale float64
	Seed      uint64
	// From and To select the rows with From <= arrival < To, in seconds of the trace from its
	// first row, before Speed; the first kept row's arrival is then the stream's time 0
	// (To 0: to the end).
	FromS, ToS float64
	// BlockSpan is the tokens one hash id covers (0: MooncakeBlockTokens).
	BlockSpan int
}

// TraceStream reads a trace file row by row, in order, in memory that does not grow with the
// rows read: a replay of any length holds one row at a time. Rows must be in arrival order (the
// public traces are); a row earlier than the one before it is an error naming its line, as is
// every malformed row: nothing is dropped silently.
type TraceStream struct {
	file   string
	opt    StreamOptions
	closer io.Closer
	csv    *csv.Reader
	header []string
	cols   csvCols
	sc     *bufio.Scanner
	line   int
	clk    clock
	bare   string
	first  float64 // the first row's arrival, ns
	have0  bool
	lastNS float64
	rng    *rand.Rand
	// Rows counts the rows read, Sent the requests sent (after the window and the rate scale).
	Rows, Sent int
	err        error
	pend       []Request // copies of the row being replayed (rate scale above 1)
	firstSent  float64   // the first sent row's trace arrival, ns (window start)
	haveSent   bool
	promptSeq  uint64
}

type csvCols struct {
	t, in, out, pid, ptok, sess int
	tunit                       string
}

// OpenTrace opens a trace for streaming. The caller closes it.
func OpenTrace(path string, opt StreamOptions) (*TraceStream, error) {
	if _, err := unitScale(opt.TimeUnit); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if opt.Speed < 0 || math.IsNaN(opt.Speed) || math.IsInf(opt.Speed, 0) {
		return nil, fmt.Errorf("speed %v: want a positive factor", opt.Speed)
	}
	if opt.RateScale < 0 || math.IsNaN(opt.RateScale) || opt.RateScale > 1000 {
		return nil, fmt.Errorf("rate scale %v: want a factor in (0, 1000]", opt.RateScale)
	}
	if opt.FromS < 0 || opt.ToS < 0 || (opt.ToS > 0 && opt.ToS <= opt.FromS) {
		return nil, fmt.Errorf("window from %g s to %g s: want 0 <= from < to", opt.FromS, opt.ToS)
	}
	if opt.Speed == 0 {
		opt.Speed = 1
	}
	if opt.RateScale == 0 {
		opt.RateScale = 1
	}
	if opt.BlockSpan <= 0 {
		opt.BlockSpan = MooncakeBlockTokens
	}
	f, err := fsutil.Open(path, fsutil.MaxTraceBytes)
	if err != nil {
		return nil, err
	}
	s := &TraceStream{file: path, opt: opt, closer: f, rng: rand.New(rand.NewPCG(opt.Seed, streamArrivals))}
	format := opt.Format
	if format == "" {
		format = formatFromExt(path)
	}
	switch format {
	case "csv":
		s.bare = opt.TimeUnit
		if s.bare == "" {
			s.bare = "s"
		}
		err = s.openCSV(f)
	case "jsonl":
		s.bare = opt.TimeUnit
		if s.bare == "" {
			s.bare = "ms"
		}
		s.sc = bufio.NewScanner(f)
		s.sc.Buffer(make([]byte, 0, 64*1024), maxLineBytes)
	default:
		err = fmt.Errorf("%s: format %q: %s", path, format, wantFormat(format))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the file.
func (s *TraceStream) Close() error { return s.closer.Close() }

// Err is the error that ended the stream, or nil at the end of the file.
func (s *TraceStream) Err() error { return s.err }

func (s *TraceStream) openCSV(r io.Reader) error {
	cr := csv.NewReader(fsutil.LineLimitReader(r, s.file, fsutil.MaxLineBytes))
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return fmt.Errorf("%s: empty: want a header row with %s", s.file, acceptedColumns)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.file, csvErr(err))
	}
	s.header = append([]string(nil), header...)
	c := csvCols{t: -1, in: -1, out: -1, pid: -1, ptok: -1, sess: -1}
	for i, h := range s.header {
		n := normName(h)
		var dst *int
		if u, ok := arrivalUnit(n); ok {
			dst, c.tunit = &c.t, u
		} else if isInputName(n) {
			dst = &c.in
		} else if isOutputName(n) {
			dst = &c.out
		} else if isPrefixIDName(n) {
			dst = &c.pid
		} else if isPrefixTokensName(n) {
			dst = &c.ptok
		} else if isSessionName(n) {
			dst = &c.sess
		} else {
			continue
		}
		if *dst >= 0 {
			return fmt.Errorf("%s: line 1: columns %q and %q give the same field", s.file, s.header[*dst], h)
		}
		*dst = i
	}
	if c.t < 0 || c.in < 0 || c.out < 0 {
		return fmt.Errorf("%s: line 1: header %q lacks an arrival, input or output column: want %s", s.file, clip(strings.Join(s.header, ",")), acceptedColumns)
	}
	s.csv, s.cols = cr, c
	return nil
}

func isSessionName(n string) bool {
	switch n {
	case "sessionid", "session", "conversationid", "chatid", "userid":
		return true
	}
	return false
}

// raw is one row as read, before the window and scaling.
type rawRow struct {
	row     TraceRow
	arrival float64 // ns from the clock's origin
	blocks  []uint64
	session string
}

// readRow reads the next row; ok false at the end or on an error (s.err).
func (s *TraceStream) readRow() (rawRow, bool) {
	if s.csv != nil {
		return s.readCSV()
	}
	return s.readJSONL()
}

func (s *TraceStream) readCSV() (rawRow, bool) {
	for {
		rec, err := s.csv.Read()
		if err == io.EOF {
			return rawRow{}, false
		}
		if err != nil {
			s.err = fmt.Errorf("%s: %w", s.file, csvErr(err))
			return rawRow{}, false
		}
		line, _ := s.csv.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		b := rowBuilder{file: s.file, bareUnit: s.bare, clock: &s.clk}
		get := func(i int) (string, bool) {
			if i < 0 || i >= len(rec) || strings.TrimSpace(rec[i]) == "" {
				return "", false
			}
			return rec[i], true
		}
		var haveIn, haveOut bool
		var out rawRow
		if v, ok := get(s.cols.t); ok {
			if err := b.setArrival(line, s.header[s.cols.t], s.cols.tunit, v, 0, false); err != nil {
				s.err = err
				return out, false
			}
		}
		if v, ok := get(s.cols.in); ok {
			if err := b.setCount(line, s.header[s.cols.in], v, 0, false, &b.row.InputTokens, 1); err != nil {
				s.err = err
				return out, false
			}
			haveIn = true
		}
		if v, ok := get(s.cols.out); ok {
			if err := b.setCount(line, s.header[s.cols.out], v, 0, false, &b.row.OutputTokens, 1); err != nil {
				s.err = err
				return out, false
			}
			haveOut = true
		}
		if v, ok := get(s.cols.pid); ok {
			b.prefixID, b.hasPID = strings.TrimSpace(v), true
		}
		if v, ok := get(s.cols.ptok); ok {
			if err := b.setCount(line, s.header[s.cols.ptok], v, 0, false, &b.row.PrefixTokens, 0); err != nil {
				s.err = err
				return out, false
			}
		}
		if v, ok := get(s.cols.sess); ok {
			out.session = strings.TrimSpace(v)
		}
		row, err := b.finish(line, haveIn, haveOut)
		if err != nil {
			s.err = err
			return out, false
		}
		out.row, out.arrival = row, b.arrival
		return out, true
	}
}

func (s *TraceStream) readJSONL() (rawRow, bool) {
	for s.sc.Scan() {
		s.line++
		line := s.line
		text := bytes.TrimSpace(s.sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(text, &obj); err != nil {
			s.err = fmt.Errorf("%s: line %d: want a JSON object such as {\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 128}: %v", s.file, line, err)
			return rawRow{}, false
		}
		b := rowBuilder{file: s.file, bareUnit: s.bare, clock: &s.clk}
		var haveIn, haveOut bool
		var out rawRow
		seen := map[string]string{}
		for _, k := range sortedKeys(obj) {
			raw := obj[k]
			n := normName(k)
			if n == "hashids" {
				if err := json.Unmarshal(raw, &out.blocks); err != nil {
					s.err = b.fail(line, k, "want a list of integer block ids, got %s", clip(string(raw)))
					return out, false
				}
				continue
			}
			if isSessionName(n) {
				if v, isNum, str, isStr := jsonScalar(raw); isNum {
					out.session = strconv.FormatFloat(v, 'g', -1, 64)
				} else if isStr {
					out.session = str
				}
				continue
			}
			num, isNum, str, isStr := jsonScalar(raw)
			kind, known := fieldKind(n)
			if !known {
				continue
			}
			if !isNum && !isStr {
				if string(bytes.TrimSpace(raw)) == "null" {
					continue
				}
				s.err = b.fail(line, k, "want a number or a string, got %s", clip(string(raw)))
				return out, false
			}
			if prev, ok := seen[kind]; ok {
				s.err = fmt.Errorf("%s: line %d: fields %q and %q both give the %s", s.file, line, prev, k, describeCol(kind))
				return out, false
			}
			seen[kind] = k
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
				b.prefixID, b.hasPID = str, str != ""
			case "prefix_tokens":
				err = b.setCount(line, k, str, num, isNum, &b.row.PrefixTokens, 0)
			}
			if err != nil {
				s.err = err
				return out, false
			}
		}
		row, err := b.finish(line, haveIn, haveOut)
		if err != nil {
			s.err = err
			return out, false
		}
		if len(out.blocks) > 0 {
			if want := (row.InputTokens + s.opt.BlockSpan - 1) / s.opt.BlockSpan; len(out.blocks) > want {
				s.err = b.fail(line, "hash_ids", "%d ids for %d input tokens: want at most %d (one per %d tokens)", len(out.blocks), row.InputTokens, want, s.opt.BlockSpan)
				return out, false
			}
		}
		out.row, out.arrival = row, b.arrival
		return out, true
	}
	if err := s.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			s.err = fmt.Errorf("%s: line %d: longer than %d bytes", s.file, s.line+1, maxLineBytes)
		} else {
			s.err = fmt.Errorf("%s: %w", s.file, err)
		}
	}
	return rawRow{}, false
}

func sortedKeys(obj map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ { // insertion sort: a handful of keys
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// Next returns the next request, in arrival order; false at the end of the stream or on an
// error (Err). Request.PromptID numbers the rows sent (as a trace workload numbers its rows), so
// a stream and the same trace loaded whole give the same requests.
func (s *TraceStream) Next() (Request, bool) {
	for {
		if len(s.pend) > 0 {
			q := s.pend[0]
			s.pend = s.pend[1:]
			s.Sent++
			return q, true
		}
		if s.err != nil {
			return Request{}, false
		}
		r, ok := s.readRow()
		if !ok {
			return Request{}, false
		}
		s.Rows++
		if !s.have0 {
			s.first, s.have0 = r.arrival, true
		}
		if r.arrival < s.lastNS {
			s.err = fmt.Errorf("%s: line %d: arrival %.6g s is before the previous row's %.6g s: a streamed trace must be in arrival order", s.file, r.row.Line, (r.arrival-s.first)/1e9, (s.lastNS-s.first)/1e9)
			return Request{}, false
		}
		s.lastNS = r.arrival
		if s.Rows > maxStreamRows {
			s.err = fmt.Errorf("%s: line %d: more than %d rows", s.file, r.row.Line, maxStreamRows)
			return Request{}, false
		}
		off := r.arrival - s.first
		if off > maxArrivalNS {
			s.err = fmt.Errorf("%s: line %d: arrival %.0f s after the first request: traces longer than about 3 years are not replayed", s.file, r.row.Line, off/1e9)
			return Request{}, false
		}
		offNS := int64(math.Round(off))
		if float64(offNS) < s.opt.FromS*1e9 {
			continue
		}
		if s.opt.ToS > 0 && float64(offNS) >= s.opt.ToS*1e9 {
			return Request{}, false // rows are in order: nothing later is in the window
		}
		if !s.haveSent {
			s.firstSent, s.haveSent = float64(offNS), true
		}
		copies := 1
		if s.opt.RateScale != 1 {
			whole := math.Floor(s.opt.RateScale)
			copies = int(whole)
			if s.rng.Float64() < s.opt.RateScale-whole {
				copies++
			}
		}
		at := math.Round((float64(offNS) - s.firstSent) / s.opt.Speed)
		for c := range copies {
			s.promptSeq++
			q := Request{At: vtime.Time(at), InputTokens: r.row.InputTokens, OutputTokens: r.row.OutputTokens,
				PromptID: promptIDBase | s.promptSeq, PromptUnique: true, PrefixID: r.row.PrefixID, PrefixTokens: r.row.PrefixTokens, Line: r.row.Line}
			if len(r.blocks) > 0 {
				q.Blocks, q.BlockSpan = traceBlocks(r.blocks, c), s.opt.BlockSpan
			}
			if r.session != "" {
				q.Session = prefixHash(r.session) ^ uint64(c)
			}
			if q.PrefixID != 0 && c > 0 {
				q.PrefixID ^= uint64(c) << 40
			}
			s.pend = append(s.pend, q)
		}
	}
}

// maxStreamRows bounds the rows a streamed trace reads (rows are not kept, so the bound is on
// time, not memory).
const maxStreamRows = 100_000_000
