package validate

import (
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const excerpt = "testdata/corpus_excerpt.csv"

func TestReadExcerpt(t *testing.T) {
	rows, err := ReadFile(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 11 {
		t.Fatalf("%d rows, want 11", len(rows))
	}
	r := rows[0]
	if r.CaseID != "isim-llama2-7b-tp1-codegen-stage0" || r.Line != 2 || r.GPU != "h100-sxm" || r.TP != 1 || r.MaxNumSeqs != 128 ||
		r.MaxNumBatchedTokens != 2048 || r.MaxModelLen != 4096 || r.RequestRate != 5 || r.InputTokens != 591.63 || r.OutputTokensNominal != 247 ||
		r.NumRequests != 3000 || r.Measured.TTFTMedianMS != 24.261 || r.Measured.TPOTMeanMS != 9.264 || r.NumFailed != 0 {
		t.Errorf("row 0: %+v", r)
	}
	if !math.IsNaN(r.Measured.TPOTMedianMS) || !math.IsNaN(r.Measured.ITLMeanMS) {
		t.Errorf("blank cells: tpot median %v, itl mean %v; want NaN", r.Measured.TPOTMedianMS, r.Measured.ITLMeanMS)
	}
	if !rows[2].OverCapacity() || rows[0].OverCapacity() {
		t.Errorf("OverCapacity: %v, %v; want true, false", rows[2].OverCapacity(), rows[0].OverCapacity())
	}
	dsr1 := rows[5]
	if !math.IsInf(dsr1.RequestRate, 1) || dsr1.Concurrency != 128 || dsr1.Cell("engine_flags") != "VLLM_FP8_PADDING=0;VLLM_USE_TRITON_FLASH_ATTN=0;max_model_len=32768" {
		t.Errorf("dsr1 row: rate %v, concurrency %d, flags %q", dsr1.RequestRate, dsr1.Concurrency, dsr1.Cell("engine_flags"))
	}
}

// TestReadCorpus reads the shipped corpus and checks every file's row count against the
// corpus README's table (one "| `FILE.csv` | ROWS |" line per file), so that a file read short,
// a row dropped or a file left out of the table is seen.
func TestReadCorpus(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("corpus", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	perFile := map[string]int{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`/]+\\.csv)` \\| (\\d+) \\|").FindAllSubmatch(readme, -1) {
		perFile[string(m[1])], _ = strconv.Atoi(string(m[2]))
	}
	rows, err := ReadCorpus()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, r := range rows {
		got[strings.TrimPrefix(r.File, "corpus/")]++
	}
	for name, want := range perFile {
		if got[name] != want {
			t.Errorf("%s: %d rows, want the README's %d", name, got[name], want)
		}
	}
	for name := range got {
		if _, ok := perFile[name]; !ok {
			t.Errorf("%s: not in the README's table of files", name)
		}
	}
	if len(perFile) < 6 {
		t.Errorf("the README's table lists %d files, want every shipped file (6)", len(perFile))
	}
}

func TestReadMalformed(t *testing.T) {
	f, err := os.Open(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	line := func(rec []string) string {
		var b strings.Builder
		w := csv.NewWriter(&b)
		w.Write(rec)
		w.Flush()
		return strings.TrimSuffix(b.String(), "\n")
	}
	head, row := line(recs[0]), line(recs[1])
	set := func(col string, v string) string {
		c := append([]string(nil), recs[1]...)
		for i, name := range Columns() {
			if name == col {
				c[i] = v
			}
		}
		return line(c)
	}
	short := line(recs[1][:50])
	for _, c := range []struct {
		name, text string
		line       int
		column     string
		want       string
	}{
		{"empty", "", 1, "", "empty file"},
		{"short header", strings.Replace(head, ",notes", "", 1) + "\n", 1, "", "50 columns"},
		{"renamed column", strings.Replace(head, "gpu_count", "gpus", 1) + "\n", 1, "", `header column 7 is "gpus", want "gpu_count"`},
		{"missing cell", head + "\n" + row + "\n" + short + "\n", 3, "", "50 cells, want 51"},
		{"bad integer", head + "\n" + set("gpu_count", "two") + "\n", 2, "gpu_count", `"two": want a non-negative integer`},
		{"negative", head + "\n" + set("num_requests", "-3") + "\n", 2, "num_requests", "want a non-negative integer"},
		{"bad float", head + "\n" + set("ttft_ms_median", "fast") + "\n", 2, "ttft_ms_median", "want a non-negative number"},
		{"inf where not allowed", head + "\n" + set("input_tokens", "inf") + "\n", 2, "input_tokens", "want a non-negative number"},
		{"blank id", head + "\n" + set("case_id", "") + "\n", 2, "case_id", "blank"},
		{"blank gpu", head + "\n" + set("gpu", " ") + "\n", 2, "gpu", "blank"},
		{"duplicate", head + "\n" + row + "\n" + row + "\n", 3, "case_id", "repeats line 2"},
		{"bad quote", head + "\n" + strings.Replace(row, "isim-llama2", `is"im`, 1) + "\n", 2, "", "bare \""},
	} {
		_, err := ReadCSV(strings.NewReader(c.text), "x.csv")
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want a *ParseError", c.name, err)
			continue
		}
		if pe.File != "x.csv" || pe.Line != c.line || (c.column != "" && pe.Column != c.column) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q (line %d, column %q); want line %d, column %q, containing %q", c.name, err, pe.Line, pe.Column, c.line, c.column, c.want)
		}
	}
	// A quoted cell with a newline keeps the line numbers of later rows right.
	multi := head + "\n" + set("notes", "two\nlines") + "\n" + set("case_id", "next") + ",x\n"
	_, err = ReadCSV(strings.NewReader(multi), "m.csv")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 4 || pe.Column != "" {
		t.Errorf("after a two-line cell: %v; want line 4 (52 cells)", err)
	}
}

func TestFilter(t *testing.T) {
	rows, err := ReadFile(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		expr string
		n    int
	}{
		{"", 11},
		{"gpu=H200", 1},
		{"source=trtllm-perf-overview,tp!=1", 1},
		{"workload_kind~^(offline|closed)", 7},
		{"stage[01]$", 3},
	} {
		f, err := ParseFilter(c.expr)
		if err != nil {
			t.Fatalf("%q: %v", c.expr, err)
		}
		n := 0
		for i := range rows {
			if f.Match(&rows[i]) {
				n++
			}
		}
		if n != c.n {
			t.Errorf("filter %q: %d rows, want %d", c.expr, n, c.n)
		}
	}
	for _, bad := range []string{"gpus=h200", "case_id~(", "x!=1"} {
		if _, err := ParseFilter(bad); err == nil {
			t.Errorf("filter %q: no error", bad)
		}
	}
}

// FuzzReadCSV: the reader never panics, and what it accepts has the header's shape.
func FuzzReadCSV(f *testing.F) {
	data, err := os.ReadFile(excerpt)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	lines := strings.SplitN(string(data), "\n", 3)
	f.Add([]byte(lines[0] + "\n" + lines[1] + "\n"))
	f.Add([]byte(lines[0] + "\n"))
	f.Add([]byte("case_id\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ReadCSV(strings.NewReader(string(b)), "fuzz.csv")
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) && (pe.File != "fuzz.csv" || pe.Line < 1) {
				t.Fatalf("error without a place: %v", err)
			}
			return
		}
		for _, r := range rows {
			if r.CaseID == "" || r.GPU == "" || r.Line < 2 {
				t.Fatalf("accepted row without an id, a gpu or a line: %+v", r)
			}
		}
	})
}

