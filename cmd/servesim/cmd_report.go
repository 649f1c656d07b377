package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/calibration"
	"github.com/servesim/servesim/report"
)

func reportCmd() *command {
	return &command{
		Name:  "report",
		Short: "write one self-contained HTML report: scenario, capacity, matrix tables, every figure, fit summary",
		Long: `Simulates the scenario's benchmark matrix and writes a single HTML file that needs nothing
else to be read (inline CSS and SVG figures, no JavaScript, no network): the scenario (hardware,
model, engine flags, protocol, where the parameters come from), the capacity breakdown, the
matrix as tables (predicted, measured and error, coloured by status and error size), every
figure of 'servesim plot', the step-time terms of explained cells, and with --fit-report the
fitted parameters with their uncertainties and cross-validation errors.

Example:
  servesim fit --report fit.json --out params.toml
  servesim report --params params.toml --fit-report fit.json --out report.html`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var ff figureFlags
			ff.register(fs)
			fitPath := fs.String("fit-report", "", "fit report `file` (the JSON of 'servesim fit --report') to summarise")
			var out outFlag
			out.register(fs, "the HTML report")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if err := ff.check(); err != nil {
					return err
				}
				if err := out.check(); err != nil {
					return err
				}
				var fit *calibration.Report
				if *fitPath != "" {
					var err error
					if fit, err = report.LoadFit(*fitPath); err != nil {
						return fmt.Errorf("--fit-report: %w", err)
					}
				}
				in, err := ff.simulate(e)
				if err != nil {
					return err
				}
				in.Fit, in.FitName = fit, *fitPath
				start := time.Now()
				var buf bytes.Buffer
				if err := report.Write(&buf, in); err != nil {
					return err
				}
				if err := out.write(e.stdout, &buf); err != nil {
					return err
				}
				if out.path != "" {
					fmt.Fprintf(e.stderr, "servesim: wrote %s (%s bytes) in %.2f s\n", out.path, groupThousands(buf.Len()), time.Since(start).Seconds())
				}
				return nil
			}
		},
	}
}
