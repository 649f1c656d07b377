package workload

import (
	"fmt"
	"os"
	"strings"

	"github.com/servesim/servesim/internal/usage"
)

// This file holds what a command line says about a workload: the file or preset a flag names
// (LoadArg), the objectives (SLOArgs) and the changes to a loaded workload (Overrides). Their
// errors are usage errors naming the flag. changed reports whether a flag was given.

// LoadArg reads a workload flag's value: a file (TOML, or a .csv/.jsonl trace) or a preset name.
// Errors name the flag ("--workload").
func LoadArg(flag, arg string) (*Spec, error) {
	if arg == "" {
		return nil, usage.Errorf(flag+": missing: give a workload file (TOML, or a .csv/.jsonl trace) or a preset (%s)", PresetNames())
	}
	if _, err := os.Stat(arg); err == nil {
		return Load(arg)
	} else if strings.ContainsAny(arg, "/\\") || strings.Contains(arg, ".") && !strings.HasPrefix(arg, "bench-") {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	s, err := Preset(arg)
	if err != nil {
		return nil, usage.Errorf("%s: %v", flag, err)
	}
	return s, nil
}

// PresetNames lists the presets as "a, b, c".
func PresetNames() string {
	var n []string
	for _, p := range Presets() {
		n = append(n, p.Name)
	}
	return strings.Join(n, ", ")
}

// PresetHelp lists the presets one per line with their descriptions.
func PresetHelp() string {
	var b strings.Builder
	for _, p := range Presets() {
		fmt.Fprintf(&b, "  %-13s %s\n", p.Name, p.Description)
	}
	return b.String()
}

// SLOArgs are the objectives a command line gives (--slo-ttft-ms, --slo-tpot-ms, --slo-e2e-ms,
// --slo-user-tok-s, --slo-quantile).
type SLOArgs struct {
	TTFTms, TPOTms, E2Ems, UserTokS, Quantile float64
}

// Apply overrides s's objectives with the flags that were given; a value out of range is a usage
// error naming its flag.
func (a *SLOArgs) Apply(changed func(string) bool, s *SLO) error {
	for _, c := range []struct {
		n   string
		dst *float64
		v   float64
	}{{"slo-ttft-ms", &s.TTFTms, a.TTFTms}, {"slo-tpot-ms", &s.TPOTms, a.TPOTms}, {"slo-e2e-ms", &s.E2Ems, a.E2Ems}, {"slo-user-tok-s", &s.UserTokS, a.UserTokS}} {
		if !changed(c.n) {
			continue
		}
		if !(c.v > 0) {
			return usage.Errorf("--%s %v: must be a positive number", c.n, c.v)
		}
		*c.dst = c.v
	}
	if changed("slo-quantile") {
		if !(a.Quantile >= 0.5 && a.Quantile < 1) {
			return usage.Errorf("--slo-quantile %v: want a fraction in [0.5, 1), such as 0.9 or 0.99", a.Quantile)
		}
		s.Quantile = a.Quantile
	}
	return nil
}

// Overrides change a loaded workload's arrival rate and request count (--rate, --requests):
// "--workload chat --rate 10" is the chat preset's requests arriving at 10 req/s.
type Overrides struct {
	Rate     float64
	Requests int
}

// Used reports whether either flag was given.
func (o *Overrides) Used(changed func(string) bool) bool {
	return changed("rate") || changed("requests")
}

// Apply changes s (Spec.Override) with the flags that were given; the workload's name records
// the change.
func (o *Overrides) Apply(changed func(string) bool, s *Spec) error {
	return usage.Wrap(s.Override(o.Rate, changed("rate"), o.Requests, changed("requests")))
}
