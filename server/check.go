package server

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/workload"
)

// CompareCells writes the cells of keys as run over HTTP (got, in keys' order) beside the same
// cells simulated in process (want) and, when meas is not nil, the measured statuses; it returns
// an error when a status differs or a TTFT or tok/s differs by more than tol (a fraction).
func CompareCells(w io.Writer, speed float64, keys []matrix.Key, got *LLMBenchResult, want, meas *matrix.Matrix, tol float64) error {
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

// WorkloadNoiseMS is the wall-clock timing noise of a check of a workload, in milliseconds: the
// server's lag and the client's own (each about 0.1-2 ms). Latencies within it (times the speed)
// of the simulation agree whatever their relative difference.
const WorkloadNoiseMS = 2.0

// P99MinRequests is the fewest completed requests whose p99 latencies CompareWorkload checks.
const P99MinRequests = 1000

// CompareWorkload writes the table of a workload sent over HTTP (got, the client's) against the
// same workload simulated (want, 'servesim simulate'), and returns an error when a count differs
// or a figure differs by more than tol (latencies: and by more than WorkloadNoiseMS x speed).
func CompareWorkload(w io.Writer, speed float64, name string, got *WorkloadResult, want *workload.Metrics, tol float64) error {
	floor := WorkloadNoiseMS * speed
	fmt.Fprintf(w, "The workload %s over HTTP against servesim serve (speed %gx) and 'servesim simulate'\n\n", name, speed)
	fmt.Fprintf(w, "%-18s  %12s  %12s  %8s\n", "", "HTTP", "simulate", "diff")
	bad, n := 0, 0
	count := func(name string, g, s int64) {
		n++
		mark := ""
		if g != s {
			mark, bad = "  <- differs", bad+1
		}
		fmt.Fprintf(w, "%-18s  %12d  %12d  %8s%s\n", name, g, s, "", mark)
	}
	value := func(name string, g, s float64, fl float64, checked bool) {
		mark := ""
		switch {
		case !checked:
			mark = "  (not checked)"
		case !Agrees(g, s, tol, fl):
			mark, bad = "  <- differs", bad+1
		}
		if checked {
			n++
		}
		fmt.Fprintf(w, "%-18s  %12s  %12s  %8s%s\n", name, num(g, 1), num(s, 1), pct(relDiff(g, s)), mark)
	}
	count("completed", int64(got.Completed), int64(want.Completed))
	count("rejected", int64(got.Rejected), int64(want.Rejected))
	count("output tokens", got.OutputTokens, want.OutputTokens)
	value("output tok/s", got.OutputTokS, want.OutputTokS, 0, true)
	// A p99 of fewer than P99MinRequests requests is its few largest values, which move with
	// the engine's random draws (a shift of one arrival by a millisecond changes which step
	// admits it, and the draws that follow): shown, not checked.
	p99 := want.Completed >= P99MinRequests
	for _, d := range []struct {
		name      string
		got, want workload.Dist
	}{{"TTFT", got.TTFT, want.TTFT}, {"TPOT", got.TPOT, want.TPOT}, {"E2E", got.E2E, want.E2E}} {
		value(d.name+" p50 ms", d.got.P50, d.want.P50, floor, true)
		value(d.name+" p90 ms", d.got.P90, d.want.P90, floor, true)
		value(d.name+" p99 ms", d.got.P99, d.want.P99, floor, p99)
	}
	if !p99 {
		fmt.Fprintf(w, "(p99 checked from %d requests)\n", P99MinRequests)
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d figures differ (a count, or a figure by more than %g%% and, for latencies, by more than %g ms)", bad, n, 100*tol, floor)
	}
	fmt.Fprintf(w, "\nThe counts agree; throughput within %g%%, latencies within %g%% or %g ms (%g ms of wall-clock noise x speed %g).\n",
		100*tol, 100*tol, floor, WorkloadNoiseMS, speed)
	return nil
}
