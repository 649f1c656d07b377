package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/calibration"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/validate"
	"github.com/servesim/servesim/vllmbench"
)

// seedSource names the scenario's measured matrix among the sources of a multi-source fit.
const seedSource = "seed-matrix"

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

// resultSrc is a vllm bench result file as a source: its run and the server it ran on.
type resultSrc struct {
	name   string
	res    *vllmbench.Result
	target calibration.Target
	dep    *deploy.Deployment
	base   param.Values
	prep   *validate.Prepared
}

// multiData is everything a multi-source fit can draw on.
type multiData struct {
	rows    []validate.Row
	seed    *calibration.Problem // nil: no matrix
	results []resultSrc
	opt     validate.FitOptions
	w       calibration.Weights
	workers int
	seedGPU string
}

// fold selects a fold's data: by source name, by GPU (catalog name) and by model family (the
// Hugging Face model_type).
type fold struct{ source, gpu, family func(string) bool }

func everything() fold {
	all := func(string) bool { return true }
	return fold{all, all, all}
}

// keepCase reports whether a corpus case is in the fold (a case that is not expressed is kept
// for its source's notes).
func (f fold) keepCase(c *validate.Case) bool {
	return f.source(c.Source) && (!c.Expressed() || (f.gpu(c.GPU.Name) && f.family(c.Model.Family)))
}

// sources builds the fit's sources from the data the fold keeps.
func (d *multiData) sources(f fold) []*calibration.MultiSource {
	var out []*calibration.MultiSource
	if d.seed != nil && f.source(seedSource) && f.gpu(d.seedGPU) && f.family(d.seed.Deployment.Model.Family) {
		out = append(out, calibration.MatrixSource(seedSource, d.seed, d.w))
	}
	out = append(out, validate.FitSources(d.rows, f.keepCase, d.opt)...)
	for _, r := range d.results {
		if f.source(r.name) && f.gpu(r.dep.Hardware.GPU.Name) && f.family(r.dep.Model.Family) {
			out = append(out, calibration.TargetSource(r.name, r.dep, []calibration.Target{r.target}, r.base, d.opt.Seed, d.w))
		}
	}
	return out
}

// names lists every source name, in order.
func (d *multiData) names() []string {
	var out []string
	if d.seed != nil {
		out = append(out, seedSource)
	}
	seen := map[string]bool{}
	for _, r := range d.rows {
		if !seen[r.Source] {
			seen[r.Source] = true
			out = append(out, r.Source)
		}
	}
	for _, r := range d.results {
		out = append(out, r.name)
	}
	return out
}

// gpus lists the GPUs of the data (catalog names), in order of first appearance.
func (d *multiData) gpus() []string {
	var out []string
	for _, g := range d.gpuList() {
		out = append(out, g.Name)
	}
	return out
}

// gpuList is the GPUs of the data, each once, in the order the data names them.
func (d *multiData) gpuList() []hardware.GPU {
	var out []hardware.GPU
	seen := map[string]bool{}
	add := func(g hardware.GPU) {
		if g.Name != "" && !seen[g.Name] {
			seen[g.Name] = true
			out = append(out, g)
		}
	}
	if d.seed != nil {
		add(d.seed.Deployment.Hardware.GPU)
	}
	for _, c := range validate.Map(d.rows, nil) {
		if c.Expressed() {
			add(c.GPU)
		}
	}
	for _, r := range d.results {
		add(r.dep.Hardware.GPU)
	}
	return out
}

// families lists the model families of the data, in order of first appearance.
func (d *multiData) families() []string {
	var out []string
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if d.seed != nil {
		add(d.seed.Deployment.Model.Family)
	}
	for _, c := range validate.Map(d.rows, nil) {
		if c.Expressed() {
			add(c.Model.Family)
		}
	}
	for _, r := range d.results {
		add(r.dep.Model.Family)
	}
	return out
}

// gpuGenerations maps the data's GPUs to their generations.
func (d *multiData) gpuGenerations() map[string]hardware.Generation {
	m := map[string]hardware.Generation{}
	for _, g := range d.gpuList() {
		m[g.Name] = g.Generation
	}
	return m
}

