package numfmt

import (
	"fmt"
	"strings"
)

// Commas inserts comma thousands separators into the integer part of a decimal number written
// by strconv ("-12345.67" -> "-12,345.67", "1234" -> "1,234"). A leading sign and the fraction
// are kept as they are.
func Commas(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		sign, s = s[:1], s[1:]
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	var b strings.Builder
	b.Grow(len(sign) + len(s) + len(intPart)/3)
	b.WriteString(sign)
	for i := 0; i < len(intPart); i++ {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(intPart[i])
	}
	if hasDot {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// Duration writes s seconds for people: "8.2 s" below tenthsBelow seconds, "42 s" below a
// minute, then "3 min 05 s" and "1 h 02 min".
func Duration(s, tenthsBelow float64) string {
	switch {
	case s < tenthsBelow:
		return fmt.Sprintf("%.1f s", s)
	case s < 60:
		return fmt.Sprintf("%.0f s", s)
	case s < 3600:
		m := int(s) / 60
		return fmt.Sprintf("%d min %02d s", m, int(s)-60*m)
	}
	h := int(s) / 3600
	return fmt.Sprintf("%d h %02d min", h, (int(s)-3600*h)/60)
}
