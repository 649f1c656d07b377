package main

import (
	"fmt"

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

// apply changes s (workload.Spec.Override); the workload's name records the change.
func (f *workloadOverrides) apply(fs *pflag.FlagSet, s *workload.Spec) error {
	if err := s.Override(f.rate, fs.Changed("rate"), f.requests, fs.Changed("requests")); err != nil {
		return usageError{err}
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
