package hardware

import (
	"embed"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/tomlx"
)

//go:embed data/gpus.toml
var dataFS embed.FS

// Catalog is the set of GPUs the planner and scenarios can name.
type Catalog struct {
	GPUs []GPU `toml:"gpu"`
}

// BuiltinCatalog returns the embedded GPU catalog: a copy the caller may change (Merge).
func BuiltinCatalog() *Catalog {
	c := builtinCatalog()
	out := &Catalog{GPUs: make([]GPU, len(c.GPUs))}
	for i, g := range c.GPUs {
		g.Aliases = slices.Clone(g.Aliases)
		g.FP4Formats = slices.Clone(g.FP4Formats)
		out.GPUs[i] = g
	}
	return out
}

// builtinCatalog parses the embedded catalog once; nobody changes what it returns (BuiltinCatalog
// hands out copies). A broken embedded file is a build defect: it panics (the tests load it).
var builtinCatalog = sync.OnceValue(func() *Catalog {
	data, err := dataFS.ReadFile("data/gpus.toml")
	if err != nil {
		panic(err)
	}
	c, err := ParseCatalog(data, "gpus.toml")
	if err != nil {
		panic(fmt.Sprintf("embedded GPU catalog: %v", err))
	}
	return c
})

// ParseCatalog reads a [[gpu]] TOML list and validates each entry.
func ParseCatalog(data []byte, name string) (*Catalog, error) {
	var c Catalog
	if _, err := tomlx.Decode(data, name, &c, ""); err != nil {
		return nil, err
	}
	for i := range c.GPUs {
		if err := c.GPUs[i].Validate(); err != nil {
			return nil, fmt.Errorf("%s: gpu[%d]: %w", name, i, err)
		}
	}
	return &c, nil
}

// Merge adds or replaces (by name) the entries of o.
func (c *Catalog) Merge(o *Catalog) {
	for _, g := range o.GPUs {
		replaced := false
		for i := range c.GPUs {
			if strings.EqualFold(c.GPUs[i].Name, g.Name) {
				c.GPUs[i] = g
				replaced = true
				break
			}
		}
		if !replaced {
			c.GPUs = append(c.GPUs, g)
		}
	}
}

// LoadCatalog returns the built-in catalog merged with a user file (empty path: built-in only).
func LoadCatalog(file string) (*Catalog, error) {
	c := BuiltinCatalog()
	if file == "" {
		return c, nil
	}
	data, err := fsutil.ReadFile(file, fsutil.MaxConfigBytes)
	if err != nil {
		return nil, err
	}
	o, err := ParseCatalog(data, file)
	if err != nil {
		return nil, err
	}
	c.Merge(o)
	return c, nil
}

// Find returns the GPU whose name or alias matches.
func (c *Catalog) Find(name string) (GPU, error) {
	for _, g := range c.GPUs {
		if g.Matches(name) {
			return g, nil
		}
	}
	names := make([]string, len(c.GPUs))
	for i, g := range c.GPUs {
		names[i] = g.Name
	}
	return GPU{}, fmt.Errorf("unknown GPU %q (known: %s)", name, strings.Join(names, ", "))
}
