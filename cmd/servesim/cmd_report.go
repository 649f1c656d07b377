package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/calibration"
	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/planner"
	"github.com/servesim/servesim/report"
	"github.com/servesim/servesim/workload"
)

func reportCmd() *command {
	return &command{
		Name:   "report",
		NoArgs: true,
		Short:  "write one self-contained HTML report: scenario, capacity, matrix tables, every figure, fit summary",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var ff figureFlags
			ff.register(fs)
			fitPath := fs.String("fit-report", "", "fit report `file` (the JSON of 'servesim fit --report') to summarise")
			wl := fs.String("workload", "", "also run this workload `file` or preset on the scenario's server and show it (latencies, goodput, figures)")
			var wo workload.Overrides
			registerOverrides(fs, &wo, "--workload")
			var slo workload.SLOArgs
			registerSLO(fs, &slo)
			planPath := fs.String("plan", "", "also show a plan: the JSON `file` of 'servesim plan --format json'")
			var out outFlag
			out.register(fs, "the HTML report")
			return func(args []string) error {
				if err := ff.Check(); err != nil {
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
				var spec *workload.Spec
				if *wl != "" {
					var err error
					if spec, err = workload.LoadArg("--workload", *wl); err != nil {
						return err
					}
					if err := wo.Apply(fs.Changed, spec); err != nil {
						return err
					}
					if err := slo.Apply(fs.Changed, &spec.SLO); err != nil {
						return err
					}
				} else if wo.Used(fs.Changed) {
					return usage.Errorf("--rate and --requests change a --workload (file or preset)")
				}
				var plan *planner.Plan
				if *planPath != "" {
					data, err := fsutil.ReadFile(*planPath, fsutil.MaxPlanBytes)
					if err != nil {
						return fmt.Errorf("--plan: %w", err)
					}
					if plan, err = planner.ReadJSON(bytes.NewReader(data), *planPath); err != nil {
						return fmt.Errorf("--plan: %w", err)
					}
				}
				in, err := ff.simulate(e)
				if err != nil {
					return err
				}
				in.Fit, in.FitName = fit, *fitPath
				if spec != nil {
					if err := in.AddWorkload(spec, ff.sf.stepByStep); err != nil {
						return err
					}
				}
				if plan != nil {
					if err := in.AddPlan(plan, *planPath); err != nil {
						return err
					}
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
