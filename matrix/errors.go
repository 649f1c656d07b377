package matrix

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ParseError is a parse failure located in the input. Its message reads
// "name:LINE:column: found: want ...", leaving out the parts that are unknown.
type ParseError struct {
	Name   string // input name as given to the parser (usually the file path)
	Line   int    // 1-based line; 0 when unknown or when the input as a whole is at fault
	Column string // column or field name; "" when not applicable
	Found  string // what was found, already formatted (input is quoted)
	Want   string // what was expected, without the word "want"
	Err    error  // underlying error, if any
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.Name)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Column != "" {
		b.WriteString(":" + e.Column)
	}
	b.WriteString(": ")
	if e.Found != "" {
		b.WriteString(e.Found)
		b.WriteString(": ")
	}
	if e.Want != "" {
		b.WriteString("want " + e.Want)
	}
	if e.Err != nil {
		if e.Want != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// maxQuoteRunes bounds how much of a bad input value an error message repeats.
const maxQuoteRunes = 48

// quote returns s quoted for an error message, shortened when long.
func quote(s string) string {
	if utf8.RuneCountInString(s) <= maxQuoteRunes {
		return fmt.Sprintf("%q", s)
	}
	r := []rune(s)
	return fmt.Sprintf("%q...", string(r[:maxQuoteRunes]))
}
