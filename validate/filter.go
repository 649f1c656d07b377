package validate

import (
	"fmt"
	"regexp"
	"strings"
)

// Filter selects rows: terms separated by commas, all of which must hold. A term is
// column=value (the cell equals value, case-insensitively), column!=value, column~regexp (the
// cell matches), or a bare regular expression matched against case_id. Columns are the corpus's
// (Columns()).
type Filter struct {
	terms []filterTerm
}

type filterTerm struct {
	col string
	op  string // "=", "!=", "~"
	val string
	re  *regexp.Regexp
}

// ParseFilter reads a filter expression ("" selects every row).
func ParseFilter(s string) (*Filter, error) {
	f := &Filter{}
	if strings.TrimSpace(s) == "" {
		return f, nil
	}
	cols := map[string]bool{}
	for _, c := range Columns() {
		cols[c] = true
	}
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		var ft filterTerm
		switch {
		case strings.Contains(t, "!="):
			ft.col, ft.val, _ = strings.Cut(t, "!=")
			ft.op = "!="
		case strings.Contains(t, "~"):
			ft.col, ft.val, _ = strings.Cut(t, "~")
			ft.op = "~"
		case strings.Contains(t, "="):
			ft.col, ft.val, _ = strings.Cut(t, "=")
			ft.op = "="
		default:
			ft.col, ft.op, ft.val = "case_id", "~", t
		}
		ft.col, ft.val = strings.TrimSpace(ft.col), strings.TrimSpace(ft.val)
		if !cols[ft.col] {
			return nil, fmt.Errorf("filter term %q: no column %q (the corpus columns: %s)", t, ft.col, strings.Join(Columns(), ", "))
		}
		if ft.op == "~" {
			re, err := regexp.Compile(ft.val)
			if err != nil {
				return nil, fmt.Errorf("filter term %q: %v", t, err)
			}
			ft.re = re
		}
		f.terms = append(f.terms, ft)
	}
	return f, nil
}

// Match reports whether the row passes every term.
func (f *Filter) Match(r *Row) bool {
	for _, t := range f.terms {
		v := r.Cell(t.col)
		switch t.op {
		case "=":
			if !strings.EqualFold(v, t.val) {
				return false
			}
		case "!=":
			if strings.EqualFold(v, t.val) {
				return false
			}
		case "~":
			if !t.re.MatchString(v) {
				return false
			}
		}
	}
	return true
}

// SelectRows reads the shipped corpus (no files) or the corpus CSV files, in order, and keeps
// the rows flt matches from one of sources (every source when there is none; names compared
// without case).
func SelectRows(files []string, flt *Filter, sources []string) ([]Row, error) {
	var rows []Row
	keep := func(rs []Row) {
		for i := range rs {
			if flt.Match(&rs[i]) && SourceSelected(sources, rs[i].Source) {
				rows = append(rows, rs[i])
			}
		}
	}
	if len(files) == 0 {
		rs, err := ReadCorpus()
		if err != nil {
			return nil, err
		}
		keep(rs)
	}
	if len(files) > 0 {
		rs, err := ReadFiles(files)
		if err != nil {
			return nil, err
		}
		keep(rs)
	}
	return rows, nil
}

// SourceSelected reports whether source s is one of sources (any, when there is none).
func SourceSelected(sources []string, s string) bool {
	if len(sources) == 0 {
		return true
	}
	for _, x := range sources {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// CountExpressed is the number of cases that can be simulated.
func CountExpressed(cs []*Case) int {
	n := 0
	for _, c := range cs {
		if c.Expressed() {
			n++
		}
	}
	return n
}
