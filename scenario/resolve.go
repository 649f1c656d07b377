package scenario

import (
	"crypto/sha256"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/model/priors"
)

//go:embed data
var dataFS embed.FS

// BuiltinCalibrations returns the shipped calibrated parameter sets (data/calibrated_*.toml),
// in name order.
func BuiltinCalibrations() []*ParamsFile {
	names, _ := fs.Glob(dataFS, "data/calibrated_*.toml")
	sort.Strings(names)
	var out []*ParamsFile
	for _, n := range names {
		data, err := dataFS.ReadFile(n)
		if err != nil {
			panic(err)
		}
		f, err := ParseParamsFile(data, n)
		if err != nil {
			panic(fmt.Sprintf("embedded calibration: %v", err))
		}
		out = append(out, f)
	}
	return out
}

// ResolveOptions are the command-line choices that affect resolution.
type ResolveOptions struct {
	// ParamsFile, when set, is used instead of the built-in calibrations.
	ParamsFile string
	// Uncalibrated forces the physical priors.
	Uncalibrated bool
}

// Resolved is a scenario ready to simulate.
type Resolved struct {
	// Scenario is the scenario as resolved: every engine flag given (vLLM's defaults filled in),
	// the hardware count set, the default contexts fitted to max_model_len.
	Scenario *Scenario
	// Given is the scenario as it was given.
	Given *Scenario
	// Defaults are the engine settings left to vLLM, with their rules; ModelFrom and DrafterFrom
	// say where the model descriptions were found; Notes are remarks for the user, ProtocolNotes
	// those about the benchmark matrix (contexts dropped), for the commands that run it.
	Defaults               []deploy.Default
	ModelFrom, DrafterFrom string
	ModelPath, DrafterPath string
	Notes, ProtocolNotes   []string
	Deployment             *deploy.Deployment
	Params                 param.Values
	// Provenance says where each parameter's value comes from (prior of the GPU generation,
	// calibrated for a GPU, engine version or model, transferred, a file, an override).
	Provenance param.Provenance
	// Summary is the provenance by parameter group (priors.Summarize): what the
	// prediction intervals widen with.
	Summary param.Summary
	Source  Source
	// Calibration is the parameter set's key (nil for priors).
	Calibration *CalibrationKey
	ParamsFrom  string // "priors", "built-in: <note>", or the file name
	// Policy is how Params were chosen; it chooses the same way for other deployments (the
	// planner's candidates).
	Policy *ParamsPolicy
}

// Resolve builds the deployment and chooses parameters: a user file (the options', else the
// scenario's params_file), else the built-in calibration that matches the deployment (calibrated
// or transferred), else the priors; then the scenario's [params] overrides. See ParamsPolicy.
func (s *Scenario) Resolve(o ResolveOptions) (*Resolved, error) {
	b, err := s.Build()
	if err != nil {
		return nil, err
	}
	d := b.Deployment
	pol, err := s.Policy(o)
	if err != nil {
		return nil, err
	}
	c, err := pol.Choose(d)
	if err != nil {
		return nil, err
	}
	return &Resolved{Scenario: b.Resolved, Given: s, Defaults: b.Defaults, ModelFrom: b.ModelFrom, DrafterFrom: b.DrafterFrom,
		ModelPath: b.ModelPath, DrafterPath: b.DrafterPath, Notes: b.Notes, ProtocolNotes: b.ProtocolNotes, Deployment: d, Params: c.Params, Provenance: c.Provenance, Summary: c.Summary, Source: c.Source, Calibration: c.Calibration,
		ParamsFrom: c.From, Policy: pol}, nil
}

// Policy is the scenario's parameter policy: the options' parameter file or --uncalibrated,
// else the scenario's params_file (relative to its file) or uncalibrated, and its [params].
func (s *Scenario) Policy(o ResolveOptions) (*ParamsPolicy, error) {
	if o.ParamsFile == "" && !o.Uncalibrated {
		if s.ParamsFile != "" && s.Uncalibrated {
			return nil, fmt.Errorf("params_file and uncalibrated contradict each other")
		}
		o.ParamsFile, o.Uncalibrated = s.path(s.ParamsFile), s.Uncalibrated
	}
	return NewParamsPolicy(o, s.Params)
}

// ParamsPolicy chooses a deployment's parameters, the one way every command does: a parameter
// file when given (its calibration key says whether it is calibrated, transferred or prior for
// the deployment), the physical priors when uncalibrated, else the built-in calibration that
// matches the deployment best (calibrated over transferred over none); then the overrides (a
// scenario's [params]) apply and the set is validated.
type ParamsPolicy struct {
	file         *ParamsFile
	fileName     string
	uncalibrated bool
	builtins     []*ParamsFile
	overrides    map[string]float64
	sets         *setIndex // the file's [[set]] tables by level and key (nil: none)
}

