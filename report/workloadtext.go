package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/servesim/servesim/describe"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/plots"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/vllmbench"
	"github.com/servesim/servesim/workload"
)

// WorkloadResult is a simulated workload with what it ran on, and the vllm bench serve result
// it is compared with (nil: none).
type WorkloadResult struct {
	Spec     *workload.Spec
	Resolved *scenario.Resolved
	Metrics  *workload.Metrics
	Measured *vllmbench.Result
}

// WriteText writes the run as 'servesim simulate' prints it: the workload, server, parameters
// and their provenance, the 80 % intervals, the metrics, and the comparison with the measured
// run when there is one.
func (x WorkloadResult) WriteText(w io.Writer) error {
	r := x.Resolved
	fmt.Fprintf(w, "Workload     %s: %s, seed %d\n", x.Spec.Name, x.Spec.Describe(), x.Metrics.Seed)
	fmt.Fprintf(w, "Server       %s\n", describe.Deployment(r.Deployment))
	fmt.Fprintf(w, "Parameters   %s (%s)\n", r.ParamsFrom, r.Source)
	fmt.Fprintf(w, "Provenance   %s\n", r.Summary.Line())
	param.WriteIntervals(w, "80% interval ", x.Metrics.Intervals80(&r.Summary))
	if x.Measured != nil {
		fmt.Fprintf(w, "Measured     %s: %s\n", x.Measured.Name, x.Measured.Summary())
	}
	if err := workload.WriteTable(w, x.Metrics); err != nil || x.Measured == nil {
		return err
	}
	fmt.Fprintln(w)
	return vllmbench.Compare(x.Metrics, x.Measured).WriteTable(w)
}

// WriteCSV writes the metrics, or the comparison with the measured run.
func (x WorkloadResult) WriteCSV(w io.Writer) error {
	if x.Measured != nil {
		return vllmbench.Compare(x.Metrics, x.Measured).WriteCSV(w)
	}
	return workload.WriteCSV(w, x.Metrics)
}

// simulateJSON is the JSON of a run: its metrics, the parameters' provenance and the intervals.
type simulateJSON struct {
	*workload.Metrics
	Provenance *param.Summary        `json:"provenance"`
	Intervals  []param.NamedInterval `json:"intervals_80"`
}

// WriteJSON writes the metrics with the provenance and intervals, or the comparison with the
// measured run.
func (x WorkloadResult) WriteJSON(w io.Writer) error {
	if x.Measured != nil {
		return vllmbench.WriteJSON(w, x.Metrics, vllmbench.Compare(x.Metrics, x.Measured))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(simulateJSON{x.Metrics, &x.Resolved.Summary, x.Metrics.Intervals80(&x.Resolved.Summary)})
}

// MeasuredRunSection is a vllm bench result file's run (res), simulated on spec with the metrics
// m, as a report section: the comparison table and the latency distributions predicted and
// measured (a note goes to info when the file has no per-request detail); and the run for the
// report's opening.
func MeasuredRunSection(r *scenario.Resolved, spec *workload.Spec, m *workload.Metrics, res *vllmbench.Result, info io.Writer) (*Section, *WorkloadRun, error) {
	var tb bytes.Buffer
	if err := (WorkloadResult{Spec: spec, Resolved: r, Metrics: m, Measured: res}).WriteText(&tb); err != nil {
		return nil, nil, err
	}
	charts := []plots.Chart{}
	if ttft, tpot, itl, e2e, ok := res.Dists(); ok {
		charts = plots.MeasuredRunCharts(m, ttft, tpot, itl, e2e, Subject(r))
	} else {
		fmt.Fprintf(info, "servesim: note: %s has no per-request detail (--save-detailed): no distributions to draw, the table only\n", res.Name)
	}
	return &Section{ID: "measured-run", Title: "Measured run", Note: "servesim simulate --measured " + res.Name + ": the run the result file records, simulated and compared.",
		Text: tb.String(), Charts: charts}, &WorkloadRun{Spec: spec, Metrics: m, Measured: res}, nil
}