// heldOut predicts the data keep accepts with the fit and scores it, one figure per source.
func (d *multiData) heldOut(name string, res *calibration.MultiResult, f fold) ([]calibration.HeldOut, error) {
	var out []calibration.HeldOut
	if d.seed != nil && f.source(seedSource) && f.gpu(d.seedGPU) && f.family(d.seed.Deployment.Model.Family) {
		p, from := res.ParamsFor(d.seed.Deployment)
		for _, def := range param.Defs() {
			if def.Level == param.LevelWorkload {
				p[def.ID] = d.seed.Base[def.ID]
			}
		}
		m, err := d.seed.Predict(p)
		if err != nil {
			return nil, fmt.Errorf("%s: held-out seed matrix: %w", name, err)
		}
		h := calibration.MatrixHeldOut(d.seed, m)
		h.Source, h.Params = seedSource, from
		out = append(out, h)
	}
	choose := func(dep *deploy.Deployment) (param.Values, string, error) {
		p, from := res.ParamsFor(dep)
		return p, from, nil
	}
	keep := func(c *validate.Case) bool { return c.Expressed() && f.keepCase(c) }
	var rows []validate.Row
	for _, r := range d.rows {
		if f.source(r.Source) {
			rows = append(rows, r)
		}
	}
	if len(rows) > 0 {
		rep := validate.Predict(rows, keep, validate.Options{Params: choose, Workers: d.workers, Seed: d.opt.Seed, StepByStep: d.opt.StepByStep})
		for _, s := range rep.Sources {
			if s.Expressed > 0 {
				out = append(out, rep.HeldOut(s.Source))
			}
		}
	}
	for _, r := range d.results {
		if !f.source(r.name) || !f.gpu(r.dep.Hardware.GPU.Name) || !f.family(r.dep.Model.Family) {
			continue
		}
		p, from := res.ParamsFor(r.dep)
		srv, err := sim.NewServer(r.dep, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, r.name, err)
		}
		q := *r.prep
		q.Server, q.Params = srv, from
		rep := validate.NewReport(validate.RunPrepared([]*validate.Prepared{&q}, validate.Options{Workers: d.workers, Seed: d.opt.Seed}))
		h := rep.HeldOut(validate.ResultSource)
		h.Source = r.name
		out = append(out, h)
	}
	for i := range out {
		out[i].Fold = name
	}
	return out, nil
}

// multiReport is the JSON report of a multi-source fit or its cross-validation.
type multiReport struct {
	Sources    []string                    `json:"sources"`
	Notes      map[string][]string         `json:"notes"`
	Entries    []calibration.EntryEstimate `json:"entries,omitempty"`
	Loss       float64                     `json:"loss,omitempty"`
	DataLoss   float64                     `json:"data_loss,omitempty"`
	Status     string                      `json:"status,omitempty"`
	CV         string                      `json:"cv,omitempty"`
	HeldOut    []calibration.HeldOut       `json:"held_out,omitempty"`
	MaxJobs    int                         `json:"max_jobs"`
	MaxRequest int                         `json:"max_requests"`
}

