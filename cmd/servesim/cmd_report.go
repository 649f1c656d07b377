package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/report"
)

func reportCmd() *command {
	return &command{
		Name:   "report",
		NoArgs: true,
		Short:  "write one self-contained HTML report: scenario, capacity, matrix tables, every figure, fit summary",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var ff figureFlags
			ff.register(fs)
			var x report.Extras
			fs.StringVar(&x.FitPath, "fit-report", "", "fit report `file` (the JSON of 'servesim fit --report') to summarise")
			fs.StringVar(&x.Workload, "workload", "", "also run this workload `file` or preset on the scenario's server and show it (latencies, goodput, figures)")
			registerOverrides(fs, &x.Overrides, "--workload")
			registerSLO(fs, &x.SLO)
			fs.StringVar(&x.PlanPath, "plan", "", "also show a plan: the JSON `file` of 'servesim plan --format json'")
			var out outFlag
			out.register(fs, "the HTML report")
			return func(args []string) error {
				if err := ff.Check(); err != nil {
					return err
				}
				if err := out.check(); err != nil {
					return err
				}
				if err := x.Load(fs.Changed); err != nil {
					return err
				}
				in, err := ff.simulate(e)
				if err != nil {
					return err
				}
				if err := x.AddTo(in, ff.sf.stepByStep); err != nil {
					return err
				}
				start := time.Now()
				var buf bytes.Buffer
				if err := report.Write(&buf, in); err != nil {
					return err
				}
				if err := out.write(e.stdout, &buf); err != nil {
					return err
				}
				if out.path != "" {
					fmt.Fprintf(e.info(), "servesim: wrote %s (%s bytes) in %.2f s\n", out.path, groupThousands(buf.Len()), time.Since(start).Seconds())
				}
				return nil
			}
		},
	}
}
