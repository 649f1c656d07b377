package validate

import (
	"fmt"

	"github.com/servesim/servesim/validate/corpus"
)

// ReadCorpus reads every file of the shipped corpus (package validate/corpus) in name order:
// what `servesim validate` scores when given no files. A name is "corpus/FILE".
func ReadCorpus() ([]Row, error) {
	var out []Row
	for _, name := range corpus.Names() {
		f, err := corpus.Open(name)
		if err != nil {
			return nil, fmt.Errorf("corpus/%s: %w", name, err)
		}
		rows, err := ReadCSV(f, "corpus/"+name)
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	if err := CheckDistinct(out); err != nil {
		return nil, err
	}
	return out, nil
}
