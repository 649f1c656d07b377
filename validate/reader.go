package validate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/servesim/servesim/internal/fsutil"
)

// Columns is the corpus header: 51 columns, the same in every file, in this order
// (validate/corpus/README.md).
func Columns() []string {
	return []string{
		"case_id", "source", "model", "weight_dtype", "kv_dtype", "gpu", "gpu_count", "tp", "ep", "dp", "pp",
		"engine", "engine_version", "max_num_seqs", "max_num_batched_tokens", "max_model_len", "spec_method",
		"spec_tokens", "engine_flags", "workload_kind", "len_dist", "concurrency", "request_rate", "input_tokens",
		"input_tokens_nominal", "output_tokens", "output_tokens_nominal", "num_requests", "output_tok_s_total",
		"output_tok_s_per_user", "ttft_ms_median", "ttft_ms_mean", "tpot_ms_median", "itl_ms_median",
		"e2e_ms_median", "prefill_tok_s", "input_tok_s_total", "total_tok_s", "requests_s", "ttft_ms_p90",
		"ttft_ms_p99", "tpot_ms_mean", "tpot_ms_p99", "itl_ms_mean", "e2e_ms_mean", "e2e_ms_p99", "duration_s",
		"num_completed", "num_failed", "derived_fields", "notes",
	}
}

// Measured is a row's metric cells. A blank cell is NaN.
type Measured struct {
	OutputTokS, OutputTokSPerUser                  float64
	TTFTMedianMS, TTFTMeanMS, TTFTP90MS, TTFTP99MS float64
	TPOTMedianMS, TPOTMeanMS, TPOTP99MS            float64
	ITLMedianMS, ITLMeanMS                         float64
	E2EMedianMS, E2EMeanMS, E2EP99MS               float64
	PrefillTokS, InputTokS, TotalTokS, RequestsS   float64
	DurationS                                      float64
}

// Row is one measured point of the corpus. Integer cells that are blank are 0 (the counts
// NumCompleted and NumFailed: -1); float cells that are blank are NaN; RequestRate "inf" is +Inf.
type Row struct {
	File string `json:"file"`
	Line int    `json:"line"`

	CaseID, Source, Model, WeightDType, KVDType, GPU string
	GPUCount, TP, EP, DP, PP                         int
	Engine, EngineVersion                            string
	MaxNumSeqs, MaxNumBatchedTokens, MaxModelLen     int
	SpecMethod                                       string
	SpecTokens                                       int
	EngineFlags, WorkloadKind, LenDist               string
	Concurrency                                      int
	RequestRate                                      float64
	InputTokens, InputTokensNominal                  float64
	OutputTokens, OutputTokensNominal                float64
	NumRequests                                      int
	Measured                                         Measured
	NumCompleted, NumFailed                          int
	DerivedFields, Notes                             string
	// cells are the row's cells as written, by column (filters read them).
	cells map[string]string
}

// Cell is the row's cell in column col as written ("" for a blank or unknown column).
func (r *Row) Cell(col string) string { return r.cells[col] }

// ParseError is a malformed cell or line: the file, the line (1-based, the header is line 1) and
// the column.
type ParseError struct {
	File   string
	Line   int
	Column string
	Err    error
}

func (e *ParseError) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: column %s: %v", e.File, e.Line, e.Column, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// Bounds of a corpus file (the public files have 118 rows at most, a few hundred bytes each).
const (
	// maxRows bounds the rows of one file.
	maxRows = 100_000
	// MaxFileBytes bounds one corpus file's size.
	MaxFileBytes = 64 << 20
)

