package numfmt

import "testing"

func TestCommas(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0", "0"},
		{"999", "999"},    // three digits: no separator
		{"1000", "1,000"}, // the first group boundary
		{"1234567", "1,234,567"},
		{"-123", "-123"}, // the sign is not a digit: no ",123"
		{"-1234", "-1,234"},
		{"+1234", "+1,234"},
		{"1335.7", "1,335.7"}, // the fraction is untouched
		{"1234.5678", "1,234.5678"},
		{"-0.5", "-0.5"},
		{"12.", "12."},
	} {
		if got := Commas(c.in); got != c.want {
			t.Errorf("Commas(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestDuration: tenths below the threshold, whole seconds to a minute, then minutes and hours.
func TestDuration(t *testing.T) {
	for _, c := range []struct {
		s, tenths float64
		want      string
	}{{8.24, 10, "8.2 s"}, {42.4, 10, "42 s"}, {42.4, 60, "42.4 s"}, {185, 60, "3 min 05 s"}, {3725, 10, "1 h 02 min"}} {
		if got := Duration(c.s, c.tenths); got != c.want {
			t.Errorf("Duration(%g, %g) = %q, want %q", c.s, c.tenths, got, c.want)
		}
	}
}
