package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/calibration"
	"github.com/servesim/servesim/internal/progress"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/validate"
	"github.com/servesim/servesim/vllmbench"
)

// multiFlags are the flags of a multi-source fit.
type multiFlags struct {
	maxJobs, maxRequests int
	noSeed               bool
}

func (m *multiFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&m.maxJobs, "max-jobs", 24, "multi-source fit: simulations per corpus source (`N` evenly spaced rows; 0: every row)")
	fs.IntVar(&m.maxRequests, "max-requests", 200, "multi-source fit: requests per simulation (`N`; 0: as measured; closed loops keep 3 x concurrency)")
	fs.BoolVar(&m.noSeed, "no-seed", false, "multi-source fit: leave the scenario's measured matrix out")
}

func fitMulti(e *env, sf *scenarioFlags, mf *multiFlags, bf *vllmbench.Flags, files []string, cvMode string,
	set *calibration.Settings, w calibration.Weights, measured []string, exclude []string, excludeSet bool, reportOut, paramsOut string) error {
	d := &validate.MultiData{Weights: w, Workers: set.Workers}
	d.Opt = validate.FitOptions{MaxJobs: mf.maxJobs, MaxRequests: mf.maxRequests, Weights: w, StepByStep: sf.stepByStep}
	if sf.seed.set {
		d.Opt.Seed = sf.seed.v
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
	if !mf.noSeed {
		meas, _, err := r.LoadMeasured(first(measured), sf.isSeed())
		if err != nil {
			return err
		}
		if meas != nil {
			prob := &calibration.Problem{Deployment: r.Deployment, Protocol: &r.Scenario.Protocol, Measured: meas, Base: r.Params, Seed: r.Scenario.Seed, StepByStep: sf.stepByStep}
			excl := r.Scenario.Fit.Exclude
			if excludeSet {
				excl = exclude
			}
			if prob.Exclude, err = calibration.ParseExclude(excl); err != nil {
				return usage.Errorf("exclude: %v", err)
			}
			d.Seed = prob
		}
	}
	if len(jsons) > 0 {
		prepared, err := prepareResults(e, sf, bf, jsons)
		if err != nil {
			return err
		}
		for i, p := range prepared {
			res, err := vllmbench.ReadResult(jsons[i])
			if err != nil {
				return err
			}
			spec, _, _, err := bf.ResultWorkload(res, i)
			if err != nil {
				return err
			}
			d.Results = append(d.Results, validate.ResultFile{Name: validate.ResultSource + ":" + filepath.Base(jsons[i]),
				Target: &calibration.VLLMBenchRun{Result: res, Spec: spec}, Prepared: p})
		}
	}
	if d.Seed == nil && len(d.Rows) == 0 && len(d.Results) == 0 {
		return usage.Errorf("nothing to fit: give corpus CSV files, vllm bench result files, or a scenario with a measured matrix")
	}
	fmt.Fprintf(e.stderr, "servesim fit: multi-source, sources %s; at most %d simulations per corpus source, %d requests per simulation (flags --max-jobs, --max-requests)\n",
		strings.Join(d.Names(), ", "), mf.maxJobs, mf.maxRequests)
	rep := validate.MultiReport{Sources: d.Names(), Notes: map[string][]string{}, CV: cvMode, MaxJobs: mf.maxJobs, MaxRequest: mf.maxRequests}
	var buf bytes.Buffer
	var sets *scenario.ParamsFile
	switch cvMode {
	case "":
		srcs := d.Sources(validate.Fold{})
		for _, s := range srcs {
			rep.Notes[s.Name] = s.Notes
		}
		calibration.WriteSourceNotes(e.stderr, srcs)
		pr := newProgress(e, 0)
		set.Progress = fitProgress(pr)
		res, err := calibration.FitMulti(&calibration.MultiProblem{Sources: srcs}, set)
		pr.Finish()
		if err != nil {
			return err
		}
		fmt.Fprintf(e.info(), "servesim fit: done in %.1f s, %d simulations\n", res.Elapsed.Seconds(), res.Evaluations)
		rep.Entries, rep.Loss, rep.DataLoss, rep.Status = res.Entries, res.Loss, res.DataLoss, res.Status
		calibration.WriteEntries(&buf, res)
		sets = validate.ParamSets(res, d.GPUGenerations(), fmt.Sprintf("servesim fit on %s (multi-source, loss %.4g)", strings.Join(rep.Sources, ", "), res.Loss))
		// Predicted against measured on everything fitted (full workloads).
		ho, err := d.HeldOut("in-sample", res, validate.Fold{})
		if err != nil {
			return err
		}
		rep.HeldOut = ho
		fmt.Fprintln(&buf, "\nIn-sample accuracy with the fitted parameters (full workloads, every row):")
		calibration.WriteHeldOut(&buf, ho, nil)
	default:
		what, ok := validate.CVModes()[cvMode]
		if !ok {
			return usage.Errorf("--cv %q: want loso, logo, lofo (multi-source) or no value (the standard splits of a matrix fit)", cvMode)
		}
		calibration.WriteSourceNotes(e.stderr, d.Sources(validate.Fold{}))
		start := time.Now()
		var pr *progress.Reporter
		held, notes, err := d.CrossValidate(cvMode, *set, validate.CVHooks{
			Start: func(i, n int, name string) func(calibration.Progress) {
				pr = newProgress(e, 0)
				return cvProgress(pr, start, i, n, name, set.MaxIter)
			},
			Done: func(i, n int, name string, res *calibration.MultiResult, sources int) {
				pr.Finish()
				fmt.Fprintf(e.info(), "  fold %d/%d held out %s: fitted %d entries on %d sources in %.0f s (%d simulations, %s)\n",
					i+1, n, name, len(res.Entries), sources, res.Elapsed.Seconds(), res.Evaluations, res.Status)
			},
		})
		if pr != nil {
			pr.Finish()
		}
		if err != nil {
			return err
		}
		rep.HeldOut, rep.Notes = held, notes
		fmt.Fprintf(&buf, "Leave one %s out (%s): fit on the rest (at most %d simulations per corpus source, %d requests each), predict the held-out with full workloads\n",
			what, cvMode, mf.maxJobs, mf.maxRequests)
		acc := calibration.DefaultAcceptance()
		calibration.WriteHeldOut(&buf, rep.HeldOut, &acc)
	}
	if _, err := e.stdout.Write(buf.Bytes()); err != nil {
		return err
	}
	if sets != nil {
		if err := writeOut(paramsOut, func(b *bytes.Buffer) error { sets.Encode(b); return nil }); err != nil {
			return err
		}
	}
	return writeOut(reportOut, func(b *bytes.Buffer) error {
		data, err := json.MarshalIndent(rep.JSONSafe(), "", "  ")
		b.Write(append(data, '\n'))
		return err
	})
}

// cvProgress reports a cross-validation's progress with an estimate of the time left.
func cvProgress(pr *progress.Reporter, start time.Time, fold, folds int, name string, maxIter int) func(calibration.Progress) {
	if maxIter <= 0 {
		maxIter = 8
	}
	return func(p calibration.Progress) {
		it := 0
		fmt.Sscanf(p.Stage, "iteration %d", &it)
		frac := math.Min(float64(it)/float64(maxIter+1), 0.95)
		done := float64(fold) + frac
		el := time.Since(start).Seconds()
		eta := "?"
		if done > 0.05 {
			eta = fmt.Sprintf("~%.0f s", el/done*(float64(folds)-done))
		}
		pr.Status("fold %d/%d (held out %s): %-16s %6d simulations, loss %.4g, %.0f s, left %s", fold+1, folds, name, p.Stage, p.Evaluations, p.Best, el, eta)
	}
}
