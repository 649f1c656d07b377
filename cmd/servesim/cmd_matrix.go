package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/bench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/sim"
)

func matrixCmd() *command {
	return &command{
		Name:  "matrix",
		Short: "simulate the benchmark matrix (prefill rows and decode cells) and compare with measurements",
		Long: `Runs the scenario's benchmark protocol (llm-inference-bench by default) against the simulated
server and prints the matrix in the benchmark's layout. For the embedded seed scenario the measured
seed matrix is shown side by side with every prediction, with the error and a summary of status
matches and mean/median absolute percentage errors. Use --measured FILE to compare with your own
run (the benchmark's published text page, servesim CSV, or JSON), or --measured none to skip it.

CSV columns: phase,context,context_tokens,concurrency,status,total_tok_s,per_request_tok_s,
ttft_ms,tbt_ms,avg_active,completed,output_tokens,measured_s (predicted values), then the 80 %
prediction intervals total_tok_s_lo80,total_tok_s_hi80, ... tbt_ms_hi80 (they widen with how
the parameters relate to measurements: calibrated, transferred or priors; the JSON's
info.intervals_80 gives the provenance and each metric's factor).`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var sf scenarioFlags
			sf.register(fs)
			var format formatFlag[matrixResult]
			format.register(fs, matrixFormats())
			measured := fs.String("measured", "", "measured matrix `file` to compare with (default: the embedded seed for the seed scenario; 'none' to skip)")
			var out outFlag
			out.register(fs, "the matrix")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if err := format.check(); err != nil {
					return err
				}
				if err := out.check(); err != nil {
					return err
				}
				r, err := sf.load(e.stderr)
				if err != nil {
					return err
				}
				meas, _, err := loadMeasured(*measured, sf.isSeed(), r)
				if err != nil {
					return err
				}
				srv, err := sim.NewServer(r.Deployment, r.Params)
				if err != nil {
					return err
				}
				srv.StepByStep = sf.stepByStep
				fmt.Fprintf(e.stderr, "servesim: %s; parameters: %s (%s)\n", r.Scenario.Name, r.ParamsFrom, r.Source)
				start := time.Now()
				res, err := bench.RunMatrix(srv, &r.Scenario.Protocol, bench.Options{Seed: r.Scenario.Seed, Progress: progressPrinter(e, start)})
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "servesim: simulated %d cells, %d engine steps, %.0f s of server time in %.2f s\n",
					len(res.Matrix.Prefill)+len(res.Matrix.Decode), res.Steps, res.SimEnd.Seconds(), time.Since(start).Seconds())
				var buf bytes.Buffer
				band := matrix.Band{Provenance: &r.Summary}
				res.Matrix.Info.Intervals = band.Info()
				if err := format.write(&buf, matrixResult{res.Matrix, meas, band}); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}

// progressPrinter reports progress on stderr once a run has taken more than two seconds.
func progressPrinter(e *env, start time.Time) func(done, total int, label string) {
	last := start
	return func(done, total int, label string) {
		now := time.Now()
		if now.Sub(start) < 2*time.Second || (now.Sub(last) < time.Second && done < total) {
			return
		}
		last = now
		fmt.Fprintf(e.stderr, "\r  %d/%d cells (%s)   ", done, total, label)
		if done == total {
			fmt.Fprintln(e.stderr)
		}
	}
}
