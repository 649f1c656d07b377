package validate

import (
	"fmt"
	"math"
	"slices"

	"github.com/servesim/servesim/calibration"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
)

// SeedSource names the scenario's measured matrix among the sources of a multi-source fit.
const SeedSource = "seed-matrix"

// ResultFile is a vllm bench result file as a source of a multi-source fit: its run (the
// target the fit matches), the server it ran on and the prepared run its held-out scoring
// simulates.
type ResultFile struct {
	Name     string
	Target   calibration.Target
	Prepared *Prepared
}

func (r *ResultFile) deployment() *deploy.Deployment { return r.Prepared.Server.Deployment }

// MultiData is everything a multi-source fit can draw on: corpus rows, the scenario's measured
// matrix and result files. Sources, Names, GPUs and Families describe it; CrossValidate and
// HeldOut fit and score it.
type MultiData struct {
	Rows    []Row
	Seed    *calibration.Problem // nil: no matrix
	Results []ResultFile
	Opt     FitOptions
	Weights calibration.Weights
	Workers int
}

// Fold selects a fold's data: by source name, by GPU (catalog name) and by model family (the
// Hugging Face model_type). A nil function keeps everything.
type Fold struct{ Source, GPU, Family func(string) bool }

func keep(f func(string) bool, s string) bool { return f == nil || f(s) }

// KeepCase reports whether a corpus case is in the fold (a case that is not expressed is kept
// for its source's notes).
func (f Fold) KeepCase(c *Case) bool {
	return keep(f.Source, c.Source) && (!c.Expressed() || (keep(f.GPU, c.GPU.Name) && keep(f.Family, c.Model.Family)))
}

// keepDeployment reports whether a source named name on deployment d is in the fold.
func (f Fold) keepDeployment(name string, d *deploy.Deployment) bool {
	return keep(f.Source, name) && keep(f.GPU, d.Hardware.GPU.Name) && keep(f.Family, d.Model.Family)
}

// Sources builds the fit's sources from the data the fold keeps.
func (d *MultiData) Sources(f Fold) []*calibration.MultiSource {
	var out []*calibration.MultiSource
	if d.Seed != nil && f.keepDeployment(SeedSource, d.Seed.Deployment) {
		out = append(out, calibration.MatrixSource(SeedSource, d.Seed, d.Weights))
	}
	out = append(out, FitSources(d.Rows, f.KeepCase, d.Opt)...)
	for i := range d.Results {
		r := &d.Results[i]
		if f.keepDeployment(r.Name, r.deployment()) {
			out = append(out, calibration.TargetSource(r.Name, r.deployment(), []calibration.Target{r.Target}, param.Values{}, d.Opt.Seed, d.Weights))
		}
	}
	return out
}

// Names lists every source name, in order: the seed matrix, the corpus sources as the rows
// name them, the result files.
func (d *MultiData) Names() []string {
	var out []string
	if d.Seed != nil {
		out = append(out, SeedSource)
	}
	for _, r := range d.Rows {
		if !slices.Contains(out, r.Source) {
			out = append(out, r.Source)
		}
	}
	for _, r := range d.Results {
		out = append(out, r.Name)
	}
	return out
}

// GPUs lists the GPUs of the data (catalog names), each once, in the order the data names them.
func (d *MultiData) GPUs() []string {
	var out []string
	for _, g := range d.gpuList() {
		out = append(out, g.Name)
	}
	return out
}

func (d *MultiData) gpuList() []hardware.GPU {
	var out []hardware.GPU
	add := func(g hardware.GPU) {
		if g.Name != "" && !slices.ContainsFunc(out, func(o hardware.GPU) bool { return o.Name == g.Name }) {
			out = append(out, g)
		}
	}
	if d.Seed != nil {
		add(d.Seed.Deployment.Hardware.GPU)
	}
	for _, c := range Map(d.Rows, nil) {
		if c.Expressed() {
			add(c.GPU)
		}
	}
	for i := range d.Results {
		add(d.Results[i].deployment().Hardware.GPU)
	}
	return out
}

// Families lists the model families of the data, in order of first appearance.
func (d *MultiData) Families() []string {
	var out []string
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if d.Seed != nil {
		add(d.Seed.Deployment.Model.Family)
	}
	for _, c := range Map(d.Rows, nil) {
		if c.Expressed() {
			add(c.Model.Family)
		}
	}
	for i := range d.Results {
		add(d.Results[i].deployment().Model.Family)
	}
	return out
}

// GPUGenerations maps the data's GPUs to their generations.
func (d *MultiData) GPUGenerations() map[string]hardware.Generation {
	m := map[string]hardware.Generation{}
	for _, g := range d.gpuList() {
		m[g.Name] = g.Generation
	}
	return m
}

