package scenario

import (
	"fmt"
	"strconv"
	"strings"
)

// The flag values of Args whose "unset" is not their zero value, as a command line's flag set
// takes them (String, Set, Type: pflag.Value). A value out of range is refused rather than
// meaning "unset".

// SeedValue is --seed: unset (the scenario's seed) or a non-negative integer; it sets Args.Seed
// and Args.SeedSet.
type SeedValue struct{ A *Args }

func (s SeedValue) String() string {
	if s.A == nil || !s.A.SeedSet {
		return ""
	}
	return strconv.FormatUint(s.A.Seed, 10)
}

func (s SeedValue) Set(v string) error {
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return fmt.Errorf("want a non-negative integer (leave --seed out for the scenario's seed)")
	}
	s.A.Seed, s.A.SeedSet = n, true
	return nil
}

func (s SeedValue) Type() string { return "uint" }

// ReadyTimeoutValue is --ready-timeout-s: unset (the scenario's) or seconds >= 0; it sets
// Args.ReadyTimeout and Args.ReadyTimeoutSet.
type ReadyTimeoutValue struct{ A *Args }

func (s ReadyTimeoutValue) String() string {
	if s.A == nil || !s.A.ReadyTimeoutSet {
		return ""
	}
	return strconv.FormatFloat(s.A.ReadyTimeout, 'g', -1, 64)
}

func (s ReadyTimeoutValue) Set(v string) error {
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(x >= 0 && x <= 1e6) {
		return fmt.Errorf("want seconds >= 0 (leave the flag out for the scenario's value)")
	}
	s.A.ReadyTimeout, s.A.ReadyTimeoutSet = x, true
	return nil
}

func (s ReadyTimeoutValue) Type() string { return "float" }

// GPUsValue is --gpus: a number of GPUs (Args.GPUs). A list of GPU kinds or a catalog file is
// another flag, and a value that looks like one says which.
type GPUsValue struct{ A *Args }

func (g GPUsValue) String() string {
	if g.A == nil {
		return "0"
	}
	return strconv.Itoa(g.A.GPUs)
}

func (g GPUsValue) Type() string { return "int" }

func (g GPUsValue) Set(v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	switch {
	case err == nil:
		g.A.GPUs = n
		return nil
	case strings.HasSuffix(strings.ToLower(v), ".toml"):
		return fmt.Errorf("want a number of GPUs; a GPU catalog file is --gpu-catalog %s", v)
	default:
		return fmt.Errorf("want a number of GPUs; GPU kinds to plan over are --gpu-kinds %s (plan), one GPU is --gpu NAME", v)
	}
}
