package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/tomlx"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/protocol"
)

// embedded returns an embedded data file (data/NAME).
func embedded(name string) []byte {
	data, err := dataFS.ReadFile("data/" + name)
	if err != nil {
		panic(fmt.Sprintf("scenario: embedded %s: %v", name, err))
	}
	return data
}

// seedTOML is the embedded seed scenario.
func seedTOML() []byte { return embedded("seed.toml") }

// SeedMeasuredName names the embedded measured seed matrix in messages and reports.
const SeedMeasuredName = "embedded seed (000_514fe97e62255cf0.txt)"

// SeedMeasured returns the embedded measured seed matrix (the published page, as it is).
func SeedMeasured() []byte { return embedded("seed_measured.txt") }

// HardwareSpec names the GPUs.
type HardwareSpec struct {
	GPU string `toml:"gpu"`
	// Count is the number of GPUs; 0 (absent): as many as the engine uses (TP x PP x DP).
	Count int `toml:"count"`
	// GPUFile optionally adds or overrides catalog entries ([[gpu]] TOML).
	GPUFile string `toml:"gpu_file,omitempty"`
}

// ModelSpec names the served model and its drafter. Name is a built-in description, a Hugging
// Face id (read from a built-in config or the local Hugging Face cache) or a path; File, when
// given, is the description to read instead (a servesim model TOML, a config.json or a directory
// holding one), named after Name. See FindModel.
type ModelSpec struct {
	Name string `toml:"name,omitempty"`
	File string `toml:"file,omitempty"`
	// Revision is vllm serve's --revision: the Hugging Face cache snapshot to read.
	Revision string `toml:"revision,omitempty"`
	Drafter  string `toml:"drafter,omitempty"`
}

// FitSpec is what a fit of the scenario's measured matrix should know about it.
type FitSpec struct {
	// Exclude lists cell filters (servesim fit --train syntax, e.g. "phase=prefill,context=16K")
	// of measured cells the fit neither trains on nor judges: measurement outliers, each with its
	// reason in a comment. servesim fit --exclude replaces the list.
	Exclude []string `toml:"exclude,omitempty"`
}

// Scenario is everything a run needs. Defaults, then TOML, then flags, then Validate. The engine
// holds the flags as given: an absent one takes vLLM's default for the version, GPU and model when
// the scenario is resolved (deploy.Resolve), never another scenario's value.
type Scenario struct {
	Name     string             `toml:"name"`
	Seed     uint64             `toml:"seed"`
	Hardware HardwareSpec       `toml:"hardware"`
	Model    ModelSpec          `toml:"model"`
	Engine   deploy.EngineArgs  `toml:"engine"`
	Protocol protocol.Protocol  `toml:"protocol"`
	Params   map[string]float64 `toml:"params,omitempty"`
	// ParamsFile is a calibrated parameter file to start from (before Params overrides), a path
	// relative to the scenario's file.
	ParamsFile string `toml:"params_file,omitempty"`
	// Uncalibrated: the physical priors, ignoring every calibration (--uncalibrated).
	Uncalibrated bool `toml:"uncalibrated,omitempty"`
	// Fit holds the calibration settings that belong to the scenario's measurement.
	Fit FitSpec `toml:"fit,omitempty"`

	// dir is the directory relative paths resolve against (the file's; "" for the current
	// directory).
	dir string
	// fitContexts and fitPrefill are set when the protocol's decode contexts, or its prefill-only
	// rows, are the benchmark's defaults (the file did not give them): Build keeps those that fit
	// max_model_len.
	fitContexts, fitPrefill bool
}

// DefaultSeed is the random seed of a scenario that does not give one.
const DefaultSeed = 1

// New is an empty scenario: no model and no hardware (both must be given), every engine flag
// left to vLLM's defaults, llm-inference-bench's standard matrix (protocol.Seed: contexts 8K to
// 1024K as far as max_model_len allows, concurrency 1 to 128, 30 s, 4,096 output tokens) and
// seed 1.
func New() *Scenario {
	return &Scenario{Seed: DefaultSeed, Protocol: protocol.Seed(), fitContexts: true, fitPrefill: true}
}

// Default returns the embedded seed scenario.
func Default() *Scenario {
	s, err := Parse(seedTOML(), "seed.toml")
	if err != nil {
		panic(fmt.Sprintf("embedded seed scenario: %v", err))
	}
	return s
}

// Parse reads a scenario strictly: unknown keys are errors naming the key and line. Keys the file
// leaves out keep New's values: an absent engine key is vLLM's default, and the model and the
// GPU must be given (here or by flags) before the scenario resolves.
func Parse(data []byte, name string) (*Scenario, error) {
	s := New()
	md, err := tomlx.Decode(data, name, s, "see `servesim config` for the accepted keys")
	if err != nil {
		return nil, err
	}
	s.fitContexts = !md.IsDefined("protocol", "contexts")
	s.fitPrefill = !md.IsDefined("protocol", "prefill_only")
	if md.IsDefined("hardware", "count") && s.Hardware.Count <= 0 {
		return nil, tomlx.Locate(data, name, fmt.Errorf("hardware.count = %d: must be a positive integer (leave it out: the engine's GPUs)", s.Hardware.Count))
	}
	if err := s.Validate(); err != nil {
		return nil, tomlx.Locate(data, name, err)
	}
	return s, nil
}

