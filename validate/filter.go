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
