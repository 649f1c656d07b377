package editdist

import "testing"

// TestDistance: one edit each for a letter added, dropped, changed and two neighbours swapped;
// letters outside ASCII count as one character each.
func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"matrix", "matrix", 0}, {"matirx", "matrix", 1}, {"matrx", "matrix", 1}, {"matrixx", "matrix", 1},
		{"matrox", "matrix", 1}, {"", "plan", 4}, {"plän", "plan", 1}, {"fleet", "plan", 4},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestNearest: a near miss names its nearest (the first of equals), an exact name or a far one
// nothing; a long name allows a fifth of its letters.
func TestNearest(t *testing.T) {
	names := []string{"round-robin", "random", "least-outstanding", "least-kv", "prefix-aware", "session"}
	for _, c := range []struct{ name, want string }{
		{"least-kvv", "least-kv"}, {"leastkv", "least-kv"}, {"rnadom", "random"}, {"prefix_awre", "prefix-aware"},
		{"least-outstandnig", "least-outstanding"}, {"least-ustandin", "least-outstanding"}, {"least-stand", ""},
		{"session", ""}, {"fastest", ""}, {"", ""},
	} {
		if got := Nearest(c.name, names); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	// Short names: a suggestion takes fewer edits than its letters.
	units := []string{"s", "ms", "us"}
	for _, c := range []struct{ name, want string }{{"h", ""}, {"sec", ""}, {"mss", "ms"}, {"m", ""}, {"uss", "us"}} {
		if got := Nearest(c.name, units); got != c.want {
			t.Errorf("Nearest(%q, units) = %q, want %q", c.name, got, c.want)
		}
	}
	for _, c := range []struct{ name, want string }{
		{"json", "jsonl"}, {"cvs", "csv"}, {"parquet", ""},
	} {
		if got := Nearest(c.name, []string{"csv", "jsonl"}); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := Nearest("ab", []string{"ax", "ay"}); got != "ax" {
		t.Errorf("Nearest(ab, [ax ay]) = %q, want the first of equals, ax", got)
	}
}
