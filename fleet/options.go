package fleet

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/workload"
)

// Options are the fleet command's traffic, fleet and plan flags. Their checks are usage errors
// naming the flag; changed reports whether a flag was given.
type Options struct {
	Trace                 string
	TraceFormat, TimeUnit string
	Speed, RateScale      float64
	FromS, ToS            float64
	Rate                  float64
	Requests              int
	DurationS             float64
	Process               string
	CV                    float64
	InputTokens           int
	OutputTokens          int
	RangeRatio            float64
	Replicas              int
	// Groups (--group, FILE:N) are further groups of the fleet, after the --replicas one.
	Groups               []string
	Router               string
	RefreshMs            float64
	ReplicaCap, QueueCap int
	PricePerHour         float64
	AutoMax, AutoMin     int
	StartupS, ScaleQueue float64
	ScaleTTFTms          float64
	IdleS, IntervalS     float64
	SeriesS              float64
	Stats                bool
	Format               string
	Seed                 uint64
	// Plan (--plan) searches the fewest replicas per option (Options, scenario files) and
	// policy; MaxReplicas bounds the search; Shard runs a part; Merge prints the parts' plan.
	Plan        bool
	Options     []string
	MaxReplicas int
	Shard       string
	Merge       []string
}

// CheckFormat refuses a --format other than text or json.
func (o *Options) CheckFormat() error {
	if o.Format != "text" && o.Format != "json" {
		return usage.Errorf("--format %q: want text or json", o.Format)
	}
	return nil
}

// Traffic is the traffic the flags give: a trace streamed row by row, or open-loop arrivals.
func (o *Options) Traffic(changed func(string) bool) (*Traffic, error) {
	switch {
	case o.Trace != "" && o.Rate > 0:
		return nil, usage.Errorf("--trace and --rate are exclusive: give one kind of traffic")
	case o.Trace != "":
		for _, n := range []string{"requests", "duration-s", "process", "cv", "input-tokens", "output-tokens", "range-ratio"} {
			if changed(n) {
				return nil, usage.Errorf("--%s goes with --rate, not --trace", n)
			}
		}
		if _, err := os.Stat(o.Trace); err != nil {
			return nil, fmt.Errorf("--trace: %w", err)
		}
		return TraceTraffic(o.Trace, workload.StreamOptions{TraceOptions: workload.TraceOptions{TimeUnit: o.TimeUnit}, Format: o.TraceFormat,
			Speed: o.Speed, RateScale: o.RateScale, FromS: o.FromS, ToS: o.ToS, Seed: o.Seed})
	case o.Rate > 0:
		for _, n := range []string{"speed", "rate-scale", "from", "to", "trace-format", "time-unit"} {
			if changed(n) {
				return nil, usage.Errorf("--%s goes with --trace, not --rate", n)
			}
		}
		if o.Requests <= 0 && o.DurationS <= 0 {
			return nil, usage.Errorf("--rate: give --requests N or --duration-s S")
		}
		t, err := RateTraffic(Rate{Rate: o.Rate, Requests: o.Requests, DurationS: o.DurationS, Process: o.Process, CV: o.CV,
			InputTokens: o.InputTokens, OutputTokens: o.OutputTokens, RangeRatio: o.RangeRatio})
		return t, usage.Wrap(err)
	}
	return nil, usage.Errorf("traffic: give --trace FILE or --rate R (with --requests or --duration-s)")
}

// Settings are the fleet's settings the flags give.
func (o *Options) Settings() *Settings {
	s := &Settings{PricePerHour: o.PricePerHour, Seed: o.Seed, ReplicaCap: o.ReplicaCap, QueueCap: o.QueueCap, SeriesS: o.SeriesS,
		RefreshS: o.RefreshMs / 1e3}
	if o.AutoMax > 0 {
		s.Autoscale = &Autoscale{Min: o.AutoMin, Max: o.AutoMax, StartupS: o.StartupS, IntervalS: o.IntervalS,
			QueuePerReplica: o.ScaleQueue, TTFTms: o.ScaleTTFTms, IdleS: o.IdleS}
	}
	return s
}

// RunPolicy checks a fleet run's flags and returns its routing policy.
func (o *Options) RunPolicy() (Policy, error) {
	p, err := ParsePolicy(o.Router)
	if err != nil {
		return "", usage.Errorf("--router: %v", err)
	}
	if err := o.checkRefresh(); err != nil {
		return "", err
	}
	switch {
	case len(o.Groups) > 0 && o.Replicas < 0:
		return "", usage.Errorf("--replicas %d: want 0 or more with --group", o.Replicas)
	case len(o.Groups) == 0 && o.Replicas < 1:
		return "", usage.Errorf("--replicas %d: want at least 1", o.Replicas)
	}
	return p, nil
}

// PlanPolicies checks a plan's flags (slo: the traffic's objectives) and returns its routing
// policies.
func (o *Options) PlanPolicies(slo workload.SLO) ([]Policy, error) {
	if len(o.Groups) > 0 {
		return nil, usage.Errorf("--plan does not take --group: it searches one deployment's replica count per option; give each deployment as --option FILE")
	}
	if !slo.Any() {
		return nil, usage.Errorf("--plan: give the objectives (--slo-ttft-ms, --slo-tpot-ms, ... and --slo-quantile)")
	}
	if o.AutoMax > 0 {
		return nil, usage.Errorf("--plan searches fixed replica counts: it does not take --autoscale-max")
	}
	if o.MaxReplicas < 1 {
		return nil, usage.Errorf("--max-replicas %d: want at least 1", o.MaxReplicas)
	}
	pols, err := ParsePolicies(o.Router)
	if err != nil {
		return nil, usage.Errorf("--router: %v", err)
	}
	return pols, o.checkRefresh()
}

// checkRefresh refuses a --router-refresh-ms that is neither 0 nor an interval of 1 ns to
// MaxRefreshS.
func (o *Options) checkRefresh() error {
	if ms := o.RefreshMs; !validRefresh(ms / 1e3) {
		return usage.Errorf("--router-refresh-ms %g: want 0 (the router sees the replicas exactly) or an interval from 1e-06 to %g ms", ms, MaxRefreshS*1e3)
	}
	return nil
}

// WriteStats writes the traffic's statistics (workload.StreamStats) in the --format.
func (o *Options) WriteStats(w io.Writer, t *Traffic) error {
	st, err := t.Open()
	if err != nil {
		return err
	}
	stats, err := workload.StreamStats(st)
	CloseStream(st)
	if err != nil {
		return err
	}
	if o.Format == "json" {
		b, _ := json.MarshalIndent(stats, "", "  ")
		_, err = w.Write(append(b, '\n'))
		return err
	}
	return stats.WriteText(w)
}

// WriteResult writes a run's result in the --format; deployment names what each replica runs.
func (o *Options) WriteResult(w io.Writer, res *Result, t *Traffic, deployment string) error {
	if o.Format == "json" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	WriteText(w, res, t, deployment)
	return nil
}

// WritePlanFile writes a plan: a --shard's part as JSON (for --merge), else the plan in the
// --format.
func (o *Options) WritePlanFile(w io.Writer, f *PlanFile) error {
	if o.Shard == "" {
		return WritePlan(w, f, o.Format)
	}
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
