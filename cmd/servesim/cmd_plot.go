package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/numfmt"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/plots"
	"github.com/servesim/servesim/report"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/validate"
	"github.com/servesim/servesim/vllmbench"
	"github.com/servesim/servesim/workload"
)

func plotCmd() *command {
	return &command{
		Name:  "plot",
		Short: "draw predicted vs measured figures (PNG at 300 dpi and SVG) into a directory",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var ff figureFlags
			ff.register(fs)
			out := fs.StringP("out", "o", "", "output `directory` (created if needed; required)")
			format := fs.String("format", "png,svg", "image `formats`: png, svg or png,svg")
			return func(args []string) error {
				if len(args) > 0 {
					return usage.Errorf("unexpected argument %q", args[0])
				}
				if *out == "" {
					return usage.Errorf("--out DIR is required")
				}
				formats, err := plots.ParseFormats(*format)
				if err != nil {
					return usage.Errorf("--format: %v", err)
				}
				if err := ff.check(); err != nil {
					return err
				}
				if err := fsutil.EnsureDir(*out); err != nil {
					return err
				}
				in, err := ff.simulate(e)
				if err != nil {
					return err
				}
				start := time.Now()
				figs := plots.Figures(in.Figures())
				for _, sec := range in.Sections {
					figs = append(figs, plots.Draw(sec.Charts)...)
				}
				files, err := writeFigures(*out, figs, formats)
				if err != nil {
					return err
				}
				width := 0
				for _, w := range files {
					width = max(width, len(w.Path))
				}
				for _, w := range files {
					if _, err := fmt.Fprintf(e.stdout, "%-*s %11s bytes\n", width, w.Path, groupThousands(w.Size)); err != nil {
						return err
					}
				}
				fmt.Fprintf(e.info(), "servesim: drew %d figures (%d files) in %.2f s\n", len(figs), len(figs)*len(formats), time.Since(start).Seconds())
				return nil
			}
		},
	}
}

// writeFigures writes the figures into dir (plots.WriteFiles, through the run's outputs: an
// interrupt removes the unfinished ones).
func writeFigures(dir string, figs []*plots.Figure, formats []plots.Format) ([]plots.File, error) {
	return plots.WriteFiles(outputs.NewBatch(), dir, figs, formats)
}

// drawFigures writes the figures as PNG and SVG into dir and lists them on info.
func drawFigures(e *env, dir string, figs []*plots.Figure) error {
	files, err := writeFigures(dir, figs, []plots.Format{plots.PNG, plots.SVG})
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(e.info(), "servesim: wrote %s (%s bytes)\n", f.Path, groupThousands(f.Size))
	}
	return nil
}

// figureFlags are the flags of the commands that draw a scenario's results (plot, report).
type figureFlags struct {
	sf       scenarioFlags
	measured string
	explain  string
	cells    []report.Cell // parsed --explain (nil: defaults)
}

func (f *figureFlags) register(fs *pflag.FlagSet) {
	f.sf.matrix = true
	f.sf.register(fs)
	fs.StringVar(&f.measured, "measured", "", "measured matrix `file` to compare with (default: the embedded seed for the seed scenario; 'none' to skip), or a vllm bench serve --save-result JSON file")
	fs.StringVar(&f.explain, "explain", "", "cells whose step time to split into terms, as `CTX:C,...` (e.g. 8K:1,8K:32,128K:16); default: a few across the matrix; 'none' to skip")
}

// check parses --explain (a usage error when malformed).
func (f *figureFlags) check() error {
	cells, err := report.ParseCells(f.explain)
	if err != nil {
		return usage.Wrap(err)
	}
	f.cells = cells
	return nil
}

// simulate resolves the scenario, loads the measurements and runs the figure pipeline
// (report.Simulate).
func (f *figureFlags) simulate(e *env) (*report.Input, error) {
	r, err := f.sf.load(e.stderr, e.info())
	if err != nil {
		return nil, err
	}
	// A vllm bench serve result file is a run, not a matrix: it is simulated beside the matrix
	// (which keeps its default measurement) and drawn predicted against measured.
	matrixPath := f.measured
	var res *vllmbench.Result
	if f.measured != "" && f.measured != "none" {
		rs, err := vllmbench.ReadMeasured([]string{f.measured})
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
	meas, measName, err := r.LoadMeasured(matrixPath, f.sf.isSeed())
	if err != nil {
		return nil, err
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		return nil, err
	}
	srv.StepByStep = f.sf.stepByStep
	fmt.Fprintf(e.info(), "servesim: %s; parameters: %s (%s)\n", r.Scenario.Name, r.ParamsFrom, r.Source)
	start := time.Now()
	prog, finish := progressPrinter(e)
	in, err := report.Simulate(r, srv, meas, measName, report.SimulateOptions{Explain: f.cells, NoExplain: f.explain == "none",
		Progress: prog})
	finish()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(e.info(), "servesim: simulated %d cells in %.2f s\n", len(in.Predicted.Prefill)+len(in.Predicted.Decode), time.Since(start).Seconds())
	if res != nil {
		sec, run, err := measuredRunSection(e, r, srv, res)
		if err != nil {
			return nil, err
		}
		in.Sections = append(in.Sections, *sec)
		// The report's opening answers the measured run (a --workload given too takes its place).
		in.Workload = run
	}
	return in, nil
}

// measuredRunSection simulates a vllm bench result file's run on srv (as simulate --measured
// does) and returns it as a report section: the comparison table and the latency distributions
// predicted and measured.
func measuredRunSection(e *env, r *scenario.Resolved, srv *sim.Server, res *vllmbench.Result) (*report.Section, *report.WorkloadRun, error) {
	spec, cmd, notes, err := (&vllmbench.Flags{}).ResultWorkload(res, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("--measured: %w", err)
	}
	vllmbench.PrintNotes(e.info(), "servesim: ", cmd, notes)
	m, err := workload.Run(srv, spec, workload.Options{Seed: r.Scenario.Seed})
	if err != nil {
		return nil, nil, fmt.Errorf("--measured: %w", err)
	}
	return report.MeasuredRunSection(r, spec, m, res, e.info())
}

// groupThousands writes n with comma separators.
func groupThousands(n int) string { return numfmt.Commas(strconv.Itoa(n)) }
