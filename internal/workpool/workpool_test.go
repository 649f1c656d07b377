package workpool

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRunIndependentOfWorkers: every job runs once, results land in their slots whatever the
// worker count, and done counts 1..n.
func TestRunIndependentOfWorkers(t *testing.T) {
	const n = 200
	var want []uint64
	for _, workers := range []int{1, 3, 8, 0, 500} {
		out := make([]uint64, n)
		runs := make([]int, n)
		var seen []int
		Run(n, workers, func(i int) {
			runs[i]++
			r := rand.New(rand.NewPCG(uint64(i), 1))
			out[i] = r.Uint64()
		}, func(finished, total int) {
			if total != n {
				t.Errorf("workers %d: total %d, want %d", workers, total, n)
			}
			seen = append(seen, finished)
		})
		for i, c := range runs {
			if c != 1 {
				t.Fatalf("workers %d: job %d ran %d times", workers, i, c)
			}
		}
		if want == nil {
			want = out
		} else if !slices.Equal(out, want) {
			t.Errorf("workers %d: results differ from 1 worker", workers)
		}
		for k, f := range seen {
			if f != k+1 {
				t.Fatalf("workers %d: done called with %v", workers, seen)
			}
		}
	}
	Run(0, 4, func(int) { t.Error("job with n = 0") }, nil)
	if Workers(5) != 5 || Workers(0) < 1 {
		t.Errorf("Workers(5) = %d, Workers(0) = %d", Workers(5), Workers(0))
	}
}