// Load reads a scenario file.
func Load(path string) (*Scenario, error) {
	data, err := fsutil.ReadFile(path, fsutil.MaxConfigBytes)
	if err != nil {
		return nil, err
	}
	s, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	s.dir = filepath.Dir(path)
	return s, nil
}

func (s *Scenario) path(p string) string {
	if p == "" || filepath.IsAbs(p) || s.dir == "" {
		return p
	}
	return filepath.Join(s.dir, p)
}

// Dir is the directory the scenario's relative paths resolve against: its file's ("" for a
// scenario not read from a file: the current directory).
func (s *Scenario) Dir() string { return s.dir }

// localRef is a model reference (model.name, model.drafter, engine.speculative.model) as a path
// when it names a file or directory relative to the scenario's file (then relative paths in a
// scenario mean the same wherever it is loaded from); otherwise the reference as given (a
// Hugging Face id, a built-in name, a path relative to the current directory).
func (s *Scenario) localRef(ref string) string {
	if ref == "" || filepath.IsAbs(ref) || s.dir == "" {
		return ref
	}
	if p := s.path(ref); exists(p) {
		return p
	}
	return ref
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Validate checks the fields that are given, each on its own; Build checks that the model and
// the GPU are there and that everything fits together.
func (s *Scenario) Validate() error {
	if s.Hardware.Count < 0 {
		return fmt.Errorf("hardware.count = %d: must be a positive integer", s.Hardware.Count)
	}
	if err := s.Engine.Validate(); err != nil {
		return err
	}
	if err := s.Protocol.Validate(); err != nil {
		return err
	}
	var p param.Values = param.Priors()
	if err := p.Set(s.Params); err != nil {
		return err
	}
	return p.Validate()
}

// Catalog is the built-in GPU catalog with the entries of the scenario's hardware.gpu_file (a
// path relative to the scenario file) added or overriding.
func (s *Scenario) Catalog() (*hardware.Catalog, error) {
	return hardware.LoadCatalog(s.path(s.Hardware.GPUFile))
}

// Built is a scenario's deployment and how it was derived.
type Built struct {
	Deployment *deploy.Deployment
	// Defaults are the engine settings the scenario left to vLLM, with the rule each follows.
	Defaults []deploy.Default
	// ModelFrom and DrafterFrom say where the descriptions were found; ModelPath and DrafterPath
	// are the files or directories read, for descriptions given as paths.
	ModelFrom, DrafterFrom string
	ModelPath, DrafterPath string
	// Notes are remarks for the user (hardware count derived, ...); ProtocolNotes those about
	// the benchmark matrix (contexts dropped), for the commands that run it.
	Notes, ProtocolNotes []string
	// Resolved is the scenario with every engine flag given, the hardware count set and the
	// protocol's default contexts fitted to max_model_len: what `servesim config` prints.
	Resolved *Scenario
}

// Deployment resolves names against the catalogs, applies vLLM's defaults to the engine flags
// that are not given, and builds the deployment (see Build).
func (s *Scenario) Deployment() (*deploy.Deployment, error) {
	b, err := s.Build()
	if err != nil {
		return nil, err
	}
	return b.Deployment, nil
}

// Build finds the GPU and the model (FindModel), applies vLLM's defaults to the engine flags that
// are not given (deploy.Resolve), builds the deployment and validates it. When the only problem is
// a configuration vLLM runs but the simulator does not simulate yet (pipeline or data parallelism,
// a speculative method without a drafter description, ...), it returns the Built all the same,
// with a *deploy.NotSimulatedError: import prints such a scenario, every simulating command
// refuses it.
func (s *Scenario) Build() (*Built, error) {
	if s.Hardware.GPU == "" {
		return nil, fmt.Errorf("hardware.gpu: not given: want a GPU name (--gpu NAME; see `servesim hardware list`)")
	}
	if s.Model.Name == "" && s.Model.File == "" {
		return nil, fmt.Errorf("model: not given: want a name (built-in: %s), a Hugging Face id or a config.json (model.file, --model-config PATH)", strings.Join(arch.BuiltinNames(), ", "))
	}
	cat, err := s.Catalog()
	if err != nil {
		return nil, fmt.Errorf("hardware.gpu_file: %w", err)
	}
	gpu, err := cat.Find(s.Hardware.GPU)
	if err != nil {
		return nil, fmt.Errorf("hardware.gpu: %w", err)
	}
	fm, err := FindModel(s.localRef(s.Model.Name), s.path(s.Model.File), s.Model.Revision)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	e, defs, err := deploy.Resolve(s.Engine, deploy.ModelGPU{Model: fm.Arch, GPU: &gpu})
	if err != nil {
		return nil, err
	}
	var ns *deploy.NotSimulatedError
	var notSim error
	a := fm.Arch
	if q := s.Engine.Quantization; q != "" && !strings.EqualFold(q, deploy.CheckpointQuantization(a)) {
		// --quantization as vLLM applies it; a label of the checkpoint's own format (a scenario's
		// "NVFP4") changes nothing.
		if a, err = deploy.ApplyQuantization(a, q); err != nil {
			return nil, err
		}
	}
	b := &Built{Defaults: defs, ModelFrom: fm.From, ModelPath: fm.Path}
	count := s.Hardware.Count
	if count == 0 {
		count = e.GPUs()
		b.Notes = append(b.Notes, fmt.Sprintf("hardware.count %d: the engine's TP %d x PP %d x DP %d", count, e.TensorParallel, e.PipelineParallel, e.DataParallel))
	}
	d := &deploy.Deployment{Model: a, Hardware: hardware.Machine{GPU: gpu, Count: count}, Engine: e}
	if e.Speculative.Enabled() && deploy.NeedsDrafter(e.Speculative.Method) {
		name := s.Model.Drafter
		if name == "" {
			name = e.Speculative.Model
		}
		if name != "" {
			dm, err := FindModel(s.localRef(name), "", "")
			if err != nil {
				if notSim == nil {
					notSim = &deploy.NotSimulatedError{What: fmt.Sprintf("engine.speculative.model = %q", name),
						Why: "the drafter's description is needed to simulate its cost: " + err.Error() +
							" (give the draft model's config.json: a directory or file as speculative.model, or model.drafter in a scenario)"}
				}
			} else if d.Drafter, err = deploy.DraftHead(e.Speculative.Method, dm.Arch, a); err != nil {
				return nil, err
			} else {
				b.DrafterFrom, b.DrafterPath = dm.From, dm.Path
			}
		}
	}
	r := *s
	r.Engine = deploy.ArgsOf(e)
	r.Hardware.Count = count
	r.Hardware.GPU = gpu.Name
	if r.Name == "" {
		r.Name = fmt.Sprintf("%s on %d x %s, vLLM %s", a.Name, count, gpu.Name, e.Version)
	}
	r.Protocol, b.ProtocolNotes = fitProtocol(s.Protocol, e.MaxModelLen, s.fitContexts, s.fitPrefill, b.ProtocolNotes)
	r.fitContexts, r.fitPrefill = false, false
	b.Resolved = &r
	b.Deployment = d
	if err := d.Validate(); err != nil {
		if !errors.As(err, &ns) {
			return nil, err
		}
		if notSim == nil {
			notSim = err
		}
	}
	if notSim != nil {
		return b, notSim
	}
	return b, nil
}

// fitProtocol keeps the protocol's default decode contexts (fitContexts) and prefill-only rows
// (fitPrefill) that fit max_model_len (the benchmark's default list reaches 1024K, more than most
// models take) and says which it dropped. Rows a scenario gives are kept as given (a context that
// does not fit is an error when the matrix runs).
func fitProtocol(p protocol.Protocol, maxModelLen int, fitContexts, fitPrefill bool, notes []string) (protocol.Protocol, []string) {
	var keep, keepPre, drop []string
	for _, c := range p.Contexts {
		if _, err := p.FitContext(c, maxModelLen); err == nil || !fitContexts {
			keep = append(keep, c)
		} else {
			drop = append(drop, c)
		}
	}
	for _, c := range p.PrefillOnly {
		n, err := matrix.ParseContext(c)
		if _, ok := p.Fit(n, maxModelLen, protocol.PrefillOnlyOutput); (err == nil && ok) || !fitPrefill {
			keepPre = append(keepPre, c)
		} else {
			drop = append(drop, c+" (prefill only)")
		}
	}
	if len(drop) > 0 && len(keep) > 0 {
		notes = append(notes, fmt.Sprintf("protocol: contexts %s do not fit max_model_len %d with %d output tokens; the matrix stops at %s",
			strings.Join(drop, ", "), maxModelLen, p.MaxOutput, keep[len(keep)-1]))
		p.Contexts, p.PrefillOnly = keep, keepPre
	}
	return p, notes
}

func fmtFloat(v float64) string {
	s := fmt.Sprintf("%.6g", v)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// SortedParamNames is a helper for deterministic output.
func SortedParamNames(m map[string]float64) []string {
	k := make([]string, 0, len(m))
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

// BuiltinOrNil resolves a model name against the built-in descriptions.
func BuiltinOrNil(name string) (*arch.Arch, error) { return arch.Builtin(name) }
