package scenario

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/tomlx"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
)

// CalibrationKey ties a fitted parameter set to what it was fitted on.
type CalibrationKey struct {
	GPU           string `toml:"gpu"`
	Model         string `toml:"model"`
	Family        string `toml:"family"`
	Engine        string `toml:"engine"`
	EngineVersion string `toml:"engine_version"`
	Note          string `toml:"note,omitempty"`
}

// ParamsFile is a parameter set on disk: where it came from, and the values.
type ParamsFile struct {
	Calibration CalibrationKey     `toml:"calibration"`
	Params      map[string]float64 `toml:"params"`
}

// NewParamsFile is the parameter file of p fitted on deployment d: keyed by d's GPU, model,
// family and engine version, so that Resolve finds it calibrated for d and transferred for its
// relatives. note says how it was made.
func NewParamsFile(d *deploy.Deployment, p param.Values, note string) *ParamsFile {
	return &ParamsFile{Calibration: CalibrationKey{GPU: d.Hardware.GPU.Name, Model: d.Model.Name, Family: d.Model.Family,
		Engine: d.Engine.Name, EngineVersion: d.Engine.Version, Note: note}, Params: p.Map()}
}

// ParseParamsFile reads a params TOML file strictly.
func ParseParamsFile(data []byte, name string) (*ParamsFile, error) {
	var f ParamsFile
	if _, err := tomlx.Decode(data, name, &f, "see `servesim config` for the parameter names"); err != nil {
		return nil, err
	}
	if len(f.Params) == 0 {
		return nil, fmt.Errorf("%s: no [params] table", name)
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

// LoadParamsFile reads a params file from disk.
func LoadParamsFile(path string) (*ParamsFile, error) {
	data, err := fsutil.ReadFile(path, fsutil.MaxConfigBytes)
	if err != nil {
		return nil, err
	}
	return ParseParamsFile(data, path)
}

// Values returns priors overridden by the file's values.
func (f *ParamsFile) Values() param.Values {
	p := param.Priors()
	_ = p.Set(f.Params) // validated on parse
	return p
}

// Encode writes a params file in table order with units and bounds as comments.
func (f *ParamsFile) Encode(w *bytes.Buffer) {
	fmt.Fprintln(w, "# servesim parameter set. Load with --params FILE.")
	fmt.Fprintln(w, "[calibration]")
	k := f.Calibration
	for _, kv := range [][2]string{{"gpu", k.GPU}, {"model", k.Model}, {"family", k.Family}, {"engine", k.Engine}, {"engine_version", k.EngineVersion}, {"note", k.Note}} {
		if kv[1] != "" || kv[0] != "note" {
			fmt.Fprintf(w, "%s = %q\n", kv[0], kv[1])
		}
	}
	fmt.Fprintln(w, "\n[params]")
	p := f.Values()
	for i, d := range param.Defs() {
		fmt.Fprintf(w, "%s = %s # %s [%g, %g]\n", d.Name, fmtFloat(p[i]), d.Unit, d.Lo, d.Hi)
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