func fitMulti(e *env, sf *scenarioFlags, mf *multiFlags, bf *benchFlags, fs *pflag.FlagSet, files []string, cvMode string,
	set *calibration.Settings, w calibration.Weights, measured []string, exclude []string, excludeSet bool, reportOut, paramsOut string) error {
	d := &multiData{w: w, workers: set.Workers}
	d.opt = validate.FitOptions{MaxJobs: mf.maxJobs, MaxRequests: mf.maxRequests, Weights: w, StepByStep: sf.stepByStep}
	if sf.seed.set {
		d.opt.Seed = sf.seed.v
	}
	var jsons []string
	for _, p := range files {
		if strings.EqualFold(filepath.Ext(p), ".json") {
			jsons = append(jsons, p)
			continue
		}
		rs, err := validate.ReadFile(p)
		if err != nil {
			return err
		}
		d.rows = append(d.rows, rs...)
	}
	r, err := sf.load(e.stderr, e.info())
	if err != nil {
		return err
	}
	if !mf.noSeed {
		meas, _, err := loadMeasured(first(measured), sf.isSeed(), r)
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
				return usagef("exclude: %v", err)
			}
			d.seed, d.seedGPU = prob, r.Deployment.Hardware.GPU.Name
		}
	}
	if len(jsons) > 0 {
		prepared, err := prepareResults(e, sf, bf, fs, jsons)
		if err != nil {
			return err
		}
		for i, p := range prepared {
			res, err := vllmbench.ReadResult(jsons[i])
			if err != nil {
				return err
			}
			spec, _, _, err := resultWorkload(res, bf, fs, i)
			if err != nil {
				return err
			}
			var base param.Values
			d.results = append(d.results, resultSrc{name: validate.ResultSource + ":" + filepath.Base(jsons[i]), res: res,
				target: &calibration.BenchRun{Result: res, Spec: spec}, dep: p.Server.Deployment, base: base, prep: p})
		}
	}
	if d.seed == nil && len(d.rows) == 0 && len(d.results) == 0 {
		return usagef("nothing to fit: give corpus CSV files, vllm bench result files, or a scenario with a measured matrix")
	}
	fmt.Fprintf(e.stderr, "servesim fit: multi-source, sources %s; at most %d simulations per corpus source, %d requests per simulation (flags --max-jobs, --max-requests)\n",
		strings.Join(d.names(), ", "), mf.maxJobs, mf.maxRequests)
	rep := multiReport{Sources: d.names(), Notes: map[string][]string{}, CV: cvMode, MaxJobs: mf.maxJobs, MaxRequest: mf.maxRequests}
	all := everything()
	var buf bytes.Buffer
	var sets *scenario.ParamsFile
	switch cvMode {
	case "":
		srcs := d.sources(all)
		for _, s := range srcs {
			rep.Notes[s.Name] = s.Notes
		}
		printNotes(e.stderr, srcs)
		pr := newProgress(e, 0)
		set.Progress = fitProgress(pr)
		res, err := calibration.FitMulti(&calibration.MultiProblem{Sources: srcs}, set)
		pr.finish()
		if err != nil {
			return err
		}
		fmt.Fprintf(e.info(), "servesim fit: done in %.1f s, %d simulations\n", res.Elapsed.Seconds(), res.Evaluations)
		rep.Entries, rep.Loss, rep.DataLoss, rep.Status = res.Entries, res.Loss, res.DataLoss, res.Status
		writeEntries(&buf, res)
		sets = paramSets(res, d.gpuGenerations(), fmt.Sprintf("servesim fit on %s (multi-source, loss %.4g)", strings.Join(rep.Sources, ", "), res.Loss))
		// Predicted against measured on everything fitted (full workloads).
		ho, err := d.heldOut("in-sample", res, all)
		if err != nil {
			return err
		}
		rep.HeldOut = ho
		fmt.Fprintln(&buf, "\nIn-sample accuracy with the fitted parameters (full workloads, every row):")
		writeHeldOut(&buf, ho, false)
	case "loso", "logo", "lofo":
		var folds []string
		switch cvMode {
		case "loso":
			folds = d.names()
		case "logo":
			folds = d.gpus()
		default:
			folds = d.families()
		}
		start := time.Now()
		for i, f := range folds {
			f := f
			train, test := all, all
			out, in := func(s string) bool { return s != f }, func(s string) bool { return s == f }
			switch cvMode {
			case "loso":
				train.source, test.source = out, in
			case "logo":
				train.gpu, test.gpu = out, in
			default:
				train.family, test.family = out, in
			}
			srcs := d.sources(train)
			for _, s := range srcs {
				if _, ok := rep.Notes[s.Name]; !ok {
					rep.Notes[s.Name] = s.Notes
				}
			}
			if i == 0 {
				printNotes(e.stderr, d.sources(all))
			}
			pr := newProgress(e, 0)
			set.Progress = cvProgress(pr, start, i, len(folds), f, set.MaxIter)
			res, err := calibration.FitMulti(&calibration.MultiProblem{Sources: srcs}, set)
			pr.finish()
			if err != nil {
				return fmt.Errorf("fold %s: %w", f, err)
			}
			ho, err := d.heldOut(f, res, test)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.info(), "  fold %d/%d held out %s: fitted %d entries on %d sources in %.0f s (%d simulations, %s)\n",
				i+1, len(folds), f, len(res.Entries), len(srcs), res.Elapsed.Seconds(), res.Evaluations, res.Status)
			rep.HeldOut = append(rep.HeldOut, ho...)
		}
		what := map[string]string{"loso": "source", "logo": "GPU", "lofo": "model family"}[cvMode]
		fmt.Fprintf(&buf, "Leave one %s out (%s): fit on the rest (at most %d simulations per corpus source, %d requests each), predict the held-out with full workloads\n",
			what, cvMode, mf.maxJobs, mf.maxRequests)
		writeHeldOut(&buf, rep.HeldOut, true)
	default:
		return usagef("--cv %q: want loso, logo, lofo (multi-source) or no value (the standard splits of a matrix fit)", cvMode)
	}
	if _, err := e.stdout.Write(buf.Bytes()); err != nil {
		return err
	}
	if paramsOut != "" && sets != nil {
		var pb bytes.Buffer
		sets.Encode(&pb)
		if err := (&outFlag{path: paramsOut}).write(e.stdout, &pb); err != nil {
			return err
		}
	}
	if reportOut != "" {
		data, err := json.MarshalIndent(nanSafe(rep), "", "  ")
		if err != nil {
			return err
		}
		if err := (&outFlag{path: reportOut}).write(e.stdout, bytes.NewBuffer(append(data, '\n'))); err != nil {
			return err
		}
	}
	return nil
}

