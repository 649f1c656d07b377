package scenario

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
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
	Scenario   *Scenario
	Deployment *deploy.Deployment
	Params     param.Values
	Source     Source
	// Calibration is the parameter set's key (nil for priors).
	Calibration *CalibrationKey
	ParamsFrom  string // "priors", "built-in: <note>", or the file name
}

// Resolve builds the deployment and chooses parameters: a user file, else the built-in
// calibration that matches the deployment (calibrated or transferred), else the priors; then the
// scenario's [params] overrides.
func (s *Scenario) Resolve(o ResolveOptions) (*Resolved, error) {
	d, err := s.Deployment()
	if err != nil {
		return nil, err
	}
	r := &Resolved{Scenario: s, Deployment: d, Params: param.Priors(), Source: SourcePrior, ParamsFrom: "priors"}
	if o.ParamsFile == "" && s.ParamsFile != "" && !o.Uncalibrated {
		o.ParamsFile = s.path(s.ParamsFile)
	}
	switch {
	case o.ParamsFile != "":
		f, err := LoadParamsFile(o.ParamsFile)
		if err != nil {
			return nil, fmt.Errorf("--params: %w", err)
		}
		r.Params = f.Values()
		r.Calibration = &f.Calibration
		r.Source = f.Calibration.Match(d)
		if f.Calibration.Model == "" {
			r.Source = SourcePrior
		}
		r.ParamsFrom = o.ParamsFile
	case o.Uncalibrated:
	default:
		best := SourcePrior
		for _, f := range BuiltinCalibrations() {
			src := f.Calibration.Match(d)
			if src == SourceCalibrated || (src == SourceTransferred && best == SourcePrior) {
				best = src
				r.Params = f.Values()
				k := f.Calibration
				r.Calibration = &k
				r.ParamsFrom = "built-in calibration (" + k.Note + ")"
			}
		}
		r.Source = best
	}
	if len(s.Params) > 0 {
		if err := r.Params.Set(s.Params); err != nil {
			return nil, err
		}
		r.ParamsFrom += " + [params] overrides (" + strings.Join(SortedParamNames(s.Params), ", ") + ")"
	}
	if err := r.Params.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}
