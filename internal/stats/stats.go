// Package stats holds the summary statistics every other package uses: the median, linear
// quantiles of sorted values and the mean. One home, so that a benchmark's median, a corpus
// score's and a latency table's are computed the same way.
//
// Conventions: an empty input gives NaN; Median skips NaN entries (a metric a row does not
// have) and never modifies its input; Quantile takes sorted values and interpolates linearly
// between order statistics (numpy's default, "linear"), so its q = 0.5 is the median.
package stats

import (
	"math"
	"slices"
	"sort"
)

// Median is the middle value, the mean of the two middle values for an even count; NaN entries
// are skipped, NaN when none is left. The input is not modified.
func Median(v []float64) float64 {
	w := slices.DeleteFunc(slices.Clone(v), math.IsNaN)
	sort.Float64s(w)
	return Quantile(w, 0.5)
}

// Quantile is the q-quantile (0 <= q <= 1) of sorted values, linear between order statistics
// (numpy "linear"); NaN when empty.
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	pos := q * float64(n-1)
	i := int(pos)
	if i >= n-1 {
		return sorted[n-1]
	}
	f := pos - float64(i)
	// (1-f) a + f b: for the median of an even count this is exactly (a + b) / 2.
	return (1-f)*sorted[i] + f*sorted[i+1]
}

// Mean is the arithmetic mean; NaN when empty (and when an entry is NaN).
func Mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