// paramSets is a multi-source fit's values as a parameter file of sets, one per level and key,
// with the entries the data saw (an entry no simulation moved stays at its prior, and the file
// leaves it out). gens gives the gpu sets' generations.
func paramSets(res *calibration.MultiResult, gens map[string]hardware.Generation, note string) *scenario.ParamsFile {
	f := &scenario.ParamsFile{}
	index := map[string]int{}
	for _, en := range res.Entries {
		if !en.Seen {
			continue
		}
		id := en.Level + "\x00" + en.Key
		i, ok := index[id]
		if !ok {
			i = len(f.Keyed)
			index[id] = i
			st := scenario.ParamSet{Level: en.Level, Key: en.Key, Note: note, Params: map[string]float64{}}
			if en.Level == string(param.LevelGPU) {
				st.Generation = string(gens[en.Key])
			}
			f.Keyed = append(f.Keyed, st)
		}
		f.Keyed[i].Params[en.Param] = en.Value
	}
	return f
}

// nanSafe replaces NaN figures by -1 for JSON.
func nanSafe(r multiReport) multiReport {
	fix := func(v *float64) {
		if math.IsNaN(*v) || math.IsInf(*v, 0) {
			*v = -1
		}
	}
	h := append([]calibration.HeldOut(nil), r.HeldOut...)
	for i := range h {
		fix(&h[i].OutputMAPE)
		fix(&h[i].TPOTMAPE)
		fix(&h[i].TTFTMdAPE)
		fix(&h[i].RatioMAPE)
	}
	r.HeldOut = h
	return r
}

func printNotes(w io.Writer, srcs []*calibration.MultiSource) {
	for _, s := range srcs {
		jobs := len(s.Jobs)
		fmt.Fprintf(w, "  source %s: %d simulation(s), %d residuals\n", s.Name, jobs, s.NResid)
		shortened := 0
		for _, n := range s.Notes {
			if strings.HasPrefix(n, "shortened ") {
				shortened++
				continue
			}
			fmt.Fprintf(w, "    %s\n", n)
		}
		if shortened > 0 {
			fmt.Fprintf(w, "    %d simulation(s) shortened to at most the request cap (see the JSON report's notes)\n", shortened)
		}
	}
}

