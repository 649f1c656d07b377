// Package editdist measures how nearly one name spells another, for "did you mean" suggestions.
package editdist

// Distance is the Damerau-Levenshtein distance (optimal string alignment) between a and b, in
// characters: the letters added, dropped, changed or swapped with a neighbour.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range rb {
		d[0][j+1] = j + 1
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// Nearest is the name of names that name nearly spells (at most two edits, or a fifth of the
// name's letters for a long one, and fewer than its letters: "h" spells no "s"), the first of
// the nearest; "" when none is near or name is one of them.
func Nearest(name string, names []string) string {
	best, bestD := "", 0
	for _, n := range names {
		if d := Distance(name, n); best == "" || d < bestD {
			best, bestD = n, d
		}
	}
	if l := len([]rune(best)); bestD == 0 || bestD > max(2, l/5) || bestD >= l {
		return ""
	}
	return best
}
