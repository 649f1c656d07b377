package matrix

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// maxNumberBytes bounds a number's text; longer text is rejected rather than parsed.
const maxNumberBytes = 64

// maxCount bounds integer fields (counts, tokens): exactly representable in a float64.
const maxCount = 1 << 53

var errNotNumber = errors.New("not a number")

// isAbsent reports whether s (trimmed) is the page's mark for a value that is not there.
func isAbsent(s string) bool {
	switch s {
	case "", "—", "–", "-", "n/a", "N/A":
		return true
	}
	return false
}

// ParseNumber parses a number as the published page prints it: "179.7", "8,174.0", "12K"
// (12,000), "13.2K" (13,200), "1.5M" (1,500,000). The K and M suffixes are decimal (the page
// abbreviates thousands), unlike context labels. "—" (absent) gives NaN.
func ParseNumber(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if isAbsent(t) {
		return math.NaN(), nil
	}
	v, err := parseDecimal(t)
	if err != nil {
		return 0, fmt.Errorf("number %s: want a number such as 1,335.7, 12K or —", quote(s))
	}
	return v, nil
}

// ParseMillis parses a duration as the page prints it ("682 ms", "5.4 ms", "30.0 s", "1,985 ms")
// in milliseconds. A bare number is taken as milliseconds; "—" gives NaN.
func ParseMillis(s string) (float64, error) { return parseDuration(s, "ms") }

// ParseSeconds parses a duration as the page prints it ("30.0 s", "30 s", "250 ms") in seconds.
// A bare number is taken as seconds; "—" gives NaN.
func ParseSeconds(s string) (float64, error) { return parseDuration(s, "s") }

// unitPerSecond gives how many of each duration unit make one second.
func unitPerSecond() map[string]float64 {
	return map[string]float64{"s": 1, "ms": 1e3, "us": 1e6, "µs": 1e6, "ns": 1e9}
}

func parseDuration(s, unit string) (float64, error) {
	t := strings.TrimSpace(s)
	if isAbsent(t) {
		return math.NaN(), nil
	}
	num, u := splitUnit(t)
	if u == "" {
		u = unit
	}
	per, ok := unitPerSecond()[u]
	v, err := parseDecimal(num)
	if !ok || err != nil {
		return 0, fmt.Errorf("duration %s: want a duration such as 682 ms, 30.0 s or —", quote(s))
	}
	if u == unit {
		return v, nil
	}
	return v / per * unitPerSecond()[unit], nil
}

// splitUnit splits a trailing run of letters ("ms", "s") from a number, with or without a space.
func splitUnit(t string) (num, unit string) {
	i := strings.LastIndexFunc(t, func(r rune) bool { return !unicode.IsLetter(r) })
	return strings.TrimSpace(t[:i+1]), t[i+1:]
}

// parseCount parses an integer field ("1", "5,391", "12K"); absent gives -1.
func parseCount(s string) (int, error) {
	t := strings.TrimSpace(s)
	if isAbsent(t) {
		return -1, nil
	}
	v, err := parseDecimal(t)
	if err != nil || v != math.Trunc(v) || v < 0 || v > maxCount {
		return 0, fmt.Errorf("count %s: want a whole number such as 5,391 or —", quote(s))
	}
	return int(v), nil
}

// parseDecimal parses [-]digits[,ddd...][.digits][K|M] exactly: the suffix shifts the decimal
// point in the text, so "13.2K" is the float nearest 13200, not 13.2*1000.
func parseDecimal(t string) (float64, error) {
	if len(t) == 0 || len(t) > maxNumberBytes {
		return 0, errNotNumber
	}
	neg := t[0] == '-'
	if neg {
		t = t[1:]
	}
	t, shift := cutMultiplier(t)
	intPart, frac, hasDot := strings.Cut(t, ".")
	digits, ok := groupedDigits(intPart)
	if !ok || !allDigits(frac) || (hasDot && frac == "") {
		return 0, errNotNumber
	}
	frac += strings.Repeat("0", max(0, shift-len(frac)))
	digits, frac = digits+frac[:shift], frac[shift:]
	if frac != "" {
		digits += "." + frac
	}
	v, err := strconv.ParseFloat(digits, 64)
	if err != nil {
		return 0, errNotNumber
	}
	if neg {
		v = -v
	}
	return v, nil
}

// cutMultiplier removes a K (10^3) or M (10^6) suffix and returns the decimal shift it implies.
func cutMultiplier(t string) (string, int) {
	switch {
	case strings.HasSuffix(t, "K"), strings.HasSuffix(t, "k"):
		return t[:len(t)-1], 3
	case strings.HasSuffix(t, "M"):
		return t[:len(t)-1], 6
	}
	return t, 0
}

// groupedDigits accepts "1234" or "1,234,567" (groups of three after the first) and returns the
// digits without commas.
func groupedDigits(s string) (string, bool) {
	if s == "" || !strings.Contains(s, ",") {
		return s, s != "" && allDigits(s)
	}
	groups := strings.Split(s, ",")
	if len(groups[0]) < 1 || len(groups[0]) > 3 {
		return "", false
	}
	for i, g := range groups {
		if !allDigits(g) || (i > 0 && len(g) != 3) {
			return "", false
		}
	}
	return strings.Join(groups, ""), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
