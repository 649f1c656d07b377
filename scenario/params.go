package scenario

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/tomlx"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
)

// CalibrationKey ties a fitted parameter set to what it was fitted on.
type CalibrationKey struct {
	GPU string `toml:"gpu"`
	// Generation is the GPU's generation (a calibration transfers its GPU-level parameters to
	// GPUs of the same generation); read from the catalog when absent.
	Generation    string `toml:"generation,omitempty"`
	Model         string `toml:"model"`
	Family        string `toml:"family"`
	Engine        string `toml:"engine"`
	EngineVersion string `toml:"engine_version"`
	Note          string `toml:"note,omitempty"`
}

// ParamsFile is a parameter set on disk: where it came from, and the values it sets (the
// parameters a fit moved; the others come from the priors of whatever deployment uses it).
//
// A multi-source fit writes sets instead ([[set]] tables, no [calibration] or [params]): one per
// level and key, each applied only to the deployments with that key (ParamSet).
type ParamsFile struct {
	Calibration CalibrationKey     `toml:"calibration"`
	Params      map[string]float64 `toml:"params"`
	Keyed       []ParamSet         `toml:"set"`
	// Held says, for parameters the file sets at a value a fit held fixed (not fitted), where
	// the value came from; Encode writes it as a comment.
	Held map[string]string `toml:"-"`
}

// ParamSet is the values of one level fitted for one key: the gpu-level values of a GPU (its
// catalog name; transferred to another GPU of its generation when the file has no other set of
// that generation), the engine-level values of an engine release series ("vllm 0.10.x (V1)",
// priors.LevelKeys), or the model-level values of a model.
type ParamSet struct {
	Level string `toml:"level"`
	Key   string `toml:"key"`
	// Generation is a gpu set's GPU generation; read from the catalog when absent.
	Generation string             `toml:"generation,omitempty"`
	Note       string             `toml:"note,omitempty"`
	Params     map[string]float64 `toml:"params"`
}

// generation is the set's GPU generation ("" when neither the set nor the catalog says).
func (s *ParamSet) generation() hardware.Generation {
	k := CalibrationKey{GPU: s.Key, Generation: s.Generation}
	return k.generation()
}

// NewParamsFile is the parameter file of p fitted on deployment d: keyed by d's GPU, model,
// family and engine version, so that Resolve finds it calibrated for d and transferred for its
// relatives. note says how it was made.
//
// Only the parameters in set are written (nil: all of them): a fit writes the ones it moved, so
// that the file sets what the measurements identified and nothing it merely started from.
func NewParamsFile(d *deploy.Deployment, p param.Values, set []param.ID, note string) *ParamsFile {
	m := p.Map()
	if set != nil {
		m = map[string]float64{}
		for _, id := range set {
			m[id.Def().Name] = p[id]
		}
	}
	return &ParamsFile{Calibration: CalibrationKey{GPU: d.Hardware.GPU.Name, Generation: string(d.Hardware.GPU.Generation),
		Model: d.Model.Name, Family: d.Model.Family, Engine: d.Engine.Name, EngineVersion: d.Engine.Version, Note: note}, Params: m}
}

// NewFitParamsFile is the parameter file a fit writes: the parameters it moved (free) at their
// fitted values, and every parameter it held fixed at a value that is not the deployment's prior
// (a built-in calibration, another parameter file, a scenario's [params]: prov says), so that
// --params FILE gives the deployment the parameters the fit ended with. Without the held values
// the file would revert them to priors where it replaces the built-in calibrations.
func NewFitParamsFile(d *deploy.Deployment, p param.Values, free []param.ID, prov *param.Provenance, note string) *ParamsFile {
	set := append([]param.ID(nil), free...)
	held := map[string]string{}
	for _, def := range param.Defs() {
		switch prov[def.ID].Kind {
		case param.OriginPrior, param.OriginWorkload, "":
			continue
		}
		if !slices.Contains(set, def.ID) {
			set = append(set, def.ID)
			held[def.Name] = prov[def.ID].Detail
		}
	}
	f := NewParamsFile(d, p, set, note)
	if len(held) > 0 {
		f.Held = held
	}
	return f
}

// ParseParamsFile reads a params TOML file strictly.
func ParseParamsFile(data []byte, name string) (*ParamsFile, error) {
	var f ParamsFile
	if _, err := tomlx.Decode(data, name, &f, "see `servesim config` for the parameter names"); err != nil {
		return nil, err
	}
	if len(f.Keyed) > 0 {
		if len(f.Params) > 0 || f.Calibration != (CalibrationKey{}) {
			return nil, fmt.Errorf("%s: [[set]] tables and [calibration]/[params] in one file: a parameter file is either one set keyed by [calibration] or several [[set]] tables", name)
		}
		if err := checkSets(f.Keyed); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return &f, nil
	}
	if len(f.Params) == 0 {
		return nil, fmt.Errorf("%s: no [params] table", name)
	}
	if g := f.Calibration.Generation; g != "" {
		if err := hardware.CheckGeneration(hardware.Generation(g)); err != nil {
			return nil, fmt.Errorf("%s: [calibration] %w", name, err)
		}
	}
	p := param.Priors()
	if err := p.Set(f.Params); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &f, nil
}

