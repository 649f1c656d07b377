package protocol

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/servesim/servesim/matrix"
)

// ParseCells reads a comma-separated list of the protocol's cells for a max_model_len: CTX:C
// for a decode cell (8K:32), CTX:prefill for a prefill row, the context as the protocol labels
// it. A cell the protocol does not run is refused with the contexts and concurrencies it does.
func (p *Protocol) ParseCells(arg string, maxModelLen int) ([]matrix.Key, error) {
	known := map[matrix.Key]bool{}
	var labels []string
	seen := map[string]bool{}
	for _, k := range p.Keys(maxModelLen) {
		known[k] = true
		if !seen[k.Context] {
			seen[k.Context] = true
			labels = append(labels, k.Context)
		}
	}
	var out []matrix.Key
	for _, part := range strings.Split(arg, ",") {
		part = strings.TrimSpace(part)
		ctx, c, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("%q: want CTX:C (a decode cell, such as 8K:32) or CTX:prefill", part)
		}
		k := matrix.Key{Phase: matrix.Decode, Context: ctx}
		if c == "prefill" {
			k.Phase, k.Concurrency = matrix.Prefill, 1
		} else {
			n, err := strconv.Atoi(c)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("%q: concurrency %q: want a positive integer or \"prefill\"", part, c)
			}
			k.Concurrency = n
		}
		if !known[k] {
			return nil, fmt.Errorf("%q: not a cell of the scenario's protocol (contexts %s; concurrency %v)", part, strings.Join(labels, ", "), p.Concurrency)
		}
		out = append(out, k)
	}
	return out, nil
}