// cvProgress reports a cross-validation's progress with an estimate of the time left.
func cvProgress(pr *progress, start time.Time, fold, folds int, name string, maxIter int) func(calibration.Progress) {
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
		pr.status("fold %d/%d (held out %s): %-16s %6d simulations, loss %.4g, %.0f s, left %s", fold+1, folds, name, p.Stage, p.Evaluations, p.Best, el, eta)
	}
}

func writeEntries(w io.Writer, res *calibration.MultiResult) {
	fmt.Fprintf(w, "Multi-source fit of %d values over %s: loss %.4f (data %.4f), %d simulations, %s\n\n",
		len(res.Entries), strings.Join(res.Sources, ", "), res.Loss, res.DataLoss, res.Evaluations, res.Status)
	es := append([]calibration.EntryEstimate(nil), res.Entries...)
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Level != es[j].Level {
			return es[i].Level < es[j].Level
		}
		return es[i].Key < es[j].Key
	})
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "level\tkey\tparameter\tvalue\t± stderr\tprior\tprior sd from\tsimulations\t")
	for _, e := range es {
		se := "n/a"
		if !e.Seen {
			se = "unseen (prior)"
		} else if e.StdErr >= 0 {
			se = fmt.Sprintf("%.3g", e.StdErr)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4g\t%s\t%.4g\t%s\t%d\t\n", e.Level, e.Key, e.Param, e.Value, se, e.Prior, e.Band, e.Jobs)
	}
	tw.Flush()
}

// The held-out acceptance: the accuracy a source predicted without its own data must reach.
const (
	accOutput = 20.0
	accTPOT   = 20.0
	accTTFT   = 30.0
)

func writeHeldOut(w io.Writer, hs []calibration.HeldOut, accept bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "fold\theld-out source\trows\toutput tok/s MAPE\tTPOT MAPE\tTTFT MdAPE (keeps up)\toverload right\tratio MAPE\t"
	if accept {
		head += "acceptance\t"
	}
	fmt.Fprintln(tw, head)
	f := func(v float64, n int) string {
		if n == 0 || math.IsNaN(v) {
			return "-"
		}
		return fmt.Sprintf("%.1f%% (%d)", v, n)
	}
	for _, h := range hs {
		ov := "-"
		if h.OverloadRows > 0 {
			ov = fmt.Sprintf("%d/%d", h.OverloadRight, h.OverloadRows)
		}
		line := fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t", h.Fold, h.Source, h.Rows, f(h.OutputMAPE, h.NOutput), f(h.TPOTMAPE, h.NTPOT),
			f(h.TTFTMdAPE, h.NTTFT), ov, f(h.RatioMAPE, h.NRatio))
		if accept {
			line += verdict(h) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

// verdict checks a held-out figure against the held-out acceptance: output tok/s and TPOT MAPE
// <= 20 % (a ratio-scored source: its ratios), TTFT median APE <= 30 % where the server keeps
// up, every overload call right.
func verdict(h calibration.HeldOut) string {
	var fails []string
	check := func(name string, v float64, n int, lim float64) {
		if n > 0 && !(v <= lim) {
			fails = append(fails, fmt.Sprintf("%s %.0f%% > %.0f%%", name, v, lim))
		}
	}
	check("output", h.OutputMAPE, h.NOutput, accOutput)
	check("TPOT", h.TPOTMAPE, h.NTPOT, accTPOT)
	check("TTFT", h.TTFTMdAPE, h.NTTFT, accTTFT)
	check("ratios", h.RatioMAPE, h.NRatio, accOutput)
	if h.OverloadRight < h.OverloadRows {
		fails = append(fails, fmt.Sprintf("overload %d/%d", h.OverloadRight, h.OverloadRows))
	}
	if len(fails) == 0 {
		return "pass"
	}
	return "FAIL: " + strings.Join(fails, ", ")
}
