package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/llmbench"
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

--format csv columns: phase,context,context_tokens,concurrency,status,total_tok_s,
per_request_tok_s,ttft_ms,tbt_ms,avg_active,completed,output_tokens,measured_s (predicted values;
the file reads back with --measured), then the 80 % prediction intervals total_tok_s_lo80,
total_tok_s_hi80, ... tbt_ms_hi80 (they widen with how the parameters relate to measurements:
calibrated, transferred or priors), then param_source (calibrated, transferred or prior).
With --compare: phase,context,context_tokens,concurrency,pred_status,meas_status, then for total,
per_request, ttft and tbt the pred_*, meas_* and err_*_pct columns (signed error in percent), then
the predicted intervals and param_source; one row per cell of either matrix, measured and error
fields blank where there is no measurement.

--format json has one schema with or without measurements: {"parameters": {"source", "from"},
"predicted": matrix, "measured": matrix or null, "summary": the errors or null, "only_predicted":
[...], "only_measured": [...]}; the predicted matrix's info.intervals_80 gives the provenance and
each metric's interval factor; --measured reads such a file as its predicted matrix.

Example:
  servesim matrix
  servesim matrix --config llama.toml --measured my-run.txt
  servesim matrix --vllm-cmd "vllm serve Qwen/Qwen3-30B-A3B --tensor-parallel-size 2" --gpu H100 --measured none --format csv -o pred.csv`,
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
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if err := format.check(); err != nil {
					return err
				}
				if err := out.check(); err != nil {
					return err
				}
				if *compare && format.value != "csv" {
					return usagef("--compare: only with --format csv (the other formats compare whenever there are measurements)")
				}
				r, err := sf.load(e.stderr, e.info())
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
