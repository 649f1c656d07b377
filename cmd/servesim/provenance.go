package main

import (
	"encoding/json"
	"fmt"
	"io"

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

// simulateJSON is simulate's JSON: the metrics as workload.WriteJSON writes them, with the
// provenance and the intervals after them.
type simulateJSON struct {
	*workload.Metrics
	Provenance *param.Summary        `json:"provenance"`
	Intervals  []param.NamedInterval `json:"intervals_80"`
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
