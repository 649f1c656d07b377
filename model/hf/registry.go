package hf

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/servesim/servesim/internal/tomlx"
	"github.com/servesim/servesim/model/arch"
)

// registryFS holds the built-in models: published config.json files under data/models/<org>--<name>,
// their provenance (README.md) and the index (registry.toml).
//
//go:embed data/models/registry.toml data/models/README.md data/models/*/config.json
var registryFS embed.FS

// Provenance says where a built-in model's description comes from.
type Provenance struct {
	ID      string   // Hugging Face id, e.g. "meta-llama/Llama-3.1-8B-Instruct"
	Aliases []string // other ids that resolve to it (renamed repositories, servesim names)
	// Source is "config.json" (a published config embedded as read) or "servesim TOML" (a
	// servesim description, model/arch's built-ins).
	Source string
	// Repository, Path and Commit locate the bytes of a config.json (empty when transcribed).
	Repository, Path, Commit string
	// Note says what is not a byte copy, or other caveats.
	Note string
}

// String is a one-line citation.
func (p Provenance) String() string {
	s := p.Source
	if p.Repository != "" {
		s += fmt.Sprintf(" of %s %s @ %s", p.Repository, p.Path, p.Commit)
	}
	if p.Note != "" {
		s += " (" + p.Note + ")"
	}
	return s
}

type rawRegistry struct {
	Model []struct {
		ID         string   `toml:"id"`
		Aliases    []string `toml:"aliases"`
		Dir        string   `toml:"dir"`
		TOML       string   `toml:"toml"`
		Repository string   `toml:"repository"`
		Path       string   `toml:"path"`
		Commit     string   `toml:"commit"`
		Note       string   `toml:"note"`
	} `toml:"model"`
}

// entry is one built-in model: its provenance and where its description is.
type entry struct {
	prov Provenance
	dir  string // data/models/<dir>/config.json, or
	toml string // model/arch's built-in name
}

// registry reads the index, once; its entries are never changed. The embedded files are part of
// the binary, so a broken index is a build defect: it panics (TestRegistry checks it).
var registry = sync.OnceValue(func() []entry {
	data, err := registryFS.ReadFile("data/models/registry.toml")
	if err != nil {
		panic(err)
	}
	var r rawRegistry
	if _, err := tomlx.Decode(data, "data/models/registry.toml", &r, ""); err != nil {
		panic(err)
	}
	out := make([]entry, 0, len(r.Model))
	for _, m := range r.Model {
		e := entry{dir: m.Dir, toml: m.TOML, prov: Provenance{ID: m.ID, Aliases: m.Aliases, Repository: m.Repository,
			Path: m.Path, Commit: m.Commit, Note: m.Note, Source: "config.json"}}
		if m.TOML != "" {
			e.prov.Source = "servesim TOML"
		}
		out = append(out, e)
	}
	return out
})

// normID lowers an id and drops a huggingface.co URL prefix, "hf://" and surrounding space; the
// "org--name" directory spelling (the Hugging Face cache's) reads as "org/name".
func normID(id string) string {
	s := strings.ToLower(strings.TrimSpace(id))
	for _, p := range []string{"https://huggingface.co/", "http://huggingface.co/", "huggingface.co/", "hf://"} {
		s = strings.TrimPrefix(s, p)
	}
	s = strings.TrimPrefix(s, "models--")
	s = strings.TrimSuffix(s, "/")
	if !strings.Contains(s, "/") {
		s = strings.Replace(s, "--", "/", 1)
	}
	return s
}

func (e *entry) matches(id string) bool {
	if normID(e.prov.ID) == id {
		return true
	}
	for _, a := range e.prov.Aliases {
		if normID(a) == id {
			return true
		}
	}
	return false
}

// load reads the entry's description.
func (e *entry) load() (*arch.Arch, error) {
	if e.toml != "" {
		return arch.Builtin(e.toml)
	}
	p := path.Join("data/models", e.dir, "config.json")
	data, err := registryFS.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("hf: built-in %s: %w", e.prov.ID, err)
	}
	return parse(data, nil, e.prov.ID, e.prov.ID+" (built-in config.json)", "")
}

// Builtin returns a built-in model by Hugging Face id or alias ("meta-llama/Llama-3.1-8B-Instruct",
// "zai-org/GLM-5-FP8", "glm-5.3-flash"; case-insensitive, also as "org--name"), with where its
// description comes from. Published configs are named by their id; servesim TOML descriptions
// keep their own name (model/arch's Builtin, unchanged). An unknown id is an error listing the
// built-in ids; it never falls back to another model.
func Builtin(id string) (*arch.Arch, Provenance, error) {
	n := normID(id)
	for _, e := range registry() {
		if e.matches(n) {
			a, err := e.load()
			if err != nil {
				return nil, e.prov, err
			}
			return a, e.prov, nil
		}
	}
	return nil, Provenance{}, fmt.Errorf("hf: %q is not a built-in model (built-in: %s; `servesim model list` shows them)", id, strings.Join(BuiltinIDs(), ", "))
}

// BuiltinIDs lists the built-in models' ids, sorted case-insensitively.
func BuiltinIDs() []string {
	var out []string
	for _, e := range registry() {
		out = append(out, e.prov.ID)
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i]) < strings.ToLower(out[j]) })
	return out
}

// BuiltinModel is one entry of List: the model as described and its provenance.
type BuiltinModel struct {
	Arch       *arch.Arch
	Provenance Provenance
}

// List loads every built-in model, in BuiltinIDs order.
func List() ([]BuiltinModel, error) {
	var out []BuiltinModel
	for _, id := range BuiltinIDs() {
		a, p, err := Builtin(id)
		if err != nil {
			return nil, err
		}
		out = append(out, BuiltinModel{Arch: a, Provenance: p})
	}
	return out, nil
}

// Readme returns the registry's provenance record (data/models/README.md).
func Readme() string {
	b, err := registryFS.ReadFile("data/models/README.md")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// BuiltinConfig returns a built-in model's published config.json bytes, by id or alias (an error
// for ids that are servesim TOML descriptions, which have none).
func BuiltinConfig(id string) ([]byte, error) {
	n := normID(id)
	for _, e := range registry() {
		if e.matches(n) {
			if e.toml != "" {
				return nil, fmt.Errorf("hf: built-in %s is a servesim description, not a config.json", e.prov.ID)
			}
			return registryFS.ReadFile(path.Join("data/models", e.dir, "config.json"))
		}
	}
	return nil, fmt.Errorf("hf: %q is not a built-in model (built-in: %s)", id, strings.Join(BuiltinIDs(), ", "))
}
