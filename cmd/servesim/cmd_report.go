package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/calibration"
	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/planner"
	"github.com/servesim/servesim/report"
	"github.com/servesim/servesim/workload"
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
fitted parameters with their uncertainties and cross-validation errors. The page opens with the
answer: to the plan (--plan: its best configuration and the runner-up, with verdict, cost and
P(meet)) and the workload (--workload: throughput, latencies, objectives, cost) when given, then
the benchmark's peak throughput, cost, one user's speed, time to first token, capacity and
accuracy; it ends with the configuration simulated; its footer gives servesim's version.

--workload adds a run of that workload on the scenario's server (as 'servesim simulate': its
latencies, goodput under the --slo-* objectives, latency CDFs, KV cache and queue over time);
--plan adds a plan ('servesim plan --format json' output: its table and its cost figure).

Example:
  servesim fit --report fit.json --out params.toml
  servesim report --params params.toml --fit-report fit.json --out report.html
  servesim report --workload chat --rate 4 --slo-ttft-ms 2000 --plan plan.json --out report.html`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var ff figureFlags
			ff.register(fs)
			fitPath := fs.String("fit-report", "", "fit report `file` (the JSON of 'servesim fit --report') to summarise")
			wl := fs.String("workload", "", "also run this workload `file` or preset on the scenario's server and show it (latencies, goodput, figures)")
			var wo workloadOverrides
			wo.register(fs)
			var slo sloFlags
			slo.register(fs)
			planPath := fs.String("plan", "", "also show a plan: the JSON `file` of 'servesim plan --format json'")
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
				var spec *workload.Spec
				if *wl != "" {
					var err error
					if spec, err = loadWorkload(*wl); err != nil {
						return err
					}
					if err := wo.apply(fs, spec); err != nil {
						return err
					}
					if err := slo.apply(fs, &spec.SLO); err != nil {
						return err
					}
				} else if wo.used(fs) {
					return usagef("--rate and --requests change a --workload (file or preset)")
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
