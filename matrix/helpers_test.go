package matrix

import (
	"math"
	"os"
	"testing"
)

const seedPath = "testdata/seed.txt"

func loadSeed(t testing.TB) *Matrix {
	t.Helper()
	m, err := Load(seedPath)
	if err != nil {
		t.Fatalf("Load(%s): %v", seedPath, err)
	}
	return m
}

func readSeed(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(seedPath)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// close reports whether a and b agree within tol, NaN matching NaN.
func close(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol
}

// cellDiff returns "" when the cells agree: keys, status and counts exactly, floats within the
// tolerance of each CSV column (half a unit of its last printed digit).
func cellDiff(got, want *Cell) string {
	if got.Phase != want.Phase || got.Context != want.Context || got.ContextTokens != want.ContextTokens ||
		got.Concurrency != want.Concurrency || got.Status != want.Status ||
		got.Completed != want.Completed || got.OutputTokens != want.OutputTokens {
		return "keys, status or counts differ"
	}
	for _, mc := range metricColumns() {
		if mc.kind == kindCount {
			continue
		}
		tol := 0.5 * math.Pow(10, -float64(mc.decimals))
		if g, w := *mc.float(got), *mc.float(want); !close(g, w, tol*1.0000001) {
			return mc.name + " differs"
		}
	}
	return ""
}

func requireSameCells(t *testing.T, got, want *Matrix) {
	t.Helper()
	if len(got.Prefill) != len(want.Prefill) || len(got.Decode) != len(want.Decode) {
		t.Fatalf("got %d prefill, %d decode cells, want %d, %d",
			len(got.Prefill), len(got.Decode), len(want.Prefill), len(want.Decode))
	}
	g, w := got.Cells(), want.Cells()
	for i := range g {
		if d := cellDiff(&g[i], &w[i]); d != "" {
			t.Errorf("cell %d (%s): %s:\ngot  %+v\nwant %+v", i, w[i].Key(), d, g[i], w[i])
		}
	}
}

func nan() float64 { return math.NaN() }
