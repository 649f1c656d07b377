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
