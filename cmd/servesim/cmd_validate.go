package main

import (
	"bytes"
	"fmt"

	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/progress"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/validate"
	"github.com/servesim/servesim/vllmbench"
)

func validateCmd() *command {
	return &command{
		Name:  "validate",
		Args:  "[FILE...]",
		Short: "score predictions against measured runs: the shipped validation corpus, corpus CSV files or vllm bench serve result files",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var sf scenarioFlags
			sf.register(fs)
			var ff formatFlag[*validate.Report]
			ff.register(fs, validateFormats())
			var out outFlag
			out.register(fs, "the report")
			var a validate.Args
			fs.StringArrayVar(&a.Sources, "source", nil, "only rows of this corpus `source` (repeatable)")
			fs.StringVar(&a.Filter, "filter", "", "only rows that match `terms` (see above)")
			fs.IntVar(&a.Workers, "workers", 0, "simulations at once (`N`; default: all CPUs)")
			bf := registerVLLMBench(fs, true)
			return func(args []string) error {
				if err := ff.check(); err != nil {
					return err
				}
				if err := out.check(); err != nil {
					return err
				}
				a.Params, a.Uncalibrated, a.Seed, a.SeedSet, a.StepByStep = sf.Params, sf.Uncalibrated, sf.Seed, sf.SeedSet, sf.stepByStep
				var given []string
				fs.VisitAll(func(f *pflag.Flag) {
					if f.Changed {
						given = append(given, f.Name)
					}
				})
				rows, results, opt, err := a.Prepare(args, given)
				if err != nil {
					return err
				}
				start := time.Now()
				opt.Progress = validateProgress(newProgress(e, 2*time.Second))
				cases := validate.Map(rows, nil)
				if len(args) == 0 {
					fmt.Fprintf(e.info(), "servesim validate: %d rows (%d to simulate) from the shipped corpus\n", len(rows), validate.CountExpressed(cases))
				} else {
					fmt.Fprintf(e.info(), "servesim validate: %d rows (%d to simulate) from %d corpus file(s), %d result file(s)\n",
						len(rows), validate.CountExpressed(cases), len(args)-len(results), len(results))
				}
				outs := validate.Run(cases, opt)
				if len(results) > 0 && a.ResultsSelected() {
					prepared, err := prepareResults(e, &sf, bf, results)
					if err != nil {
						return err
					}
					outs = append(outs, validate.RunPrepared(prepared, opt)...)
				}
				rep := validate.NewReport(outs)
				n, total := rep.Expressed()
				fmt.Fprintf(e.info(), "servesim validate: %d of %d rows expressed, %.1f s\n", n, total, time.Since(start).Seconds())
				var buf bytes.Buffer
				if err := ff.write(&buf, rep); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}

// prepareResults reads result files (validate.PrepareResults), each on the server the scenario
// flags give.
func prepareResults(e *env, sf *scenarioFlags, bf *vllmbench.Flags, paths []string) ([]*validate.Prepared, error) {
	return validate.PrepareResults(paths, sf.Args, bf, func(a *scenario.Args) (*scenario.Resolved, *sim.Server, error) {
		f := *sf
		f.Args = *a
		return f.loadServer(e.stderr, e.info())
	})
}

// validateProgress reports simulations done through the shared reporter (redrawn in place on a
// terminal, plain lines elsewhere, nothing with --quiet).
func validateProgress(p *progress.Reporter) func(done, total int, label string) {
	return func(done, total int, label string) {
		p.Update("simulations", done, total, label)
		if done == total {
			p.Finish()
		}
	}
}