// setIndex finds a parameter file's [[set]] tables for a deployment without walking them: gpu
// sets by lower-case key and by generation (looked up in the catalog once, when the set does not
// say), engine and model sets by lower-case key. Where two sets share a key the later one is
// found, as a walk in file order keeps it.
type setIndex struct {
	sets []ParamSet
	// gpu, engine and model map a lower-case key to the position of its set in sets.
	gpu, engine, model map[string]int
	// byGen lists the gpu sets of each generation in file order; stock is the one set of a card
	// at its stock settings among them (stockSet), nil when there is none or several.
	byGen map[hardware.Generation][]*ParamSet
	stock map[hardware.Generation]*ParamSet
}

func newSetIndex(sets []ParamSet) *setIndex {
	ix := &setIndex{sets: sets, gpu: map[string]int{}, engine: map[string]int{}, model: map[string]int{},
		byGen: map[hardware.Generation][]*ParamSet{}, stock: map[hardware.Generation]*ParamSet{}}
	// The catalog's generations by lower-case name and alias, the first entry that has it (as
	// hardware.Catalog.Find): one catalog walk, not one per set.
	catalogGen := map[string]hardware.Generation{}
	for _, g := range hardware.BuiltinCatalog().GPUs {
		for _, n := range append([]string{g.Name}, g.Aliases...) {
			if _, ok := catalogGen[strings.ToLower(n)]; !ok {
				catalogGen[strings.ToLower(n)] = g.Generation
			}
		}
	}
	for i := range sets {
		st := &sets[i]
		switch param.Level(st.Level) {
		case param.LevelGPU:
			key := strings.ToLower(strings.TrimSpace(st.Key))
			ix.gpu[key] = i
			g := hardware.Generation(st.Generation)
			if g == "" {
				g = catalogGen[key]
			}
			if g != "" {
				ix.byGen[g] = append(ix.byGen[g], st)
			}
		case param.LevelEngine:
			ix.engine[strings.ToLower(st.Key)] = i
		case param.LevelModel:
			ix.model[strings.ToLower(st.Key)] = i
		}
	}
	for g, list := range ix.byGen {
		ix.stock[g] = stockSet(list)
	}
	return ix
}

// find is the set of a level's map for key (nil: none).
func (ix *setIndex) find(m map[string]int, key string) *ParamSet {
	if i, ok := m[strings.ToLower(key)]; ok {
		return &ix.sets[i]
	}
	return nil
}

