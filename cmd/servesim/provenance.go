package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/workload"
)

// How sure a prediction is: the parameters' provenance by group and the 80 % intervals that
// widen with it (param.Summary, param.Widths), as every command prints them.

// provenanceLine writes "label  <provenance line>" and, for an unsupported GPU family, nothing
// more: the line says it.
func provenanceLine(w io.Writer, label string, s *param.Summary) {
	fmt.Fprintf(w, "%s%s\n", label, s.Line())
}

// namedInterval is one metric's 80 % interval in an output (JSON).
type namedInterval struct {
	Name string `json:"name"`
	param.Interval
}

// workloadIntervals are a workload run's intervals: output tok/s (not for an open loop or trace
// that keeps up: the arrivals set it), TPOT, TTFT and E2E at the median, and the per-user tok/s.
func workloadIntervals(s *param.Summary, m *workload.Metrics) []namedInterval {
	var out []namedInterval
	// The arrivals set an open loop's or a trace's throughput while the server keeps up: no
	// interval around it (whether it keeps up is the question, answered by Overload).
	arrivals := (m.Kind == workload.KindOpen || m.Kind == workload.KindTrace) && m.Overload == nil
	for _, x := range []struct {
		name string
		m    param.Metric
		v    float64
	}{{"output_tok_s", param.MetricThroughput, m.OutputTokS}, {"tpot_ms_p50", param.MetricTPOT, m.TPOT.P50},
		{"ttft_ms_p50", param.MetricTTFT, m.TTFT.P50}, {"e2e_ms_p50", param.MetricE2E, m.E2E.P50}, {"user_tok_s", param.MetricTPOT, m.UserTokS}} {
		if math.IsNaN(x.v) || math.IsInf(x.v, 0) || x.v <= 0 || (arrivals && x.m == param.MetricThroughput) {
			continue
		}
		out = append(out, namedInterval{x.name, s.Interval80(x.m, x.v)})
	}
	return out
}

// writeIntervalsText writes the intervals on one line: "name lo-hi (x/ f)".
func writeIntervalsText(w io.Writer, label string, ivs []namedInterval) {
	fmt.Fprint(w, label)
	for i, iv := range ivs {
		sep := ", "
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(w, "%s%s %s-%s (x/ %.2f)", sep, iv.Name, short(iv.Lo), short(iv.Hi), iv.Factor())
	}
	fmt.Fprintln(w)
}

func short(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// simulateJSON is simulate's JSON: the metrics as workload.WriteJSON writes them, with the
// provenance and the intervals after them.
type simulateJSON struct {
	*workload.Metrics
	Provenance *param.Summary  `json:"provenance"`
	Intervals  []namedInterval `json:"intervals_80"`
}

func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// renderMatrixText writes the matrix for people, preceded by its provenance and interval
// factors.
func renderMatrixText(w io.Writer, m matrixResult, format string) error {
	if s := m.band.Provenance; s != nil {
		f := m.band.Factors()
		fmt.Fprintf(w, "Parameters' provenance: %s\n", s.Line())
		fmt.Fprintf(w, "80%% intervals: total tok/s x/ %.2f, per-request tok/s and TBT x/ %.2f, TTFT x/ %.2f\n\n",
			f[param.MetricThroughput], f[param.MetricTPOT], f[param.MetricTTFT])
	}
	return matrix.Render(w, m.pred, m.meas, format)
}
