package vllmcmd

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// vLLM's flags are read by Python's argparse with type=int or type=float, so a value is a number
// when Python's int() or float() takes it: surrounding whitespace, a sign, and single underscores
// between digits ("1_000") are accepted; hexadecimal ("0x10", "0x1p-1"), Go's other literal forms
// and a trailing or doubled underscore are not. float() also takes "inf", "infinity" and "nan"
// (any case); the flags that read a float refuse them where vLLM would run with nonsense.
// Non-ASCII digits, which Python also takes, are refused.

// pyDigits is a run of decimal digits with single underscores between them.
const pyDigits = `[0-9](?:_?[0-9])*`

var (
	pyIntRE   = regexp.MustCompile(`^[+-]?` + pyDigits + `$`)
	pyFloatRE = regexp.MustCompile(`^[+-]?(?:` + pyDigits + `(?:\.(?:` + pyDigits + `)?)?|\.` + pyDigits + `)(?:[eE][+-]?` + pyDigits + `)?$`)
	pyInfRE   = regexp.MustCompile(`^[+-]?(?i:inf|infinity|nan)$`)
)

// pyWhitespace is what Python's int() and float() strip around a number.
const pyWhitespace = " \t\n\r\v\f"

// pyInt reads s as Python's int(s) does (base 10), within int64.
func pyInt(s string) (int, bool) {
	s = strings.Trim(s, pyWhitespace)
	if !pyIntRE.MatchString(s) {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
	if err != nil || n > math.MaxInt || n < math.MinInt {
		return 0, false
	}
	return int(n), true
}

// pyFloat reads s as Python's float(s) does; finite is false for inf and nan.
func pyFloat(s string) (f float64, ok bool) {
	s = strings.Trim(s, pyWhitespace)
	switch {
	case pyInfRE.MatchString(s):
		v, err := strconv.ParseFloat(strings.ToLower(s), 64)
		return v, err == nil
	case !pyFloatRE.MatchString(s):
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	// Out of range, ParseFloat gives what Python's float() gives: inf, or 0 for a tiny value.
	return v, true
}