// checkSets checks each set: a level that keys values, a key, parameters of its level only, values
// inside their bounds, and no key twice.
func checkSets(sets []ParamSet) error {
	seen := map[string]bool{}
	for i, st := range sets {
		where := fmt.Sprintf("set %d (level %q, key %q)", i+1, st.Level, st.Key)
		l := param.Level(st.Level)
		if l != param.LevelGPU && l != param.LevelEngine && l != param.LevelModel {
			return fmt.Errorf("%s: level: want gpu, engine or model", where)
		}
		if strings.TrimSpace(st.Key) == "" {
			return fmt.Errorf("%s: key: want the GPU's catalog name, the engine series (\"vllm 0.10.x (V1)\") or the model's name", where)
		}
		id := st.Level + "\x00" + strings.ToLower(st.Key)
		if seen[id] {
			return fmt.Errorf("%s: a second set for the same level and key", where)
		}
		seen[id] = true
		if len(st.Params) == 0 {
			return fmt.Errorf("%s: no params", where)
		}
		if st.Generation != "" {
			if l != param.LevelGPU {
				return fmt.Errorf("%s: generation %q: only a gpu set has a GPU generation", where, st.Generation)
			}
			if err := hardware.CheckGeneration(hardware.Generation(st.Generation)); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
		}
		for _, n := range SortedParamNames(st.Params) {
			pid, ok := param.ByName(n)
			if !ok {
				return fmt.Errorf("%s: unknown parameter %q (see `servesim config` for the parameter names)", where, n)
			}
			if d := pid.Def(); d.Level != l {
				return fmt.Errorf("%s: %s is a %s-level parameter, not %s", where, n, d.Level, l)
			}
		}
		p := param.Priors()
		if err := p.Set(st.Params); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if err := p.Validate(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	return nil
}

// LoadParamsFile reads a params file from disk.
func LoadParamsFile(path string) (*ParamsFile, error) {
	data, err := fsutil.ReadFile(path, fsutil.MaxConfigBytes)
	if err != nil {
		return nil, err
	}
	return ParseParamsFile(data, path)
}

// Values returns the generic priors overridden by the file's values.
func (f *ParamsFile) Values() param.Values {
	p := param.Priors()
	_ = p.Set(f.Params) // validated on parse
	return p
}

// Over returns base with the file's values in place of the parameters it sets.
func (f *ParamsFile) Over(base param.Values) param.Values {
	fv := f.Values()
	for _, d := range param.Defs() {
		if f.Sets(d.ID) {
			base[d.ID] = fv[d.ID]
		}
	}
	return base
}

// Sets reports whether the file sets parameter id.
func (f *ParamsFile) Sets(id param.ID) bool {
	_, ok := f.Params[id.Def().Name]
	return ok
}

// Encode writes a params file in table order with units, bounds and levels as comments; only
// the parameters the file sets.
func (f *ParamsFile) Encode(w *bytes.Buffer) {
	if len(f.Keyed) > 0 {
		f.encodeSets(w)
		return
	}
	fmt.Fprintln(w, "# servesim parameter set. Load with --params FILE.")
	fmt.Fprintln(w, "# It sets the parameters below; every other one takes the prior of the deployment that uses it.")
	fmt.Fprintln(w, "# A built-in calibration applies its gpu-level values to its GPU (and, transferred, to GPUs of the")
	fmt.Fprintln(w, "# same generation), its engine-level values to its engine version and its model-level values to its model.")
	fmt.Fprintln(w, "[calibration]")
	k := f.Calibration
	for _, kv := range [][2]string{{"gpu", k.GPU}, {"generation", k.Generation}, {"model", k.Model}, {"family", k.Family}, {"engine", k.Engine}, {"engine_version", k.EngineVersion}, {"note", k.Note}} {
		if kv[1] != "" || (kv[0] != "note" && kv[0] != "generation") {
			fmt.Fprintf(w, "%s = %q\n", kv[0], kv[1])
		}
	}
	fmt.Fprintln(w, "\n[params]")
	p := f.Values()
	for i, d := range param.Defs() {
		if f.Sets(d.ID) {
			held := ""
			if h, ok := f.Held[d.Name]; ok {
				held = "; held fixed by the fit at: " + h
			}
			fmt.Fprintf(w, "%s = %s # %s [%g, %g] %s%s\n", d.Name, fmtExact(p[i]), d.Unit, d.Lo, d.Hi, d.Level, held)
		}
	}
}

// encodeSets writes a file of sets (a multi-source fit's).
func (f *ParamsFile) encodeSets(w *bytes.Buffer) {
	fmt.Fprintln(w, "# servesim parameter sets. Load with --params FILE.")
	fmt.Fprintln(w, "# Each set holds one level's values for one key: a gpu set applies to its GPU (and, transferred, to")
	fmt.Fprintln(w, "# another GPU of its generation when no other set here has that generation), an engine set to its")
	fmt.Fprintln(w, "# engine release series, a model set to its model. Every value no set gives takes the deployment's prior.")
	for _, st := range f.Keyed {
		fmt.Fprintln(w, "\n[[set]]")
		fmt.Fprintf(w, "level = %q\nkey = %q\n", st.Level, st.Key)
		if st.Generation != "" {
			fmt.Fprintf(w, "generation = %q\n", st.Generation)
		}
		if st.Note != "" {
			fmt.Fprintf(w, "note = %q\n", st.Note)
		}
		fmt.Fprintln(w, "[set.params]")
		p := param.Priors()
		_ = p.Set(st.Params) // validated on parse or built from a fit
		for i, d := range param.Defs() {
			if _, ok := st.Params[d.Name]; ok {
				fmt.Fprintf(w, "%s = %s # %s [%g, %g]\n", d.Name, fmtExact(p[i]), d.Unit, d.Lo, d.Hi)
			}
		}
	}
}

// Source says how a prediction's parameters relate to measurements.
type Source string

const (
	// SourceCalibrated: fitted on this GPU, model family and engine version.
	SourceCalibrated Source = "calibrated"
	// SourceTransferred: fitted on another GPU (or engine version) of the same model family; the
	// dimensionless efficiencies carry over, the hardware facts are the new GPU's.
	SourceTransferred Source = "transferred"
	// SourcePrior: no calibration applies; physical priors only.
	SourcePrior Source = "prior"
)

// Match classifies how a calibration applies to a deployment.
func (k *CalibrationKey) Match(d *deploy.Deployment) Source {
	if k == nil || k.Model == "" {
		return SourcePrior
	}
	sameFamily := strings.EqualFold(k.Family, d.Model.Family) || strings.EqualFold(k.Model, d.Model.Name)
	if !sameFamily || !strings.EqualFold(k.Engine, d.Engine.Name) {
		return SourcePrior
	}
	if d.Hardware.GPU.Matches(k.GPU) && k.EngineVersion == d.Engine.Version {
		return SourceCalibrated
	}
	return SourceTransferred
}

// RelativeUncertainty is the half-width of the interval servesim puts around a throughput
// prediction, as a fraction, by parameter source. Calibrated: the seed's cross-validated decode
// error (about 10 % on held-out cells); transferred: twice that, as efficiencies move between GPU
// generations; prior: the uncalibrated model's spread on the seed (up to about 30 % on single
// cells). These are rules of thumb from one measured system, stated as such in reports.
func (s Source) RelativeUncertainty() float64 {
	switch s {
	case SourceCalibrated:
		return 0.10
	case SourceTransferred:
		return 0.20
	}
	return 0.30
}

// generation is the calibration's GPU generation: the key's, else the built-in catalog's entry
// for its GPU ("" when neither says).
func (k *CalibrationKey) generation() hardware.Generation {
	if k.Generation != "" {
		return hardware.Generation(k.Generation)
	}
	if g, err := hardware.BuiltinCatalog().Find(k.GPU); err == nil {
		return g.Generation
	}
	return ""
}

// levelMatch says how a calibration applies to a deployment's parameters of one level: gpu-level
// values are calibrated on the GPU they were fitted on and transferred to other GPUs of its
// generation; engine-level values apply to the same engine and version; model-level values to
// the same model. Workload-level parameters are never taken from a calibration.
func (k *CalibrationKey) levelMatch(l param.Level, d *deploy.Deployment) (param.OriginKind, string) {
	switch l {
	case param.LevelGPU:
		if d.Hardware.GPU.Matches(k.GPU) {
			return param.OriginCalibrated, "calibrated for " + k.GPU
		}
		if gen := k.generation(); gen != "" && gen == d.Hardware.GPU.Generation {
			return param.OriginTransferred, fmt.Sprintf("transferred from %s (same generation, %s)", k.GPU, gen.Label())
		}
	case param.LevelEngine:
		if strings.EqualFold(k.Engine, d.Engine.Name) && k.EngineVersion == d.Engine.Version {
			return param.OriginCalibrated, fmt.Sprintf("calibrated for %s %s", k.Engine, k.EngineVersion)
		}
	case param.LevelModel:
		if strings.EqualFold(k.Model, d.Model.Name) {
			return param.OriginCalibrated, "calibrated for " + k.Model
		}
	}
	return "", ""
}

// fmtExact writes v with the fewest digits that read back as v: a parameter file reproduces the
// fit exactly (six digits moved the seed's objective by more than the shipped-calibration test's
// tolerance, the speculative draws flipping on the rounding).
func fmtExact(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
