package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/calibration"
	"github.com/servesim/servesim/internal/progress"
	"github.com/servesim/servesim/internal/usage"
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
		if err := d.AddResults(jsons, prepared, bf); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	rep, sets, err := d.Run(validate.RunOptions{CV: cvMode, Settings: *set, Out: &buf, Notes: e.stderr, Info: e.info(),
		NewProgress: func() *progress.Reporter { return newProgress(e, 0) }})
	if err != nil {
		return err
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
