package main

import (
	"bytes"
	"fmt"

	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/progress"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
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
			sources := fs.StringArray("source", nil, "only rows of this corpus `source` (repeatable)")
			filter := fs.String("filter", "", "only rows that match `terms` (see above)")
			workers := fs.Int("workers", 0, "simulations at once (`N`; default: all CPUs)")
			bf := registerVLLMBench(fs, true)
			return func(args []string) error {
				if err := ff.check(); err != nil {
					return err
				}
				if err := out.check(); err != nil {
					return err
				}
				if *workers < 0 {
					return usage.Errorf("--workers %d: must be >= 0", *workers)
				}
				flt, err := validate.ParseFilter(*filter)
				if err != nil {
					return usage.Errorf("--filter: %v", err)
				}
				if sf.Params != "" && sf.Uncalibrated {
					return usage.Errorf("--params and --uncalibrated contradict each other")
				}
				pol, err := scenario.NewParamsPolicy(scenario.ResolveOptions{ParamsFile: sf.Params, Uncalibrated: sf.Uncalibrated}, nil)
				if err != nil {
					return err
				}
				choose := func(d *deploy.Deployment) (param.Values, string, error) {
					c, err := pol.Choose(d)
					if err != nil {
						return param.Values{}, "", err
					}
					return c.Params, fmt.Sprintf("%s (%s)", c.From, c.Source), nil
				}
				var results, csvs []string
				for _, p := range args {
					if strings.EqualFold(strings.TrimSpace(p[max(0, len(p)-5):]), ".json") {
						results = append(results, p)
					} else {
						csvs = append(csvs, p)
					}
				}
				var rows []validate.Row
				if len(args) == 0 || len(csvs) > 0 {
					if rows, err = validate.SelectRows(csvs, flt, *sources); err != nil {
						return err
					}
				}
				if len(results) == 0 {
					// The corpus rows carry their own server and workload: flags that describe
					// a server or a benchmark only apply to result files.
					for _, name := range serverFlags(fs) {
						return usage.Errorf("--%s applies only to vllm bench result files (.json), which do not record the server; corpus rows carry their own: leave it out", name)
					}
				}
				start := time.Now()
				provenance := func(d *deploy.Deployment) param.Summary {
					c, _ := pol.Choose(d)
					return c.Summary
				}
				opt := validate.Options{Params: choose, Provenance: provenance, Workers: *workers, Progress: validateProgress(newProgress(e, 2*time.Second)), StepByStep: sf.stepByStep}
				if sf.SeedSet {
					opt.Seed = sf.Seed
				}
				cases := validate.Map(rows, nil)
				if len(args) == 0 {
					fmt.Fprintf(e.info(), "servesim validate: %d rows (%d to simulate) from the shipped corpus\n", len(rows), validate.CountExpressed(cases))
				} else {
					fmt.Fprintf(e.info(), "servesim validate: %d rows (%d to simulate) from %d corpus file(s), %d result file(s)\n",
						len(rows), validate.CountExpressed(cases), len(args)-len(results), len(results))
				}
				outs := validate.Run(cases, opt)
				if len(results) > 0 && (len(*sources) == 0 || validate.SourceSelected(*sources, validate.ResultSource)) {
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

func serverFlags(fs *pflag.FlagSet) []string {
	var out []string
	fs.VisitAll(func(f *pflag.Flag) {
		switch f.Name {
		case "params", "uncalibrated", "seed", "step-by-step", "workers", "filter", "source", "format", "out", "quiet", "help":
			return
		}
		if f.Changed {
			out = append(out, f.Name)
		}
	})
	return out
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