// HeldOut predicts the data the fold keeps with the fit's values and scores it, one figure per
// source, each marked with the fold's name.
func (d *MultiData) HeldOut(name string, res *calibration.MultiResult, f Fold) ([]calibration.HeldOut, error) {
	var out []calibration.HeldOut
	if d.Seed != nil && f.keepDeployment(SeedSource, d.Seed.Deployment) {
		p, from := res.ParamsFor(d.Seed.Deployment)
		for _, def := range param.Defs() {
			if def.Level == param.LevelWorkload {
				p[def.ID] = d.Seed.Base[def.ID]
			}
		}
		m, err := d.Seed.Predict(p)
		if err != nil {
			return nil, fmt.Errorf("%s: held-out seed matrix: %w", name, err)
		}
		h := calibration.MatrixHeldOut(d.Seed, m)
		h.Source, h.Params = SeedSource, from
		out = append(out, h)
	}
	choose := func(dep *deploy.Deployment) (param.Values, string, error) {
		p, from := res.ParamsFor(dep)
		return p, from, nil
	}
	keepCase := func(c *Case) bool { return c.Expressed() && f.KeepCase(c) }
	var rows []Row
	for _, r := range d.Rows {
		if keep(f.Source, r.Source) {
			rows = append(rows, r)
		}
	}
	if len(rows) > 0 {
		prov := func(dep *deploy.Deployment) param.Summary { return res.ProvenanceFor(dep) }
		rep := Predict(rows, keepCase, Options{Params: choose, Provenance: prov, Workers: d.Workers, Seed: d.Opt.Seed, StepByStep: d.Opt.StepByStep})
		for _, s := range rep.Sources {
			if s.Expressed > 0 {
				out = append(out, rep.HeldOut(s.Source))
			}
		}
	}
	for i := range d.Results {
		r := &d.Results[i]
		if !f.keepDeployment(r.Name, r.deployment()) {
			continue
		}
		p, from := res.ParamsFor(r.deployment())
		srv, err := sim.NewServer(r.deployment(), p)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, r.Name, err)
		}
		q := *r.Prepared
		q.Server, q.Params = srv, from
		rep := NewReport(RunPrepared([]*Prepared{&q}, Options{Workers: d.Workers, Seed: d.Opt.Seed}))
		h := rep.HeldOut(ResultSource)
		h.Source = r.Name
		out = append(out, h)
	}
	for i := range out {
		out[i].Fold = name
	}
	return out, nil
}

// CVModes are the multi-source cross-validations: leave one source, GPU or model family out.
func CVModes() map[string]string {
	return map[string]string{"loso": "source", "logo": "GPU", "lofo": "model family"}
}

// CVHooks let a caller follow a cross-validation; nil functions are not called.
type CVHooks struct {
	// Start is called before fold i (0-based) of n, which holds out name; it returns the fit's
	// progress function (nil: none).
	Start func(i, n int, name string) func(calibration.Progress)
	// Done is called after the fold's fit and held-out scoring.
	Done func(i, n int, name string, res *calibration.MultiResult, sources int)
}

// CrossValidate fits the data without each source (loso), GPU (logo) or model family (lofo) in
// turn and predicts the held-out part with full workloads and validate's scoring. It returns the
// held-out figures of every fold and each source's notes.
func (d *MultiData) CrossValidate(mode string, set calibration.Settings, h CVHooks) ([]calibration.HeldOut, map[string][]string, error) {
	var folds []string
	switch mode {
	case "loso":
		folds = d.Names()
	case "logo":
		folds = d.GPUs()
	case "lofo":
		folds = d.Families()
	default:
		return nil, nil, fmt.Errorf("cross-validation %q: want loso, logo or lofo", mode)
	}
	notes := map[string][]string{}
	var held []calibration.HeldOut
	for i, name := range folds {
		var train, test Fold
		out, in := func(s string) bool { return s != name }, func(s string) bool { return s == name }
		switch mode {
		case "loso":
			train.Source, test.Source = out, in
		case "logo":
			train.GPU, test.GPU = out, in
		default:
			train.Family, test.Family = out, in
		}
		srcs := d.Sources(train)
		for _, s := range srcs {
			if _, ok := notes[s.Name]; !ok {
				notes[s.Name] = s.Notes
			}
		}
		fs := set
		fs.Progress = nil
		if h.Start != nil {
			fs.Progress = h.Start(i, len(folds), name)
		}
		res, err := calibration.FitMulti(&calibration.MultiProblem{Sources: srcs}, &fs)
		if err != nil {
			return nil, nil, fmt.Errorf("fold %s: %w", name, err)
		}
		ho, err := d.HeldOut(name, res, test)
		if err != nil {
			return nil, nil, err
		}
		if h.Done != nil {
			h.Done(i, len(folds), name, res, len(srcs))
		}
		held = append(held, ho...)
	}
	return held, notes, nil
}

// MultiReport is the JSON report of a multi-source fit or its cross-validation (fit --report).
type MultiReport struct {
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

// JSONSafe is the report with every NaN or infinite held-out figure as -1 (JSON has no NaN).
func (r MultiReport) JSONSafe() MultiReport {
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

// ParamSets is a multi-source fit's values as a parameter file of sets, one per level and key,
// with the entries the data saw (an entry no simulation moved stays at its prior, and the file
// leaves it out). gens gives the gpu sets' generations.
func ParamSets(res *calibration.MultiResult, gens map[string]hardware.Generation, note string) *scenario.ParamsFile {
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
