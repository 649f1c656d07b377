package vllmcmd

import (
	"fmt"
	"sort"
	"strings"

	"github.com/servesim/servesim/internal/editdist"
)

// Suggest is the known `vllm serve` flag nearest to an unknown one (a typo: few letters added,
// dropped, swapped or changed, or the dashes and underscores mixed up), "" when none is near.
// Boolean flags are offered in their --no- form too.
func Suggest(flag string) string {
	name, _, _ := strings.Cut(flag, "=")
	if !strings.HasPrefix(name, "-") {
		return ""
	}
	name = canonical(name)
	var names []string
	for n, s := range flagTable() {
		names = append(names, n)
		if s.kind == boolFlag {
			names = append(names, "--no-"+n[2:])
		}
	}
	sort.Strings(names) // a tie goes to the first name, whatever the map's order
	return editdist.Nearest(name, names)
}

// UnknownError refuses the command's unknown flags and words as `vllm serve` refuses
// unrecognized arguments: one error naming each, with the flag it nearly spells ("did you
// mean"). Nil when the command has none.
func (r *Result) UnknownError() error {
	if len(r.Unknown) == 0 {
		return nil
	}
	var parts []string
	near := false
	for _, u := range r.Unknown {
		word, _, _ := strings.Cut(u, " ")
		if s := Suggest(word); s != "" {
			parts = append(parts, fmt.Sprintf("%s (did you mean %s?)", u, s))
			near = true
			continue
		}
		parts = append(parts, u)
	}
	msg := fmt.Sprintf("unrecognized arguments: %s: vllm serve refuses them", strings.Join(parts, ", "))
	if !near {
		msg += "; servesim knows the vllm serve flags that change what it simulates and those known not to (see 'servesim import --help'): if your vLLM takes this one, it is not simulated: leave it out to simulate the rest"
	}
	return fmt.Errorf("%s", msg)
}
