package main

import (
	"bytes"
	"fmt"
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
			measured := fs.StringArray("measured", nil, "measured matrix `file` (default: the embedded seed for the seed scenario), or vllm bench serve --save-result JSON files (repeat the flag)")
			bf := registerVLLMBench(fs, true)
			kvTokens := fs.Int("kv-tokens", 0, "measured kv_cache_size_tokens `N` (vLLM's \"GPU KV cache size: N tokens\"); pins the memory terms")
			train := fs.String("train", "", "training cells `filter`; the others are test cells (default: all)")
			exclude := fs.StringArray("exclude", nil, "measured cells the fit neither trains on nor judges, a `filter` like --train's (repeatable; 'none' for no exclusion); default: the scenario's [fit] exclude")
			cvFlag := fs.String("cv", "", "cross-validate: no value for the standard splits of a matrix fit; `loso` (leave one source out), logo (leave one GPU out) or lofo (leave one model family out) for a multi-source fit")
			fs.Lookup("cv").NoOptDefVal = "standard"
			var mf multiFlags
			mf.register(fs)
			paramsOut := fs.String("out", "", "write the fitted parameters to `file` (TOML, loadable with --params)")
			reportOut := fs.String("report", "", "write the JSON report to `file`")
			method := fs.String("method", "lm", "optimiser: lm (Levenberg-Marquardt), bfgs or nelder-mead (gonum/optimize)")
			starts := fs.Int("starts", calibration.DefaultStarts, "seeded starting points")
			maxIter := fs.Int("max-iter", 0, "iterations per start (default 0: the method's)")
			workers := fs.Int("workers", 0, "parallel simulations (default 0: all CPUs)")
			fitSeed := fs.Uint64("fit-seed", 1, "seed for the random starting points")
			weights := fs.String("weights", "", "objective `weights` as name=value,... (total, per_request, tbt, ttft, prefill, prefill_ttft, status, robust, prior); default "+calibration.DefaultWeights().String())
			free := fs.StringSlice("free", nil, "comma-separated parameter `names` to fit (default: chosen from the deployment)")
			return func(args []string) error {
				cvMode := *cvFlag
				if cvMode == "standard" && len(args) > 0 && (args[0] == "loso" || args[0] == "logo" || args[0] == "lofo") {
					cvMode, args = args[0], args[1:] // --cv loso, as well as --cv=loso
				}
				multi := len(args) > 0 || cvMode == "loso" || cvMode == "logo" || cvMode == "lofo"
				cv := new(bool)
				*cv = cvMode == "standard"
				if !multi && cvMode != "" && cvMode != "standard" {
					return usage.Errorf("--cv %q: want loso, logo or lofo with corpus files, or no value (the standard splits)", cvMode)
				}
				switch *method {
				case "lm", "bfgs", "nelder-mead":
				default:
					return usage.Errorf("--method %q: want lm, bfgs or nelder-mead", *method)
				}
				if *starts <= 0 {
					return usage.Errorf("--starts %d: must be a positive integer", *starts)
				}
				if err := intRange("max-iter", *maxIter, 0, 1_000_000, "a positive number of iterations per start (or 0: the method's)"); err != nil {
					return err
				}
				if err := intRange("workers", *workers, 0, 1<<16, "a positive number of parallel simulations (or 0: all CPUs)"); err != nil {
					return err
				}
				wts, err := calibration.ParseWeights(*weights)
				if err != nil {
					return usage.Errorf("--weights: %v", err)
				}
				flt, err := calibration.ParseFilter(*train)
				if err != nil {
					return usage.Errorf("--train: %v", err)
				}
				if *kvTokens < 0 {
					return usage.Errorf("--kv-tokens %d: must be a positive token count", *kvTokens)
				}
				for _, p := range []string{*paramsOut, *reportOut} {
					if p != "" {
						o := outFlag{path: p}
						if err := o.check(); err != nil {
							return err
						}
					}
				}
				if err := bf.Check(); err != nil {
					return err
				}
				results, err := vllmbench.ReadMeasured(*measured)
				if err != nil {
					return err
				}
				if results == nil && bf.Used() {
					return usage.Errorf("--vllm-bench, --special-tokens and --chars-per-token apply to vllm bench serve result files given with --measured")
				}
				if results != nil && (*train != "" || *cv) {
					return usage.Errorf("--train and --cv select cells of a measured matrix; with vllm bench result files every file trains the fit")
				}
				if len(bf.Cmdlines) > 1 && len(bf.Cmdlines) != len(results) {
					return usage.Errorf("--vllm-bench given %d times for %d result files: give it once for all, or once per file", len(bf.Cmdlines), len(results))
				}
				if len(*measured) > 1 && results == nil {
					return usage.Errorf("--measured given %d times: a fit takes one measured matrix (or several vllm bench result files)", len(*measured))
				}
				if multi {
					if *train != "" || len(*free) > 0 || *kvTokens > 0 {
						return usage.Errorf("--train, --free and --kv-tokens apply to a fit to one matrix or to result files, not to a multi-source fit")
					}
					if *paramsOut != "" && cvMode != "" {
						return usage.Errorf("--out writes the parameters of one fit; --cv %s runs one fit per fold (run the fit without --cv to write its parameters)", cvMode)
					}
					if mf.maxJobs < 0 || mf.maxRequests < 0 {
						return usage.Errorf("--max-jobs and --max-requests: want >= 0")
					}
					set := &calibration.Settings{Method: "lm", MaxIter: *maxIter, Workers: *workers, Seed: *fitSeed, Weights: &wts}
					return fitMulti(e, &sf, &mf, bf, args, cvMode, set, wts, *measured, *exclude, fs.Changed("exclude"), *reportOut, *paramsOut)
				}
				r, err := sf.load(e.stderr, e.info())
				if err != nil {
					return err
				}
				var set *calibration.Settings
				pr := newProgress(e, 0)
				settings := func() *calibration.Settings {
					return &calibration.Settings{Method: *method, Starts: *starts, MaxIter: *maxIter, Workers: *workers, Seed: *fitSeed, Weights: &wts,
						Progress: calibration.StatusLine(pr)}
				}
				var freeIDs []param.ID
				for _, n := range *free {
					id, ok := param.ByName(strings.TrimSpace(n))
					if !ok {
						return usage.Errorf("--free: unknown parameter %q (known: %s)", n, strings.Join(param.Names(), ", "))
					}
					freeIDs = append(freeIDs, id)
				}
				if results != nil {
					return fitVLLMBench(e, pr, r, results, bf, freeIDs, *kvTokens, settings(), *paramsOut, *reportOut, *measured)
				}
				meas, _, err := r.LoadMeasured(first(*measured), sf.isSeed())
				if err != nil {
					return err
				}
				if meas == nil {
					return usage.Errorf("no measured matrix: pass --measured FILE")
				}
				prob := &calibration.Problem{Deployment: r.Deployment, Protocol: &r.Scenario.Protocol, Measured: meas,
					Base: r.Params, Train: flt, KVTokens: *kvTokens, Seed: r.Scenario.Seed, Free: freeIDs, StepByStep: sf.stepByStep}
				excl, src := r.Scenario.Fit.Exclude, "scenario [fit] exclude"
				if fs.Changed("exclude") {
					excl, src = *exclude, "--exclude"
				}
				if prob.Exclude, err = calibration.ParseExclude(excl); err != nil {
					return usage.Errorf("%s: %v", src, err)
				}
				set = settings()
				fmt.Fprintf(e.info(), "servesim fit: %s; starting from %s\n", r.Scenario.Name, r.ParamsFrom)
				res, err := calibration.Fit(prob, set)
				pr.Finish()
				if err != nil {
					return err
				}
				fmt.Fprintf(e.info(), "servesim fit: done in %.1f s\n", res.Elapsed.Seconds())
				rep := res.Report
				if *cv {
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
				if _, err := e.stdout.Write(buf.Bytes()); err != nil {
					return err
				}
				if err := writeOut(*paramsOut, func(b *bytes.Buffer) error {
					scenario.NewFitParamsFile(r.Deployment, res.Params, res.Free, &r.Provenance, rep.Note(measName(first(*measured)))).Encode(b)
					return nil
				}); err != nil {
					return err
				}
				return writeOut(*reportOut, func(b *bytes.Buffer) error { return rep.WriteJSON(b) })
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

// fitVLLMBench fits the parameters to vllm bench serve result files.
func fitVLLMBench(e *env, pr *progress.Reporter, r *scenario.Resolved, results []*vllmbench.Result, bf *vllmbench.Flags, free []param.ID,
	kvTokens int, set *calibration.Settings, paramsOut, reportOut string, names []string) error {
	prob := &calibration.TargetProblem{Deployment: r.Deployment, Base: r.Params, Free: free, KVTokens: kvTokens, Seed: r.Scenario.Seed}
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
	if _, err := e.stdout.Write(buf.Bytes()); err != nil {
		return err
	}
	if err := writeOut(paramsOut, func(b *bytes.Buffer) error {
		scenario.NewFitParamsFile(r.Deployment, res.Params, res.Free, &r.Provenance, rep.Note(strings.Join(names, ", "))).Encode(b)
		return nil
	}); err != nil {
		return err
	}
	return writeOut(reportOut, func(b *bytes.Buffer) error { return rep.WriteJSON(b) })
}

func measName(p string) string {
	if p == "" {
		return "the embedded seed"
	}
	return p
}