// exactGPU is the last set whose key names the GPU (its name or an alias).
func (ix *setIndex) exactGPU(g *hardware.GPU) *ParamSet {
	best := -1
	for _, n := range append([]string{g.Name}, g.Aliases...) {
		if i, ok := ix.gpu[strings.ToLower(strings.TrimSpace(n))]; ok && i > best {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	return &ix.sets[best]
}

// NewParamsPolicy reads the parameter file, if any, and checks the overrides.
func NewParamsPolicy(o ResolveOptions, overrides map[string]float64) (*ParamsPolicy, error) {
	pol := &ParamsPolicy{uncalibrated: o.Uncalibrated, overrides: overrides}
	switch {
	case o.ParamsFile != "" && o.Uncalibrated:
		return nil, fmt.Errorf("--params and --uncalibrated contradict each other")
	case o.ParamsFile != "":
		f, err := LoadParamsFile(o.ParamsFile)
		if err != nil {
			return nil, fmt.Errorf("--params: %w", err)
		}
		pol.file, pol.fileName = f, displayPath(o.ParamsFile)
		if len(f.Keyed) > 0 {
			pol.sets = newSetIndex(f.Keyed)
		}
	case o.Uncalibrated:
	default:
		pol.builtins = BuiltinCalibrations()
	}
	if len(overrides) > 0 {
		p := param.Priors()
		if err := p.Set(overrides); err != nil {
			return nil, err
		}
	}
	return pol, nil
}

// ParamsChoice is a deployment's parameter set and where it comes from.
type ParamsChoice struct {
	Params param.Values
	// Provenance is the origin of each value; Summary sums it up by parameter group
	// (priors.Summarize).
	Provenance param.Provenance
	Summary    param.Summary
	// Source sums the provenance up for the planner's intervals: calibrated when the
	// deployment's GPU, engine version and model each have calibrated values, prior when no value
	// comes from a calibration, transferred otherwise.
	Source Source
	// Calibration is the key of the (first) calibration any value came from (nil for priors).
	Calibration *CalibrationKey
	// From describes the choice: "priors", the built-in calibrations and the levels they set, or
	// the file name, and the overridden parameters.
	From string
}

// Choose returns the parameters for d: its priors (priors.Of: the GPU
// generation's for gpu-level parameters), then a parameter file's values (all it sets, whatever
// it was fitted on), or else each built-in calibration's values at the levels it matches
// (CalibrationKey.levelMatch: its GPU, or transferred to its GPU's generation; its engine
// version; its model), calibrated before transferred; then the overrides.
func (pol *ParamsPolicy) Choose(d *deploy.Deployment) (ParamsChoice, error) {
	p, prov := priors.Of(d)
	c := ParamsChoice{Params: p, Provenance: prov, Source: SourcePrior, From: "priors"}
	switch {
	case pol.file != nil && len(pol.file.Keyed) > 0:
		pol.applySets(d, &c)
	case pol.file != nil:
		k := pol.file.Calibration
		c.Calibration = &k
		c.Source = k.Match(d)
		c.From = pol.fileName
		fv := pol.file.Values()
		for _, def := range param.Defs() {
			if pol.file.Sets(def.ID) {
				c.Params[def.ID] = fv[def.ID]
				match, _ := k.levelMatch(def.Level, d)
				c.Provenance[def.ID] = param.Origin{Kind: param.OriginFile, Detail: fmt.Sprintf("file %s (fitted on %s, %s %s, %s)", pol.fileName, k.GPU, k.Engine, k.EngineVersion, k.Model), Match: match}
			}
		}
	case pol.uncalibrated:
	default:
		pol.applyBuiltins(d, &c)
	}
	if len(pol.overrides) > 0 {
		if err := c.Params.Set(pol.overrides); err != nil {
			return c, err
		}
		for name := range pol.overrides {
			id, _ := param.ByName(name)
			c.Provenance[id] = param.Origin{Kind: param.OriginSet, Detail: "set by the scenario's [params]"}
		}
		c.From += " + [params] overrides (" + strings.Join(SortedParamNames(pol.overrides), ", ") + ")"
	}
	c.Summary = priors.Summarize(d, &c.Provenance)
	if err := c.Params.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// applyBuiltins takes each parameter from the built-in calibration that matches its level best.
func (pol *ParamsPolicy) applyBuiltins(d *deploy.Deployment, c *ParamsChoice) {
	calibrated := map[param.Level]bool{}
	var used []string
	for _, def := range param.Defs() {
		for _, f := range pol.builtins {
			if !f.Sets(def.ID) {
				continue
			}
			kind, detail := f.Calibration.levelMatch(def.Level, d)
			cur := c.Provenance[def.ID].Kind
			if kind == "" || cur == param.OriginCalibrated || (cur == param.OriginTransferred && kind == param.OriginTransferred) {
				continue
			}
			c.Params[def.ID] = f.Values()[def.ID]
			c.Provenance[def.ID] = param.Origin{Kind: kind, Detail: detail}
			if kind == param.OriginCalibrated {
				calibrated[def.Level] = true
			}
			if c.Calibration == nil {
				k := f.Calibration
				c.Calibration = &k
			}
			if u := f.Calibration.Note; !slices.Contains(used, u) {
				used = append(used, u)
			}
		}
	}
	if len(used) == 0 {
		return
	}
	c.Source = SourceTransferred
	if calibrated[param.LevelGPU] && calibrated[param.LevelEngine] && calibrated[param.LevelModel] {
		c.Source = SourceCalibrated
	}
	var levels []string
	for _, l := range []param.Level{param.LevelGPU, param.LevelEngine, param.LevelModel} {
		for _, def := range param.Defs() {
			if def.Level == l && (c.Provenance[def.ID].Kind == param.OriginCalibrated || c.Provenance[def.ID].Kind == param.OriginTransferred) {
				levels = append(levels, string(l))
				break
			}
		}
	}
	c.From = fmt.Sprintf("built-in calibration (%s) at the %s level(s), priors elsewhere", strings.Join(used, "; "), strings.Join(levels, ", "))
}

// stockSet is, among GPU sets of one generation, the one of a card at its stock settings when the
// others are that card or others run off their stock settings (a memory-clock offset, a power
// cap: hardware.BaseName); nil when two stock cards differ.
func stockSet(sets []*ParamSet) *ParamSet {
	var stock *ParamSet
	for _, st := range sets {
		if _, derived := hardware.BaseName(st.Key); derived {
			continue
		}
		if stock != nil {
			return nil
		}
		stock = st
	}
	return stock
}

// applySets takes each parameter from the file's set for the deployment's key at the
// parameter's level (priors.LevelKeys): calibrated. A gpu-level parameter with no set for the
// deployment's GPU is transferred from the file's one set of the GPU's generation; with several
// such sets (an H100 and an H200) none is chosen over the others and the priors stay, as From
// says.
func (pol *ParamsPolicy) applySets(d *deploy.Deployment, c *ParamsChoice) {
	keys := priors.Keys(d)
	gen := d.Hardware.GPU.Generation
	ix := pol.sets
	exact := [3]*ParamSet{ix.exactGPU(&d.Hardware.GPU), ix.find(ix.engine, keys.Engine), ix.find(ix.model, keys.Model)}
	var sameGen []*ParamSet
	var baseSet *ParamSet // the set of the stock card this one is run off (hardware.BaseName)
	base, derived := hardware.BaseName(d.Hardware.GPU.Name)
	if exact[0] == nil {
		if derived {
			baseSet = ix.find(ix.gpu, strings.TrimSpace(base))
		}
		if gen != "" {
			sameGen = ix.byGen[gen]
		}
	}
	var applied []string
	apply := func(st *ParamSet, match param.OriginKind, how string) {
		fv := param.Priors()
		_ = fv.Set(st.Params) // validated on parse
		for _, def := range param.Defs() {
			if _, ok := st.Params[def.Name]; ok && string(def.Level) == st.Level {
				c.Params[def.ID] = fv[def.ID]
				c.Provenance[def.ID] = param.Origin{Kind: param.OriginFile, Match: match,
					Detail: fmt.Sprintf("file %s, %s set %q (%s)", pol.fileName, st.Level, st.Key, how)}
			}
		}
		applied = append(applied, fmt.Sprintf("%s %s (%s)", st.Level, st.Key, how))
	}
	calibrated := 0
	for i, st := range exact {
		if st != nil {
			apply(st, param.OriginCalibrated, "calibrated")
			calibrated++
		} else if i == 0 && baseSet != nil {
			apply(baseSet, param.OriginTransferred, "transferred: the same card at its stock settings")
			sameGen = []*ParamSet{baseSet}
		} else if i == 0 && len(sameGen) == 1 {
			apply(sameGen[0], param.OriginTransferred, "transferred: same generation, "+gen.Label())
		} else if i == 0 && len(sameGen) > 1 {
			if st := ix.stock[gen]; st != nil {
				apply(st, param.OriginTransferred, "transferred: same generation, "+gen.Label()+", the one stock card among its sets")
				sameGen = []*ParamSet{st}
			}
		}
	}
	note := ""
	if exact[0] == nil && len(sameGen) > 1 {
		const shown = 8 // names listed; the rest counted
		var names []string
		for _, st := range sameGen[:min(len(sameGen), shown)] {
			names = append(names, st.Key)
		}
		if n := len(sameGen) - shown; n > 0 {
			names = append(names, fmt.Sprintf("and %d more", n))
		}
		note = fmt.Sprintf("; gpu level: priors, as the file has sets for several GPUs of %s (%s) and none for %s", gen.Label(), strings.Join(names, ", "), d.Hardware.GPU.Name)
	}
	switch {
	case len(applied) == 0:
		c.From = fmt.Sprintf("%s: no set for gpu %q, engine %q or model %q, so priors%s", pol.fileName, keys.GPU, keys.Engine, keys.Model, note)
		return
	case calibrated == 3:
		c.Source = SourceCalibrated
	default:
		c.Source = SourceTransferred
	}
	c.From = fmt.Sprintf("%s: sets %s, priors elsewhere%s", pol.fileName, strings.Join(applied, ", "), note)
}

// Describe names what the policy draws on, values included, so that two policies that can
// choose differently describe differently (the planner's fingerprint covers it).
func (pol *ParamsPolicy) Describe() string {
	var ref string
	switch {
	case pol.file != nil:
		// The values by their digest: a file of many sets would otherwise be copied whole into
		// every plan that describes its policy.
		h := sha256.New()
		fmt.Fprintf(h, "%v", pol.file.Params)
		for i := range pol.file.Keyed {
			fmt.Fprintf(h, " %+v", pol.file.Keyed[i])
		}
		ref = fmt.Sprintf("file %s sha256:%x", pol.fileName, h.Sum(nil))
	case pol.uncalibrated:
		ref = "priors"
	default:
		ref = "built-in calibrations"
		for _, f := range pol.builtins {
			ref += fmt.Sprintf("; %+v %v", f.Calibration, f.Params)
		}
	}
	if len(pol.overrides) > 0 {
		names := SortedParamNames(pol.overrides)
		ref += fmt.Sprintf(" + overrides %v", names)
		for _, k := range names {
			ref += fmt.Sprintf(" %s=%g", k, pol.overrides[k])
		}
	}
	return ref
}
