package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/sim"
)

func matrixCmd() *command {
	return &command{
		Name:   "matrix",
		NoArgs: true,
		Short:  "simulate the benchmark matrix (prefill rows and decode cells) and compare with measurements",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			sf := scenarioFlags{matrix: true}
			sf.register(fs)
			var format formatFlag[matrixResult]
			format.register(fs, matrixFormats())
			measured := fs.String("measured", "", "measured matrix `file` to compare with (default: the embedded seed for the seed scenario; 'none' to skip)")
			compare := fs.Bool("compare", false, "with --format csv: add the measured values and the errors (blank without measurements)")
			var out outFlag
			out.register(fs, "the matrix")
			return func(args []string) error {
				if err := format.check(); err != nil {
					return err
				}
				if err := out.check(); err != nil {
					return err
				}
				if *compare && format.value != "csv" {
					return usage.Errorf("--compare: only with --format csv (the other formats compare whenever there are measurements)")
				}
				r, err := sf.load(e.stderr, e.info())
				if err != nil {
					return err
				}
				meas, _, err := r.LoadMeasured(*measured, sf.isSeed())
				if err != nil {
					return err
				}
				srv, err := sim.NewServer(r.Deployment, r.Params)
				if err != nil {
					return err
				}
				srv.StepByStep = sf.stepByStep
				fmt.Fprintf(e.info(), "servesim: %s; parameters: %s (%s)\n", r.Scenario.Name, r.ParamsFrom, r.Source)
				start := time.Now()
				prog, finish := progressPrinter(e)
				res, err := llmbench.RunMatrix(srv, &r.Scenario.Protocol, llmbench.Options{Seed: r.Scenario.Seed, Progress: prog})
				finish()
				if err != nil {
					return err
				}
				fmt.Fprintf(e.info(), "servesim: simulated %d cells, %d engine steps, %.0f s of server time in %.2f s\n",
					len(res.Matrix.Prefill)+len(res.Matrix.Decode), res.Steps, res.SimEnd.Seconds(), time.Since(start).Seconds())
				var buf bytes.Buffer
				band := matrix.Band{Provenance: &r.Summary}
				res.Matrix.Info.Intervals = band.Info()
				if err := format.write(&buf, matrixResult{pred: res.Matrix, meas: meas, band: band, compare: *compare,
					params: matrix.Parameters{Source: string(r.Source), From: r.ParamsFrom}}); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}

// progressPrinter reports a matrix run's cells on stderr once it has taken more than two seconds
// (plain lines off a terminal, nothing with --quiet); finish ends its line.
func progressPrinter(e *env) (func(done, total int, label string), func()) {
	p := newProgress(e, 2*time.Second)
	return func(done, total int, label string) { p.Update("cells", done, total, label) }, p.Finish
}
