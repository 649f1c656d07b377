package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/plots"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
)

// Cell names a decode cell to explain: a context label ("8K", "1019K") and a concurrency.
type Cell struct {
	Context     string
	Concurrency int
}

// SimulateOptions say what Simulate explains and how it reports progress.
type SimulateOptions struct {
	// Explain lists the cells whose step time is split into terms; nil: plots.ExplainCells of the
	// predicted matrix.
	Explain []Cell
	// NoExplain explains no cell.
	NoExplain bool
	// Progress, if set, is called as matrix cells finish (llmbench.Options.Progress).
	Progress func(done, total int, label string)
}

// Simulate is the figure pipeline: it runs the resolved scenario's benchmark matrix on srv (r's
// server), explains cells, and returns everything the report and the figures draw. meas (nil:
// none) is the measured matrix, measName where it came from. The caller adds the fit report.
func Simulate(r *scenario.Resolved, srv *sim.Server, meas *matrix.Matrix, measName string, o SimulateOptions) (*Input, error) {
	res, err := llmbench.RunMatrix(srv, &r.Scenario.Protocol, llmbench.Options{Seed: r.Scenario.Seed, Progress: o.Progress})
	if err != nil {
		return nil, err
	}
	in := &Input{Resolved: r, Predicted: res.Matrix, Measured: meas, MeasuredName: measName}
	if meas == nil {
		in.MeasuredName = ""
	}
	var capacity bytes.Buffer
	if err := llmbench.WriteCapacity(&capacity, srv, &r.Scenario.Protocol); err != nil {
		return nil, err
	}
	in.Capacity = capacity.String()
	in.CapacityData = CapacityOf(srv, &r.Scenario.Protocol)
	if o.NoExplain {
		return in, nil
	}
	cells := o.Explain
	if cells == nil {
		for _, k := range plots.ExplainCells(in.Predicted) {
			cells = append(cells, Cell{Context: k.Context, Concurrency: k.Concurrency})
		}
	}
	for _, c := range cells {
		tokens, err := contextTokens(r, in.Predicted, c.Context)
		if err == nil {
			var x *llmbench.Explanation
			if x, err = llmbench.ExplainAt(srv, &r.Scenario.Protocol, tokens, c.Concurrency); err == nil {
				in.Explain = append(in.Explain, x)
				continue
			}
		}
		// Named after the command-line flag that lists the cells.
		return nil, fmt.Errorf("--explain %s:%d: %w", c.Context, c.Concurrency, err)
	}
	return in, nil
}

// contextTokens is the prompt length behind a context label: the simulated matrix's, when it
// has the label (so "1019K" is the benchmark's trimmed context), else the label fitted to the
// server's max_model_len as the benchmark would.
func contextTokens(r *scenario.Resolved, pred *matrix.Matrix, label string) (int, error) {
	for _, c := range pred.Cells() {
		if strings.EqualFold(c.Context, label) && c.ContextTokens > 0 {
			return c.ContextTokens, nil
		}
	}
	return r.Scenario.Protocol.FitContext(label, r.Deployment.Engine.MaxModelLen)
}

// Figures is the figure set's input: the predicted and measured matrices and the explained
// cells.
func (in *Input) Figures() plots.Input {
	return plots.Input{Predicted: in.Predicted, Measured: in.Measured, Explain: in.Explain, Subject: Subject(in.Resolved)}
}

// Subject names a scenario's model and GPUs for figure titles: "GLM-5.3-Flash-NVFP4 on 4 x
// RTX-PRO-6000-Server".
func Subject(r *scenario.Resolved) string {
	if r == nil || r.Deployment == nil || r.Deployment.Model == nil {
		return ""
	}
	d := r.Deployment
	return fmt.Sprintf("%s on %d x %s", d.Model.Name, d.Hardware.Count, d.Hardware.GPU.Name)
}

// ParseCells reads the cells to explain, "CTX:C,..." such as 8K:1,32K:16 (nil for "" or
// "none"); an error names the --explain flag and the part.
func ParseCells(s string) ([]Cell, error) {
	if s == "" || s == "none" {
		return nil, nil
	}
	var cells []Cell
	for _, part := range strings.Split(s, ",") {
		ctx, conc, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("--explain %q: want CTX:C such as 8K:32", part)
		}
		if _, err := matrix.ParseContext(ctx); err != nil {
			return nil, fmt.Errorf("--explain %q: %v", part, err)
		}
		c, err := strconv.Atoi(strings.TrimSpace(conc))
		if err != nil || c <= 0 {
			return nil, fmt.Errorf("--explain %q: concurrency must be a positive integer", part)
		}
		cells = append(cells, Cell{Context: strings.TrimSpace(ctx), Concurrency: c})
	}
	return cells, nil
}
