package main

import (
	"fmt"
	"math"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/numfmt"
	"github.com/servesim/servesim/planner"
	"github.com/servesim/servesim/workload"
)

// workloadOverrides change a --workload's arrival rate and request count (simulate and plan):
// "--workload chat --rate 10" is the chat preset's requests arriving at 10 req/s.
type workloadOverrides struct {
	rate     float64
	requests int
}

func (f *workloadOverrides) register(fs *pflag.FlagSet) {
	fs.Float64Var(&f.rate, "rate", 0, "with --workload: an open loop's constant arrival rate instead of its own, `requests/s`")
	fs.IntVar(&f.requests, "requests", 0, "with --workload: the number of requests of an open or closed loop instead of its own (`N`)")
}

func (f *workloadOverrides) used(fs *pflag.FlagSet) bool {
	return fs.Changed("rate") || fs.Changed("requests")
}

// apply changes s; the workload's name records the change.
func (f *workloadOverrides) apply(fs *pflag.FlagSet, s *workload.Spec) error {
	if fs.Changed("rate") {
		switch {
		case !(f.rate > 0) || math.IsInf(f.rate, 0):
			return usagef("--rate %v: want a positive number of requests per second", f.rate)
		case s.Kind != workload.KindOpen:
			return usagef("--rate: workload %q is a %s workload: --rate sets an open loop's arrival rate", s.Name, s.Kind)
		case len(s.Open.Ramp) > 0:
			return usagef("--rate: workload %q ramps its rate: edit its ramp instead", s.Name)
		}
		s.Open.RatePerS = f.rate
		s.Name += fmt.Sprintf(" at %g req/s", f.rate)
	}
	if fs.Changed("requests") {
		if f.requests < 1 {
			return usagef("--requests %d: want a positive number of requests", f.requests)
		}
		switch s.Kind {
		case workload.KindOpen:
			s.Open.Requests = f.requests
		case workload.KindClosed:
			s.Closed.Requests = f.requests
		default:
			return usagef("--requests: workload %q is a %s workload: --requests sets an open or closed loop's request count", s.Name, s.Kind)
		}
		s.Name += fmt.Sprintf(", %s requests", numfmt.Commas(fmt.Sprint(f.requests)))
	}
	return nil
}

// stageText names a planning stage in the progress line.
func stageText(stage string) string {
	switch stage {
	case "screen":
		return "screens"
	case "full":
		return "full simulations"
	}
	return "simulations"
}

// searchText is the closing line's account of the simulations.
func searchText(p *planner.Plan) string {
	if d := p.Search.Describe(); d != "" {
		return d
	}
	return fmt.Sprintf("%s simulations", commasInt(p.Counts.Simulated))
}

// estimateText is the estimate printed before a plan's simulations.
func estimateText(e planner.Estimate) string { return e.Describe() }

func commasInt(n int) string { return numfmt.Commas(fmt.Sprint(n)) }
