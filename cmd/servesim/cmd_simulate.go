package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/plots"
	"github.com/servesim/servesim/report"
	"github.com/servesim/servesim/validate"
	"github.com/servesim/servesim/vllmbench"
	"github.com/servesim/servesim/workload"
)

func simulateCmd() *command {
	return &command{
		Name:   "simulate",
		NoArgs: true,
		Short:  "run a workload (closed loop, Poisson/gamma/ramp arrivals, trace replay, benchmark cell) and measure it",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var sf scenarioFlags
			sf.register(fs)
			wl := fs.String("workload", "", "workload TOML `file`, trace file (.csv, .jsonl), or preset name")
			var wo workload.Overrides
			registerOverrides(fs, &wo, "--workload")
			bf := registerVLLMBench(fs, false)
			measured := fs.String("measured", "", "a vllm bench serve --save-result JSON `file`: simulate its run and show predicted vs measured")
			var format formatFlag[report.WorkloadResult]
			format.register(fs, workloadFormats())
			var slo workload.SLOArgs
			registerSLO(fs, &slo)
			series := fs.String("series", "", "also write the KV-usage samples (t_s,kv_usage,running,waiting) as CSV to `file`")
			plotDir := fs.String("plot", "", "also draw the run's figures (latency CDFs with the objectives, KV cache and queue over time) as PNG and SVG into `directory`")
			var out outFlag
			out.register(fs, "the results")
			return func(args []string) error {
				if err := format.check(); err != nil {
					return err
				}
				if err := out.check(); err != nil {
					return err
				}
				if *plotDir != "" {
					// Before the work: a --plot that cannot take figures fails now, not after the run.
					if err := fsutil.EnsureDir(*plotDir); err != nil {
						return fmt.Errorf("--plot: %w", err)
					}
				}
				if *series != "" {
					if err := fsutil.CheckWritable(*series); err != nil {
						return err
					}
				}
				if err := bf.Check(); err != nil {
					return err
				}
				spec, res, err := bf.Simulated(*wl, *measured, &slo, &wo, sf.ReadyTimeoutSet, e.info())
				if err != nil {
					return err
				}
				r, srv, err := sf.loadServer(e.stderr, e.info())
				if err != nil {
					return err
				}
				if res != nil {
					if err := validate.CheckResult(r, res); err != nil {
						return err
					}
				}
				vllmbench.NoteModelLen(e.stderr, spec, srv.Deployment.Engine.MaxModelLen)
				fmt.Fprintf(e.info(), "servesim: %s; parameters: %s (%s)\n", spec.Describe(), r.ParamsFrom, r.Source)
				start := time.Now()
				pr := newProgress(e, 2*time.Second)
				m, err := workload.Run(srv, spec, workload.Options{Seed: r.Scenario.Seed, Progress: func(done, total int) { pr.Update("requests", done, total) }})
				pr.Finish()
				if err != nil {
					return err
				}
				fmt.Fprintf(e.info(), "servesim: %d engine steps, %.0f s of server time in %.2f s\n", m.Steps, m.SimTimeS, time.Since(start).Seconds())
				var buf bytes.Buffer
				if err := format.write(&buf, report.WorkloadResult{Spec: spec, Resolved: r, Metrics: m, Measured: res}); err != nil {
					return err
				}
				if *plotDir != "" {
					subject := report.Subject(r)
					if spec.Name != "" {
						subject += ", " + spec.Name
					}
					figs := plots.Draw(plots.WorkloadCharts(m, subject))
					if err := drawFigures(e, *plotDir, figs); err != nil {
						return err
					}
				}
				if *series != "" {
					var sb bytes.Buffer
					if err := workload.WriteSeriesCSV(&sb, m); err != nil {
						return err
					}
					if err := outputs.WriteFile(*series, sb.Bytes()); err != nil {
						return err
					}
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
