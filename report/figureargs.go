package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/validate"
	"github.com/servesim/servesim/vllmbench"
	"github.com/servesim/servesim/workload"
)

// FigureArgs are the flags of the commands that draw a scenario's results (plot, report): the
// measurements to compare with (--measured: a matrix, 'none', or a vllm bench result file) and
// the cells whose step time to split (--explain, "CTX:C" each; 'none' for no cell).
type FigureArgs struct {
	Measured string
	Explain  []string
	cells    []Cell
}

// Check parses --explain (a usage error when malformed).
func (a *FigureArgs) Check() error {
	cells, err := ParseCells(strings.Join(a.Explain, ","))
	if err != nil {
		return usage.Wrap(err)
	}
	a.cells = cells
	return nil
}

// Cells are the parsed --explain cells (nil: the defaults).
func (a *FigureArgs) Cells() []Cell { return a.cells }

// Simulate loads the measurements and runs the figure pipeline (Simulate) for r on a new server
// (stepByStep: the reference mode); seed says r is the embedded seed scenario, whose measured
// matrix is the default. A vllm bench result file is a run, not a matrix: it is simulated beside
// the matrix (which keeps its default measurement), drawn predicted against measured, and
// answered at the report's opening. Informational lines go to info; progress gets the matrix's
// cells and finish ends its line.
func (a *FigureArgs) Simulate(r *scenario.Resolved, stepByStep, seed bool, info io.Writer, progress func(done, total int, label string), finish func()) (*Input, error) {
	matrixPath := a.Measured
	var res *vllmbench.Result
	if a.Measured != "" && a.Measured != "none" {
		rs, err := vllmbench.ReadMeasured([]string{a.Measured})
		if err != nil {
			return nil, err
		}
		if len(rs) == 1 {
			res, matrixPath = rs[0], ""
			if err := validate.CheckResult(r, res); err != nil {
				return nil, err
			}
		}
	}
	meas, measName, err := r.LoadMeasured(matrixPath, seed)
	if err != nil {
		return nil, err
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		return nil, err
	}
	srv.StepByStep = stepByStep
	fmt.Fprintf(info, "servesim: %s; parameters: %s (%s)\n", r.Scenario.Name, r.ParamsFrom, r.Source)
	start := time.Now()
	in, err := Simulate(r, srv, meas, measName, SimulateOptions{Explain: a.cells, NoExplain: strings.Join(a.Explain, ",") == "none", Progress: progress})
	finish()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(info, "servesim: simulated %d cells in %.2f s\n", len(in.Predicted.Prefill)+len(in.Predicted.Decode), time.Since(start).Seconds())
	if res == nil {
		return in, nil
	}
	spec, cmd, notes, err := (&vllmbench.Flags{}).ResultWorkload(res, 0)
	if err != nil {
		return nil, fmt.Errorf("--measured: %w", err)
	}
	vllmbench.PrintNotes(info, "servesim: ", cmd, notes)
	m, err := workload.Run(srv, spec, workload.Options{Seed: r.Scenario.Seed})
	if err != nil {
		return nil, fmt.Errorf("--measured: %w", err)
	}
	sec, run, err := MeasuredRunSection(r, spec, m, res, info)
	if err != nil {
		return nil, err
	}
	in.Sections = append(in.Sections, *sec)
	// The report's opening answers the measured run (a --workload given too takes its place).
	in.Workload = run
	return in, nil
}
