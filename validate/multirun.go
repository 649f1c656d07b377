package validate

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/servesim/servesim/calibration"
	"github.com/servesim/servesim/internal/progress"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/vllmbench"
)

// RunOptions say how a command runs a multi-source fit (MultiData.Run): the cross-validation
// (CV: "" for one fit on everything, else a key of CVModes), the fit's settings, where its
// summary (Out), notes (Notes) and informational lines (Info) go, and how to show progress.
type RunOptions struct {
	CV               string
	Settings         calibration.Settings
	Out, Notes, Info io.Writer
	NewProgress      func() *progress.Reporter
}

// Run fits the data (or cross-validates the fit), writes the summary to o.Out and returns the
// report and, for one fit on everything, the fitted parameter sets ('servesim fit --out').
func (d *MultiData) Run(o RunOptions) (*MultiReport, *scenario.ParamsFile, error) {
	if d.Seed == nil && len(d.Rows) == 0 && len(d.Results) == 0 {
		return nil, nil, usage.Errorf("nothing to fit: give corpus CSV files, vllm bench result files, or a scenario with a measured matrix")
	}
	maxJobs, maxReq := d.Opt.MaxJobs, d.Opt.MaxRequests
	fmt.Fprintf(o.Notes, "servesim fit: multi-source, sources %s; at most %d simulations per corpus source, %d requests per simulation (flags --max-jobs, --max-requests)\n",
		strings.Join(d.Names(), ", "), maxJobs, maxReq)
	rep := &MultiReport{Sources: d.Names(), Notes: map[string][]string{}, CV: o.CV, MaxJobs: maxJobs, MaxRequest: maxReq}
	set := o.Settings
	if o.CV == "" {
		srcs := d.Sources(Fold{})
		for _, s := range srcs {
			rep.Notes[s.Name] = s.Notes
		}
		calibration.WriteSourceNotes(o.Notes, srcs)
		pr := o.NewProgress()
		set.Progress = calibration.StatusLine(pr)
		res, err := calibration.FitMulti(&calibration.MultiProblem{Sources: srcs}, &set)
		pr.Finish()
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(o.Info, "servesim fit: done in %.1f s, %d simulations\n", res.Elapsed.Seconds(), res.Evaluations)
		rep.Entries, rep.Loss, rep.DataLoss, rep.Status = res.Entries, res.Loss, res.DataLoss, res.Status
		calibration.WriteEntries(o.Out, res)
		sets := ParamSets(res, d.GPUGenerations(), fmt.Sprintf("servesim fit on %s (multi-source, loss %.4g)", strings.Join(rep.Sources, ", "), res.Loss))
		// Predicted against measured on everything fitted (full workloads).
		ho, err := d.HeldOut("in-sample", res, Fold{})
		if err != nil {
			return nil, nil, err
		}
		rep.HeldOut = ho
		fmt.Fprintln(o.Out, "\nIn-sample accuracy with the fitted parameters (full workloads, every row):")
		calibration.WriteHeldOut(o.Out, ho, nil)
		return rep, sets, nil
	}
	what, ok := CVModes()[o.CV]
	if !ok {
		return nil, nil, usage.Errorf("--cv %q: want loso, logo, lofo (multi-source) or no value (the standard splits of a matrix fit)", o.CV)
	}
	calibration.WriteSourceNotes(o.Notes, d.Sources(Fold{}))
	start := time.Now()
	var pr *progress.Reporter
	held, notes, err := d.CrossValidate(o.CV, set, CVHooks{
		Start: func(i, n int, name string) func(calibration.Progress) {
			pr = o.NewProgress()
			return cvProgress(pr, start, i, n, name, set.MaxIter)
		},
		Done: func(i, n int, name string, res *calibration.MultiResult, sources int) {
			pr.Finish()
			fmt.Fprintf(o.Info, "  fold %d/%d held out %s: fitted %d entries on %d sources in %.0f s (%d simulations, %s)\n",
				i+1, n, name, len(res.Entries), sources, res.Elapsed.Seconds(), res.Evaluations, res.Status)
		},
	})
	if pr != nil {
		pr.Finish()
	}
	if err != nil {
		return nil, nil, err
	}
	rep.HeldOut, rep.Notes = held, notes
	fmt.Fprintf(o.Out, "Leave one %s out (%s): fit on the rest (at most %d simulations per corpus source, %d requests each), predict the held-out with full workloads\n",
		what, o.CV, maxJobs, maxReq)
	acc := calibration.DefaultAcceptance()
	calibration.WriteHeldOut(o.Out, rep.HeldOut, &acc)
	return rep, nil, nil
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

// AddResults adds vllm bench result files (paths, prepared by PrepareResults) as fit sources,
// each fitted on the workload bf recovers from it.
func (d *MultiData) AddResults(paths []string, prepared []*Prepared, bf *vllmbench.Flags) error {
	for i, p := range prepared {
		res, err := vllmbench.ReadResult(paths[i])
		if err != nil {
			return err
		}
		spec, _, _, err := bf.ResultWorkload(res, i)
		if err != nil {
			return err
		}
		d.Results = append(d.Results, ResultFile{Name: ResultSource + ":" + filepath.Base(paths[i]),
			Target: &calibration.VLLMBenchRun{Result: res, Spec: spec}, Prepared: p})
	}
	return nil
}
