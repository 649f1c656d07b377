package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/vllmcmd"
)

// Args are a scenario as a command line gives it: a scenario file or the embedded seed, a vLLM
// launch command (as one string or split into words), and values that override the scenario's.
// Paths are relative to the current directory.
type Args struct {
	Config, Params string
	Uncalibrated   bool
	VLLMCmd        string
	// VLLMWords, when set, is a launch command already split into words; it takes the place of
	// VLLMCmd.
	VLLMWords    []string
	GPU          string
	GPUs         int
	GPUCatalog   string
	ModelConfig  string
	VLLMVersion  string
	Seed         uint64
	SeedSet      bool
	ReadyTimeout float64 // seconds, when ReadyTimeoutSet
	// ReadyTimeoutSet: ReadyTimeout replaces the protocol's ready_timeout_s.
	ReadyTimeoutSet bool
	// MeanAcceptanceLength and AcceptanceRates are measured speculative acceptance (vLLM's
	// spec-decode metrics): they replace the method's prior or the calibrated acceptance.
	MeanAcceptanceLength float64
	AcceptanceRates      []float64
}

// argErrorf is an error in the arguments themselves (a contradiction, a value out of range): the
// caller's usage error.
func argErrorf(format string, a ...any) error { return usage.Errorf(format, a...) }

// IsSeed reports whether the arguments leave the embedded seed scenario unchanged.
func (a *Args) IsSeed() bool {
	return a.Config == "" && a.VLLMCmd == "" && a.VLLMWords == nil && a.GPU == "" && a.GPUs == 0 && a.GPUCatalog == "" && a.ModelConfig == "" && a.VLLMVersion == ""
}

// Scenario builds the scenario the arguments describe, writing notes (ignored vLLM flags) to
// notes: Config, else the embedded seed, else (with a vLLM command or ModelConfig) an empty
// scenario whose engine flags all take vLLM's defaults; then the command, the model config, the
// hardware, the version and the seed.
func (a *Args) Scenario(notes io.Writer) (*Scenario, error) {
	if a.Params != "" && a.Uncalibrated {
		return nil, argErrorf("--params and --uncalibrated contradict each other")
	}
	if a.GPUs < 0 {
		return nil, argErrorf("--gpus %d: must be a positive integer", a.GPUs)
	}
	words := a.VLLMWords
	if a.VLLMCmd != "" {
		var err error
		if words, err = vllmcmd.Split(a.VLLMCmd); err != nil {
			return nil, fmt.Errorf("--vllm-cmd: %w", err)
		}
	}
	var s *Scenario
	switch {
	case a.Config != "":
		var err error
		if s, err = Load(a.Config); err != nil {
			return nil, err
		}
	case words != nil || a.ModelConfig != "":
		s = New()
	default:
		s = Default()
	}
	if words != nil {
		ns, err := s.ApplyVLLM(words)
		if err != nil {
			return nil, usage.Wrap(err)
		}
		if s.Dir() != "" {
			// A model or drafter path on the command line is relative to the current directory,
			// not to the --config file's.
			s.Model.Name = absIfExists(s.Model.Name)
			if sp := s.Engine.Speculative; sp != nil && sp.Model != "" {
				c := sp.Clone()
				c.Model = absIfExists(c.Model)
				s.Engine.Speculative = &c
			}
		}
		for _, n := range ns {
			fmt.Fprintln(notes, n)
		}
	}
	if a.ModelConfig != "" {
		s.Model.File = absPath(a.ModelConfig)
	}
	// The parameter choice belongs to the scenario, so that a scenario written from it (config,
	// import) loads back with the same parameters.
	switch {
	case a.Params != "":
		s.ParamsFile, s.Uncalibrated = absPath(a.Params), false
	case a.Uncalibrated:
		s.ParamsFile, s.Uncalibrated = "", true
	}
	if a.GPU != "" {
		s.Hardware.GPU = a.GPU
	}
	if a.GPUs > 0 {
		s.Hardware.Count = a.GPUs
	}
	if a.GPUCatalog != "" {
		s.Hardware.GPUFile = absPath(a.GPUCatalog)
	}
	if a.VLLMVersion != "" {
		if _, err := deploy.ParseVersion(a.VLLMVersion); err != nil {
			return nil, argErrorf("--vllm-version %q: %v", a.VLLMVersion, err)
		}
		s.Engine.Version = a.VLLMVersion
	}
	if n := deploy.VersionNote(s.Engine.Version); n != "" {
		fmt.Fprintln(notes, "note: "+n)
	}
	if a.SeedSet {
		s.Seed = a.Seed
	}
	if err := a.applyAcceptance(s); err != nil {
		return nil, err
	}
	if a.ReadyTimeoutSet {
		s.Protocol.ReadyTimeoutS = a.ReadyTimeout
		if err := s.Protocol.Validate(); err != nil {
			return nil, argErrorf("--ready-timeout-s: %v", err)
		}
	}
	return s, nil
}

