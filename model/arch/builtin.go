package arch

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/servesim/servesim/internal/tomlx"
)

//go:embed data/models/*.toml
var dataFS embed.FS

// BuiltinNames lists the names of the embedded model descriptions.
func BuiltinNames() []string {
	ents, err := dataFS.ReadDir("data/models")
	if err != nil {
		panic(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".toml"))
	}
	sort.Strings(out)
	return out
}

// Parse reads a model description in servesim's TOML form and normalises it. Unknown keys are
// errors naming the key and its line.
func Parse(data []byte, name string) (*Arch, error) {
	var a Arch
	if _, err := tomlx.Decode(data, name, &a, ""); err != nil {
		return nil, err
	}
	if err := a.Normalize(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &a, nil
}

// Builtin returns an embedded model description by name.
func Builtin(name string) (*Arch, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	// Accept HF-style ids of the built-ins ("nvidia/GLM-5.3-Flash-NVFP4").
	n = path.Base(n)
	n = strings.TrimSuffix(n, "-nvfp4")
	data, err := dataFS.ReadFile("data/models/" + n + ".toml")
	if err != nil {
		return nil, fmt.Errorf("unknown built-in model %q (built-in: %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	return Parse(data, n+".toml")
}
