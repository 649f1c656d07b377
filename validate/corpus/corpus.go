// Package corpus is the public validation corpus shipped with servesim: measured serving results
// that third parties published, one CSV per source, every file with the same 51-column header
// (package validate reads and scores them). The files are embedded unchanged; README.md in this
// directory says where each comes from and what to keep in mind when reading it.
//
// Nothing in the corpus was measured by servesim's authors, and nothing in servesim is fitted
// to it: `servesim validate` with no arguments scores it, and docs/accuracy.md holds the figures.
package corpus

import (
	"embed"
	"io/fs"
	"sort"
)

//go:embed *.csv
var files embed.FS

// Names lists the corpus files (base names such as "dstack-benchmarks.csv"), sorted.
func Names() []string {
	ents, err := fs.ReadDir(files, ".")
	if err != nil {
		panic("corpus: the embedded directory cannot be listed: " + err.Error())
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// Open opens one corpus file by its base name.
func Open(name string) (fs.File, error) { return files.Open(name) }
