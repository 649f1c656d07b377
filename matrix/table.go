package matrix

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/servesim/servesim/internal/numfmt"
)

// textTable is a grid of text rendered either as aligned plain text or as a GitHub table.
type textTable struct {
	header []string
	right  []bool // right-align column i (numbers)
	rows   [][]string
}

func (t *textTable) add(row ...string) { t.rows = append(t.rows, row) }

// widths returns each column's width in runes over the header and all rows.
func (t *textTable) widths() []int {
	w := make([]int, len(t.header))
	for _, row := range append([][]string{t.header}, t.rows...) {
		for i := range min(len(row), len(w)) {
			w[i] = max(w[i], utf8.RuneCountInString(row[i]))
		}
	}
	return w
}

// cell returns row[i], or "" when the row is short.
func cell(row []string, i int) string {
	if i < len(row) {
		return row[i]
	}
	return ""
}

// pad aligns s to width runes, on the right when right is true.
func pad(s string, width int, right bool) string {
	fill := strings.Repeat(" ", max(0, width-utf8.RuneCountInString(s)))
	if right {
		return fill + s
	}
	return s + fill
}

// writePlain writes fixed-width columns separated by two spaces, with a dashed rule under the
// header; lines carry no trailing spaces.
func (t *textTable) writePlain(w io.Writer) error {
	widths := t.widths()
	line := func(row []string) string {
		parts := make([]string, len(widths))
		for i, wd := range widths {
			parts[i] = pad(cell(row, i), wd, t.isRight(i))
		}
		return strings.TrimRight(strings.Join(parts, "  "), " ") + "\n"
	}
	rule := make([]string, len(widths))
	for i, wd := range widths {
		rule[i] = strings.Repeat("-", wd)
	}
	var b strings.Builder
	b.WriteString(line(t.header))
	b.WriteString(line(rule))
	for _, row := range t.rows {
		b.WriteString(line(row))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMarkdown writes a GitHub table, numbers right-aligned, "|" escaped.
func (t *textTable) writeMarkdown(w io.Writer) error {
	line := func(row []string) string {
		parts := make([]string, len(t.header))
		for i := range parts {
			parts[i] = strings.ReplaceAll(cell(row, i), "|", `\|`)
		}
		return "| " + strings.Join(parts, " | ") + " |\n"
	}
	var b strings.Builder
	b.WriteString(line(t.header))
	for i := range t.header {
		if t.isRight(i) {
			b.WriteString("|---:")
		} else {
			b.WriteString("|---")
		}
	}
	b.WriteString("|\n")
	for _, row := range t.rows {
		b.WriteString(line(row))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *textTable) isRight(i int) bool { return i < len(t.right) && t.right[i] }

// numberText formats v with decimals digits and thousands separators ("1,335.7"); absent is "—".
func numberText(v float64, decimals int) string {
	if math.IsNaN(v) {
		return "—"
	}
	if math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	return numfmt.Commas(strconv.FormatFloat(v, 'f', decimals, 64))
}

// countNumber formats a count with thousands separators; absent (-1) is "—".
func countNumber(n int) string {
	if n < 0 {
		return "—"
	}
	return numberText(float64(n), 0)
}

// pctText formats a signed percentage with one decimal ("-2.6%", "+0.0%"); NaN is "—".
func pctText(p float64) string {
	if p != p {
		return "—"
	}
	s := fmt.Sprintf("%+.1f%%", p)
	if s == "-0.0%" {
		s = "+0.0%"
	}
	return s
}

// apeText formats an absolute percentage ("2.6%"); NaN is "—".
func apeText(p float64) string {
	if p != p {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", p)
}