// ReadFile reads one corpus CSV file, a regular file of at most MaxFileBytes.
func ReadFile(path string) ([]Row, error) {
	f, err := fsutil.Open(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadCSV(f, path)
}

// ReadFiles reads corpus CSV files in order (ReadFile) and refuses a case two of them give
// (CheckDistinct).
func ReadFiles(paths []string) ([]Row, error) {
	var rows []Row
	given := map[string]bool{}
	for _, p := range paths {
		c := filepath.Clean(p)
		if given[c] {
			return nil, fmt.Errorf("%s: given twice: each corpus file once", p)
		}
		given[c] = true
		rs, err := ReadFile(p)
		if err != nil {
			return nil, err
		}
		rows = append(rows, rs...)
	}
	if err := CheckDistinct(rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// CheckDistinct refuses a case_id that two rows give (two files, or one file given twice): each
// case is scored once, so a repeated one would count its errors twice.
func CheckDistinct(rows []Row) error {
	seen := make(map[string]*Row, len(rows))
	for i := range rows {
		r := &rows[i]
		if p, ok := seen[r.CaseID]; ok {
			return &ParseError{File: r.File, Line: r.Line, Column: "case_id",
				Err: fmt.Errorf("%q is also %s:%d: a case is scored once (drop one of them, or give it another case_id)", r.CaseID, p.File, p.Line)}
		}
		seen[r.CaseID] = r
	}
	return nil
}

// ReadCSV reads a corpus table strictly: the header must be Columns() exactly; every row has 51
// cells; numbers parse; the identifying cells (case_id, source, model, gpu, engine,
// workload_kind) are present. Errors name the file, the line and the column.
func ReadCSV(r io.Reader, name string) ([]Row, error) {
	cr := csv.NewReader(fsutil.LineLimitReader(r, name, fsutil.MaxLineBytes))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	head, err := cr.Read()
	if err == io.EOF {
		return nil, &ParseError{File: name, Line: 1, Err: errors.New("empty file: want the 51-column corpus header")}
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	cols := Columns()
	if len(head) > 0 {
		head[0] = strings.TrimPrefix(head[0], "\ufeff")
	}
	if len(head) != len(cols) {
		return nil, &ParseError{File: name, Line: 1, Err: fmt.Errorf("header has %d columns, want the corpus's %d (%s, ..., %s)", len(head), len(cols), cols[0], cols[len(cols)-1])}
	}
	for i, c := range cols {
		if strings.TrimSpace(head[i]) != c {
			return nil, &ParseError{File: name, Line: 1, Err: fmt.Errorf("header column %d is %q, want %q", i+1, head[i], c)}
		}
	}
	var rows []Row
	seen := map[string]int{}
	for {
		line, _ := cr.FieldPos(0)
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ = cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) != len(cols) {
			return nil, &ParseError{File: name, Line: line, Err: fmt.Errorf("%d cells, want %d", len(rec), len(cols))}
		}
		if len(rows) >= maxRows {
			return nil, &ParseError{File: name, Line: line, Err: fmt.Errorf("more than %d rows", maxRows)}
		}
		row, err := parseRow(rec, name, line)
		if err != nil {
			return nil, err
		}
		if prev, ok := seen[row.CaseID]; ok {
			return nil, &ParseError{File: name, Line: line, Column: "case_id", Err: fmt.Errorf("%q repeats line %d", row.CaseID, prev)}
		}
		seen[row.CaseID] = line
		rows = append(rows, row)
	}
	return rows, nil
}

func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if pe.Column > 0 {
			return &ParseError{File: name, Line: pe.Line, Err: fmt.Errorf("character %d: %w", pe.Column, pe.Err)}
		}
		return &ParseError{File: name, Line: pe.Line, Err: pe.Err}
	}
	return fmt.Errorf("%s: %w", name, err)
}

// cells reads one record by column name.
type cells struct {
	rec  []string
	idx  map[string]int
	name string
	line int
	err  error
}

func (c *cells) fail(col string, format string, a ...any) {
	if c.err == nil {
		c.err = &ParseError{File: c.name, Line: c.line, Column: col, Err: fmt.Errorf(format, a...)}
	}
}

func (c *cells) str(col string) string { return strings.TrimSpace(c.rec[c.idx[col]]) }

func (c *cells) need(col string) string {
	s := c.str(col)
	if s == "" {
		c.fail(col, "blank: every row must give it")
	}
	return s
}

// maxCell bounds an integer cell, however written ("1e12", "1000000000000"): every product of
// two cells stays inside int64. The mapping bounds each count further (workload.MaxRequests).
const maxCell = 1_000_000_000_000

// integer reads a non-negative integer cell of at most maxCell; blank is def. "3000.0" is
// accepted as 3000.
func (c *cells) integer(col string, def int) int {
	s := c.str(col)
	if s == "" {
		return def
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 || n > maxCell {
			c.fail(col, "%d: want a non-negative integer of at most %g", n, float64(maxCell))
			return def
		}
		return n
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > maxCell {
		c.fail(col, "%q: want a non-negative integer of at most %g", s, float64(maxCell))
		return def
	}
	return int(f)
}

// float reads a non-negative finite number; blank is NaN; "inf" only where allowed.
func (c *cells) float(col string, inf bool) float64 {
	s := c.str(col)
	if s == "" {
		return math.NaN()
	}
	if inf && strings.EqualFold(s, "inf") {
		return math.Inf(1)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		want := "a non-negative number"
		if inf {
			want += " or inf"
		}
		c.fail(col, "%q: want %s", s, want)
		return math.NaN()
	}
	return f
}

func parseRow(rec []string, name string, line int) (Row, error) {
	idx := map[string]int{}
	for i, c := range Columns() {
		idx[c] = i
	}
	c := &cells{rec: rec, idx: idx, name: name, line: line}
	r := Row{File: name, Line: line, cells: map[string]string{}}
	for col, i := range idx {
		r.cells[col] = strings.TrimSpace(rec[i])
	}
	r.CaseID = c.need("case_id")
	r.Source = c.need("source")
	r.Model = c.need("model")
	r.WeightDType = c.str("weight_dtype")
	r.KVDType = c.str("kv_dtype")
	r.GPU = c.need("gpu")
	r.GPUCount = c.integer("gpu_count", 0)
	r.TP = c.integer("tp", 0)
	r.EP = c.integer("ep", 0)
	r.DP = c.integer("dp", 0)
	r.PP = c.integer("pp", 0)
	r.Engine = c.need("engine")
	r.EngineVersion = c.str("engine_version")
	r.MaxNumSeqs = c.integer("max_num_seqs", 0)
	r.MaxNumBatchedTokens = c.integer("max_num_batched_tokens", 0)
	r.MaxModelLen = c.integer("max_model_len", 0)
	r.SpecMethod = c.str("spec_method")
	r.SpecTokens = c.integer("spec_tokens", 0)
	r.EngineFlags = c.str("engine_flags")
	r.WorkloadKind = c.need("workload_kind")
	r.LenDist = c.str("len_dist")
	r.Concurrency = c.integer("concurrency", 0)
	r.RequestRate = c.float("request_rate", true)
	r.InputTokens = c.float("input_tokens", false)
	r.InputTokensNominal = c.float("input_tokens_nominal", false)
	r.OutputTokens = c.float("output_tokens", false)
	r.OutputTokensNominal = c.float("output_tokens_nominal", false)
	r.NumRequests = c.integer("num_requests", 0)
	m := &r.Measured
	m.OutputTokS = c.float("output_tok_s_total", false)
	m.OutputTokSPerUser = c.float("output_tok_s_per_user", false)
	m.TTFTMedianMS = c.float("ttft_ms_median", false)
	m.TTFTMeanMS = c.float("ttft_ms_mean", false)
	m.TPOTMedianMS = c.float("tpot_ms_median", false)
	m.ITLMedianMS = c.float("itl_ms_median", false)
	m.E2EMedianMS = c.float("e2e_ms_median", false)
	m.PrefillTokS = c.float("prefill_tok_s", false)
	m.InputTokS = c.float("input_tok_s_total", false)
	m.TotalTokS = c.float("total_tok_s", false)
	m.RequestsS = c.float("requests_s", false)
	m.TTFTP90MS = c.float("ttft_ms_p90", false)
	m.TTFTP99MS = c.float("ttft_ms_p99", false)
	m.TPOTMeanMS = c.float("tpot_ms_mean", false)
	m.TPOTP99MS = c.float("tpot_ms_p99", false)
	m.ITLMeanMS = c.float("itl_ms_mean", false)
	m.E2EMeanMS = c.float("e2e_ms_mean", false)
	m.E2EP99MS = c.float("e2e_ms_p99", false)
	m.DurationS = c.float("duration_s", false)
	r.NumCompleted = c.integer("num_completed", -1)
	r.NumFailed = c.integer("num_failed", -1)
	r.DerivedFields = c.str("derived_fields")
	r.Notes = c.str("notes")
	if c.err != nil {
		return Row{}, c.err
	}
	return r, nil
}

// OverCapacity reports whether the corpus marks the row over capacity: its notes start with
// "OVER CAPACITY" (inference-sim's four reasoning stages) or requests failed.
func (r *Row) OverCapacity() bool {
	return strings.HasPrefix(strings.TrimSpace(r.Notes), "OVER CAPACITY") || r.NumFailed > 0
}
