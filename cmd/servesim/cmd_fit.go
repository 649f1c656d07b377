package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/calibration"
	"github.com/servesim/servesim/internal/progress"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/validate"
	"github.com/servesim/servesim/vllmbench"
)

func fitCmd() *command {
	return &command{
		Name:  "fit",
		Short: "calibrate the named parameters to a measured matrix; cross-validate; write params and a report",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			sf := scenarioFlags{matrix: true}
			sf.register(fs)
			var o calibration.Options
			fs.StringArrayVar(&o.Measured, "measured", nil, "measured matrix `file` (default: the embedded seed for the seed scenario), or vllm bench serve --save-result JSON files (repeat the flag)")
			bf := registerVLLMBench(fs, true)
			fs.IntVar(&o.KVTokens, "kv-tokens", 0, "measured kv_cache_size_tokens `N` (vLLM's \"GPU KV cache size: N tokens\"); pins the memory terms")
			fs.StringVar(&o.Train, "train", "", "training cells `filter`; the others are test cells (default: all)")
			fs.StringArrayVar(&o.Exclude, "exclude", nil, "measured cells the fit neither trains on nor judges, a `filter` like --train's (repeatable; 'none' for no exclusion); default: the scenario's [fit] exclude")
			fs.StringVar(&o.CV, "cv", "", "cross-validate: no value for the standard splits of a matrix fit; `loso` (leave one source out), logo (leave one GPU out) or lofo (leave one model family out) for a multi-source fit")
			fs.Lookup("cv").NoOptDefVal = "standard"
			fs.IntVar(&o.MaxJobs, "max-jobs", 24, "multi-source fit: simulations per corpus source (`N` evenly spaced rows; 0: every row)")
			fs.IntVar(&o.MaxRequests, "max-requests", 200, "multi-source fit: requests per simulation (`N`; 0: as measured; closed loops keep 3 x concurrency)")
			fs.BoolVar(&o.NoSeed, "no-seed", false, "multi-source fit: leave the scenario's measured matrix out")
			fs.StringVar(&o.Out, "out", "", "write the fitted parameters to `file` (TOML, loadable with --params)")
			fs.StringVar(&o.Report, "report", "", "write the JSON report to `file`")
			fs.StringVar(&o.Method, "method", "lm", "optimiser: lm (Levenberg-Marquardt), bfgs or nelder-mead (gonum/optimize)")
			fs.IntVar(&o.Starts, "starts", calibration.DefaultStarts, "seeded starting points")
			fs.IntVar(&o.MaxIter, "max-iter", 0, "iterations per start (default 0: the method's)")
			fs.IntVar(&o.Workers, "workers", 0, "parallel simulations (default 0: all CPUs)")
			fs.Uint64Var(&o.FitSeed, "fit-seed", 1, "seed for the random starting points")
			fs.StringVar(&o.WeightsText, "weights", "", "objective `weights` as name=value,... (total, per_request, tbt, ttft, prefill, prefill_ttft, status, robust, prior); default "+calibration.DefaultWeights().String())
			fs.StringSliceVar(&o.Free, "free", nil, "comma-separated parameter `names` to fit (default: chosen from the deployment)")
			return func(args []string) error {
				cvMode, args, multi := o.Mode(args)
				if err := o.Check(cvMode, multi); err != nil {
					return err
				}
				for _, p := range []string{o.Out, o.Report} {
					if err := (&outFlag{path: p}).check(); err != nil {
						return err
					}
				}
				if err := bf.Check(); err != nil {
					return err
				}
				results, err := vllmbench.ReadMeasured(o.Measured)
				if err != nil {
					return err
				}
				if err := o.CheckSources(cvMode, multi, len(results), len(bf.Cmdlines), bf.Used()); err != nil {
					return err
				}
				if multi {
					return fitMulti(e, &sf, &o, bf, args, cvMode, fs.Changed("exclude"))
				}
				r, err := sf.load(e.stderr, e.info())
				if err != nil {
					return err
				}
				pr := newProgress(e, 0)
				set := o.Settings(calibration.StatusLine(pr))
				freeIDs, err := o.FreeIDs()
				if err != nil {
					return err
				}
				if results != nil {
					return fitVLLMBench(e, pr, r, results, bf, freeIDs, &o, set)
				}
				meas, _, err := r.LoadMeasured(first(o.Measured), sf.isSeed())
				if err != nil {
					return err
				}
				if meas == nil {
					return usage.Errorf("no measured matrix: pass --measured FILE")
				}
				prob := &calibration.Problem{Deployment: r.Deployment, Protocol: &r.Scenario.Protocol, Measured: meas,
					Base: r.Params, Train: o.TrainFilter, KVTokens: o.KVTokens, Seed: r.Scenario.Seed, Free: freeIDs, StepByStep: sf.stepByStep}
				if prob.Exclude, err = o.Exclusion(fs.Changed("exclude"), r.Scenario.Fit.Exclude, ""); err != nil {
					return err
				}
				fmt.Fprintf(e.info(), "servesim fit: %s; starting from %s\n", r.Scenario.Name, r.ParamsFrom)
				res, err := calibration.Fit(prob, set)
				pr.Finish()
				if err != nil {
					return err
				}
				fmt.Fprintf(e.info(), "servesim fit: done in %.1f s\n", res.Elapsed.Seconds())
				rep := res.Report
				if cvMode == "standard" {
					splits, warnings, err := calibration.CrossValidate(prob, set)
					pr.Finish()
					if err != nil {
						return err
					}
					rep.CV = splits
					rep.Warnings = append(rep.Warnings, warnings...)
				}
				var buf bytes.Buffer
				calibration.WriteSummary(&buf, &rep)
				name := first(o.Measured)
				if name == "" {
					name = "the embedded seed"
				}
				return writeFit(e, &buf, &o, rep.WriteJSON, scenario.NewFitParamsFile(r.Deployment, res.Params, res.Free, &r.Provenance, rep.Note(name)))
			}
		},
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// writeFit writes a fit's summary (buf) to stdout, its parameters to --out and its report to
// --report.
func writeFit(e *env, buf *bytes.Buffer, o *calibration.Options, report func(io.Writer) error, params *scenario.ParamsFile) error {
	if _, err := e.stdout.Write(buf.Bytes()); err != nil {
		return err
	}
	if params != nil {
		if err := writeOut(o.Out, func(b *bytes.Buffer) error { params.Encode(b); return nil }); err != nil {
			return err
		}
	}
	return writeOut(o.Report, func(b *bytes.Buffer) error { return report(b) })
}

// fitVLLMBench fits the parameters to vllm bench serve result files.
func fitVLLMBench(e *env, pr *progress.Reporter, r *scenario.Resolved, results []*vllmbench.Result, bf *vllmbench.Flags, free []param.ID,
	o *calibration.Options, set *calibration.Settings) error {
	prob := &calibration.TargetProblem{Deployment: r.Deployment, Base: r.Params, Free: free, KVTokens: o.KVTokens, Seed: r.Scenario.Seed}
	for i, res := range results {
		if err := validate.CheckResult(r, res); err != nil {
			return err
		}
		spec, cmd, notes, err := bf.ResultWorkload(res, i)
		if err != nil {
			return err
		}
		vllmbench.PrintNotes(e.info(), "servesim fit: "+res.Name+": ", cmd, notes)
		prob.Targets = append(prob.Targets, &calibration.VLLMBenchRun{Result: res, Spec: spec})
	}
	fmt.Fprintf(e.info(), "servesim fit: %s on %d vllm bench result(s); starting from %s\n", r.Scenario.Name, len(results), r.ParamsFrom)
	res, err := calibration.FitTargets(prob, set)
	pr.Finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.info(), "servesim fit: done in %.1f s\n", res.Elapsed.Seconds())
	rep := res.Report
	var buf bytes.Buffer
	calibration.WriteTargetSummary(&buf, &rep)
	return writeFit(e, &buf, o, rep.WriteJSON, scenario.NewFitParamsFile(r.Deployment, res.Params, res.Free, &r.Provenance, rep.Note(strings.Join(o.Measured, ", "))))
}