// absPath is a path given on the command line (relative to the current directory) as an absolute
// one, so that a scenario read from another directory resolves it the same.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// absIfExists is absPath for a reference that names a file or directory (a model path), and the
// reference itself otherwise (a Hugging Face id, a built-in name).
func absIfExists(ref string) string {
	if ref == "" || filepath.IsAbs(ref) {
		return ref
	}
	if _, err := os.Stat(ref); err == nil {
		return absPath(ref)
	}
	return ref
}

// applyAcceptance puts the measured acceptance into the scenario's [engine.speculative] table,
// checked as the table is and named by the flag.
func (a *Args) applyAcceptance(s *Scenario) error {
	if a.MeanAcceptanceLength == 0 && a.AcceptanceRates == nil {
		return nil
	}
	flag := "--mean-acceptance-length"
	if a.AcceptanceRates != nil {
		flag = "--acceptance-rates"
	}
	switch {
	case a.MeanAcceptanceLength != 0 && a.AcceptanceRates != nil:
		return argErrorf("--mean-acceptance-length and --acceptance-rates are exclusive: give the per-position rates or the mean length")
	case s.Engine.Speculative == nil || s.Engine.Speculative.Method == "":
		return argErrorf("%s: the scenario runs no speculative decoding (give it with --vllm-cmd \"vllm serve ... --speculative-config '{...}'\" or --config)", flag)
	}
	spec := s.Engine.Speculative.Clone()
	spec.MeanAcceptanceLength, spec.Acceptance = a.MeanAcceptanceLength, a.AcceptanceRates
	if err := spec.Check(); err != nil {
		return argErrorf("%s: %v", flag, err)
	}
	s.Engine.Speculative = &spec
	return nil
}

// Load builds and resolves the scenario, printing warnings to stderr and notes to info; with
// matrix (a command that runs the benchmark matrix), the notes about its protocol too.
func (a *Args) Load(stderr, info io.Writer, matrix bool) (*Resolved, error) {
	s, err := a.Scenario(stderr)
	if err != nil {
		return nil, err
	}
	r, err := s.Resolve(ResolveOptions{})
	if err != nil {
		return nil, err
	}
	for _, n := range r.Notes {
		fmt.Fprintln(info, "note: "+n)
	}
	if matrix {
		for _, n := range r.ProtocolNotes {
			fmt.Fprintln(info, "note: "+n)
		}
	}
	return r, nil
}

// Import builds the scenario of a launch command as given and writes it resolved to w (paths
// relative to outPath's directory, absolute when it is ""), with vLLM's defaults and the
// parameters it would use. A configuration servesim cannot simulate yet is written with a
// warning on stderr; notes go to stderr too.
func (a *Args) Import(w *bytes.Buffer, stderr io.Writer, outPath string) error {
	s, err := a.Scenario(stderr)
	if err != nil {
		return err
	}
	b, err := s.Build()
	var ns *deploy.NotSimulatedError
	switch {
	case err != nil && errors.As(err, &ns) && b != nil:
		fmt.Fprintf(stderr, "servesim import: warning: the scenario is recorded as given, but it cannot be simulated yet: %v\n", err)
	case err != nil:
		return err
	}
	for _, n := range b.Notes {
		fmt.Fprintln(stderr, "note: "+n)
	}
	pol, err := s.Policy(ResolveOptions{})
	if err != nil {
		return err
	}
	c, err := pol.Choose(b.Deployment)
	if err != nil {
		return err
	}
	return EncodeBuilt(w, s, b, c.Params, &c.Provenance, fmt.Sprintf("%s: %s", c.Source, c.From), outPath)
}

// LoadModel reads a model given by reference, as every command does (FindModel: a file or
// directory, a built-in id, the local Hugging Face cache). It returns where the model came from:
// the path given, else FindModel's account.
func LoadModel(ref string) (*arch.Arch, string, error) {
	m, err := FindModel(ref, "", "")
	if err != nil {
		return nil, "", err
	}
	if _, err := os.Stat(ref); err == nil {
		return m.Arch, ref, nil
	}
	return m.Arch, m.From, nil
}