// TestCaseOnceAcrossFiles: a case two corpus files give (or one file given twice) is refused,
// naming both places, rather than scored twice; the shipped corpus has each case once.
func TestCaseOnceAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	row := func(id string) string {
		data, err := os.ReadFile(excerpt)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		first := lines[1]
		return lines[0] + "\n" + id + first[strings.Index(first, ","):] + "\n"
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c := write("a.csv", row("case-1")), write("b.csv", row("case-1")), write("c.csv", row("case-2"))
	if rs, err := ReadFiles([]string{a, c}); err != nil || len(rs) != 2 {
		t.Fatalf("two distinct cases: %d rows, %v", len(rs), err)
	}
	_, err := ReadFiles([]string{a, b})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.File != b || pe.Column != "case_id" || !strings.Contains(err.Error(), `"case-1" is also `+a+":2") {
		t.Errorf("case-1 in two files: %v, want b.csv's row refused naming a.csv:2", err)
	}
	if _, err := ReadFiles([]string{a, filepath.Join(dir, ".", "a.csv")}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a.csv twice: %v", err)
	}
	if _, err := SelectRows([]string{a, b}, &Filter{}, nil); err == nil {
		t.Errorf("validate's row selection scored case-1 twice")
	}
	if _, err := ReadCorpus(); err != nil {
		t.Errorf("shipped corpus: %v", err)
	}
}