// fitMulti is the multi-source fit (validate.MultiData.Run) of the corpus and result files, and
// the scenario's measured matrix.
func fitMulti(e *env, sf *scenarioFlags, o *calibration.Options, bf *vllmbench.Flags, files []string, cvMode string, excludeSet bool) error {
	set := o.Settings(nil)
	set.Method, set.Starts = "lm", 0
	d := &validate.MultiData{Weights: o.Weights, Workers: o.Workers}
	d.Opt = validate.FitOptions{MaxJobs: o.MaxJobs, MaxRequests: o.MaxRequests, Weights: o.Weights, StepByStep: sf.stepByStep}
	if sf.SeedSet {
		d.Opt.Seed = sf.Seed
	}
	var jsons, csvs []string
	for _, p := range files {
		if strings.EqualFold(filepath.Ext(p), ".json") {
			jsons = append(jsons, p)
		} else {
			csvs = append(csvs, p)
		}
	}
	rs, err := validate.ReadFiles(csvs)
	if err != nil {
		return err
	}
	d.Rows = append(d.Rows, rs...)
	r, err := sf.load(e.stderr, e.info())
	if err != nil {
		return err
	}
	if !o.NoSeed {
		meas, _, err := r.LoadMeasured(first(o.Measured), sf.isSeed())
		if err != nil {
			return err
		}
		if meas != nil {
			prob := &calibration.Problem{Deployment: r.Deployment, Protocol: &r.Scenario.Protocol, Measured: meas, Base: r.Params, Seed: r.Scenario.Seed, StepByStep: sf.stepByStep}
			if prob.Exclude, err = o.Exclusion(excludeSet, r.Scenario.Fit.Exclude, "exclude"); err != nil {
				return err
			}
			d.Seed = prob
		}
	}
	if len(jsons) > 0 {
		prepared, err := prepareResults(e, sf, bf, jsons)
		if err != nil {
			return err
		}
		if err := d.AddResults(jsons, prepared, bf); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	rep, ps, err := d.Run(validate.RunOptions{CV: cvMode, Settings: *set, Out: &buf, Notes: e.stderr, Info: e.info(),
		NewProgress: func() *progress.Reporter { return newProgress(e, 0) }})
	if err != nil {
		return err
	}
	return writeFit(e, &buf, o, func(w io.Writer) error {
		data, err := json.MarshalIndent(rep.JSONSafe(), "", "  ")
		w.Write(append(data, '\n'))
		return err
	}, ps)
}
