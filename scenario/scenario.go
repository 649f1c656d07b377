package scenario

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/tomlx"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/hf"
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
	GPU   string `toml:"gpu"`
	Count int    `toml:"count"`
	// GPUFile optionally adds or overrides catalog entries ([[gpu]] TOML).
	GPUFile string `toml:"gpu_file,omitempty"`
}

// ModelSpec names the served model and its drafter: a built-in name, a servesim model TOML, or a
// Hugging Face config.json.
type ModelSpec struct {
	Name    string `toml:"name,omitempty"`
	File    string `toml:"file,omitempty"`
	Drafter string `toml:"drafter,omitempty"`
}

// Scenario is everything a run needs. Defaults, then TOML, then flags, then Validate.
type Scenario struct {
	Name     string              `toml:"name"`
	Seed     uint64              `toml:"seed"`
	Hardware HardwareSpec        `toml:"hardware"`
	Model    ModelSpec           `toml:"model"`
	Engine   deploy.EngineConfig `toml:"engine"`
	Protocol protocol.Protocol   `toml:"protocol"`
	Params   map[string]float64  `toml:"params,omitempty"`
	// ParamsFile is a calibrated parameter file to start from (before Params overrides).
	ParamsFile string `toml:"params_file,omitempty"`

	// dir is the directory relative paths resolve against.
	dir string
}

// Default returns the embedded seed scenario.
func Default() *Scenario {
	s, err := decodeOnto(&Scenario{}, seedTOML(), "seed.toml")
	if err != nil {
		panic(fmt.Sprintf("embedded seed scenario: %v", err))
	}
	return s
}

// Parse reads a scenario strictly: unknown keys are errors naming the key and line. Keys the file
// leaves out keep the embedded seed scenario's values (defaults, then the file, then flags).
func Parse(data []byte, name string) (*Scenario, error) {
	s := &Scenario{}
	if _, err := toml.NewDecoder(bytes.NewReader(seedTOML())).Decode(s); err != nil {
		panic(fmt.Sprintf("embedded seed scenario: %v", err))
	}
	return decodeOnto(s, data, name)
}

func decodeOnto(s *Scenario, data []byte, name string) (*Scenario, error) {
	if _, err := tomlx.Decode(data, name, s, "see `servesim config` for the accepted keys"); err != nil {
		return nil, err
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

// Validate checks the fields that do not need the catalog.
func (s *Scenario) Validate() error {
	if s.Hardware.GPU == "" {
		return fmt.Errorf("hardware.gpu: empty: want a GPU name (see `servesim hardware list`)")
	}
	if s.Hardware.Count <= 0 {
		return fmt.Errorf("hardware.count = %d: must be a positive integer", s.Hardware.Count)
	}
	if s.Model.Name == "" && s.Model.File == "" {
		return fmt.Errorf("model: want name (built-in: %s) or file", strings.Join(arch.BuiltinNames(), ", "))
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

// Deployment resolves names against the catalogs and builds the deployment.
func (s *Scenario) Deployment() (*deploy.Deployment, error) {
	cat, err := s.Catalog()
	if err != nil {
		return nil, fmt.Errorf("hardware.gpu_file: %w", err)
	}
	gpu, err := cat.Find(s.Hardware.GPU)
	if err != nil {
		return nil, fmt.Errorf("hardware.gpu: %w", err)
	}
	a, err := loadArch(s.Model.Name, s.path(s.Model.File))
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	d := &deploy.Deployment{Model: a, Hardware: hardware.Machine{GPU: gpu, Count: s.Hardware.Count}, Engine: s.Engine}
	if s.Engine.Speculative.Enabled() && s.Engine.Speculative.Method != "ngram" {
		name := s.Model.Drafter
		if name == "" {
			name = s.Engine.Speculative.Model
		}
		if name != "" {
			dr, err := loadArch(name, "")
			if err != nil {
				if _, ferr := os.Stat(s.path(name)); ferr == nil {
					dr, err = loadArch("", s.path(name))
				}
			}
			if err != nil {
				return nil, fmt.Errorf("model.drafter: %w", err)
			}
			d.Drafter = dr
		}
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

func loadArch(name, file string) (*arch.Arch, error) {
	if file != "" {
		return loadArchFile(file)
	}
	return arch.Builtin(name)
}

// loadArchFile reads a servesim model TOML file, or a Hugging Face config.json (with the
// hf_quant_config.json beside it, if any) or a directory holding one.
func loadArchFile(path string) (*arch.Arch, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "config.json")
	}
	if strings.HasSuffix(path, ".toml") {
		data, err := fsutil.ReadFile(path, fsutil.MaxConfigBytes)
		if err != nil {
			return nil, err
		}
		return arch.Parse(data, path)
	}
	return hf.Load(path)
}

// LoadArch reads a model given by reference: an existing file or directory (a servesim model
// TOML, a Hugging Face config.json, or a directory holding one), else a built-in model name.
func LoadArch(ref string) (*arch.Arch, error) {
	if _, err := os.Stat(ref); err == nil {
		return loadArchFile(ref)
	}
	a, err := arch.Builtin(ref)
	if err != nil {
		return nil, fmt.Errorf("%v; or give a servesim model .toml, a config.json or a directory holding one", err)
	}
	return a, nil
}

// Encode writes the scenario as TOML, the parameters last with their units and bounds, so a user
// can copy and edit it.
func (s *Scenario) Encode(w *bytes.Buffer, p param.Values, source string) error {
	c := *s
	c.Params = nil
	fmt.Fprintln(w, "# servesim scenario (resolved). Edit and load with --config FILE.")
	enc := toml.NewEncoder(w)
	enc.Indent = ""
	if err := enc.Encode(c); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n# Step-time and memory parameters (%s). Each: value # unit [lo, hi] meaning.\n[params]\n", source)
	for i, d := range param.Defs() {
		fmt.Fprintf(w, "%s = %s # %s [%g, %g] %s\n", d.Name, fmtFloat(p[i]), d.Unit, d.Lo, d.Hi, d.Meaning)
	}
	return nil
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
