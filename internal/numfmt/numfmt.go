package numfmt

import "strings"

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
