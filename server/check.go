package server

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/servesim/servesim/matrix"
)

// CompareCells writes the cells of keys as run over HTTP (got, in keys' order) beside the same
// cells simulated in process (want) and, when meas is not nil, the measured statuses; it returns
// an error when a status differs or a TTFT or tok/s differs by more than tol (a fraction).
func CompareCells(w io.Writer, speed float64, keys []matrix.Key, got *BenchResult, want, meas *matrix.Matrix, tol float64) error {
	fmt.Fprintf(w, "The benchmark protocol over HTTP against servesim serve (speed %gx) and 'servesim matrix'\n\n", speed)
	fmt.Fprintf(w, "%-22s  %-33s  %-24s  %-24s\n", "cell", "status HTTP / matrix"+map[bool]string{true: " / measured", false: ""}[meas != nil], "TTFT ms HTTP / matrix", "tok/s HTTP / matrix")
	bad := 0
	for i, k := range keys {
		g := got.Cells[i]
		var m matrix.Cell
		if c, ok := want.Find(k); ok {
			m = *c
		}
		status := fmt.Sprintf("%s / %s", g.Status, m.Status)
		if meas != nil {
			if mc, ok := meas.Find(k); ok {
				status += " / " + string(mc.Status)
			}
		}
		dt, dr := relDiff(g.TTFTms, m.TTFTms), relDiff(g.TotalTokS, m.TotalTokS)
		mark := ""
		if g.Status != m.Status || math.Abs(dt) > tol || math.Abs(dr) > tol {
			mark, bad = "  <- differs", bad+1
		}
		name := fmt.Sprintf("decode %s x %d", k.Context, k.Concurrency)
		if k.Phase == matrix.Prefill {
			name = "prefill " + k.Context
		}
		fmt.Fprintf(w, "%-22s  %-33s  %-24s  %-24s%s\n", name, status,
			fmt.Sprintf("%s / %s %s", num(g.TTFTms, 0), num(m.TTFTms, 0), pct(dt)),
			fmt.Sprintf("%s / %s %s", num(g.TotalTokS, 1), num(m.TotalTokS, 1), pct(dr)), mark)
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d cells differ (status, or TTFT or tok/s by more than %g%%)", bad, len(keys), 100*tol)
	}
	fmt.Fprintf(w, "\nEvery status agrees; TTFT and tok/s within %g%%.\n", 100*tol)
	return nil
}

// relDiff is (a - b) / b, NaN when either is missing.
func relDiff(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return math.NaN()
	}
	return (a - b) / b
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", 100*v)
}

func num(v float64, dec int) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// WriteLag writes the server's lag behind the simulated clock (p50 and p99 of engine events and
// of streamed chunks), nothing when it has none.
func (s *Server) WriteLag(w io.Writer) {
	c50, s50, _, _ := s.LagQuantiles(0.5)
	c99, s99, nc, ns := s.LagQuantiles(0.99)
	if nc == 0 {
		return
	}
	fmt.Fprintf(w, "servesim: lag behind the simulated clock: engine events p50 %.3f ms, p99 %.3f ms (%d); streamed chunks p50 %.3f ms, p99 %.3f ms (%d)\n",
		1e3*c50, 1e3*c99, nc, 1e3*s50, 1e3*s99, ns)
}
