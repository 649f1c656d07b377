package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/fleet"
	"github.com/servesim/servesim/internal/hugepages"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/report"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// registerFleet adds the fleet command's traffic, fleet and plan flags.
func registerFleet(fs *pflag.FlagSet, f *fleet.Options) {
	fs.StringVar(&f.Trace, "trace", "", "replay a trace `file` (.csv: Azure or arrival/input/output columns; .jsonl: Mooncake with hash_ids), streamed")
	fs.StringVar(&f.TraceFormat, "trace-format", "", "the trace's `format` (csv or jsonl; default: from the extension)")
	fs.StringVar(&f.TimeUnit, "time-unit", "", "`unit` of a bare timestamp column (s, ms, us; default ms for JSONL, s for CSV)")
	fs.Float64Var(&f.Speed, "speed", 1, "replay the trace `k` times faster (arrival times divided by k)")
	fs.Float64Var(&f.RateScale, "rate-scale", 1, "multiply the trace's request rate by `k`, keeping its shape over the day (thins below 1, copies above)")
	fs.Float64Var(&f.FromS, "from", 0, "replay the trace from `seconds` after its first row")
	fs.Float64Var(&f.ToS, "to", 0, "replay the trace up to `seconds` after its first row (0: the end)")
	fs.Float64Var(&f.Rate, "rate", 0, "instead of a trace, open-loop arrivals at `req/s` (the whole fleet's)")
	fs.IntVar(&f.Requests, "requests", 0, "with --rate: `N` requests")
	fs.Float64Var(&f.DurationS, "duration-s", 0, "with --rate: arrivals for `seconds`")
	fs.StringVar(&f.Process, "process", "poisson", "with --rate: arrival `process`, poisson or gamma (with --cv)")
	fs.Float64Var(&f.CV, "cv", 1, "with --process gamma: the gaps' coefficient of `variation` (above 1: bursty)")
	fs.IntVar(&f.InputTokens, "input-tokens", 1024, "with --rate: mean input `tokens`")
	fs.IntVar(&f.OutputTokens, "output-tokens", 256, "with --rate: mean output `tokens`")
	fs.Float64Var(&f.RangeRatio, "range-ratio", 0, "with --rate: lengths uniform within +-`fraction` of the means")
	fs.IntVar(&f.Replicas, "replicas", 1, "`N` replicas of the deployment (0 with --group: none at the start)")
	fs.StringArrayVar(&f.Groups, "group", nil, "add a group: `FILE:N` is N replicas of the scenario TOML FILE's deployment (the first group's model) behind the same router (repeatable)")
	fs.StringVar(&f.Router, "router", "round-robin", "routing `policy`: "+fleet.PolicyNames()+"; with --plan a comma-separated list or 'all'")
	fs.Float64Var(&f.RefreshMs, "router-refresh-ms", 0, "the router reads the replicas' state (outstanding requests, KV usage) as of its last refresh, every `ms`, plus its own sends since, as a gateway scraping engine metrics (0: exactly, at each decision)")
	fs.IntVar(&f.ReplicaCap, "replica-cap", 0, "the router holds a request while every replica has `N` outstanding (0: sends at once)")
	fs.IntVar(&f.QueueCap, "queue-cap", 0, "the router's queue holds at most `N` requests; more are rejected and counted (0: unbounded)")
	fs.Float64Var(&f.PricePerHour, "price-per-hour", -1, "one replica's price in `USD` per hour (default: its GPUs' list price); with --group, the --replicas deployment's only")
	fs.IntVar(&f.AutoMax, "autoscale-max", 0, "autoscale the replicas up to `N` (0: no autoscaler); with --group, those of the --replicas deployment")
	fs.IntVar(&f.AutoMin, "autoscale-min", 0, "keep at least `N` replicas (default: --replicas); with --group, of the --replicas deployment")
	fs.Float64Var(&f.StartupS, "startup-s", 120, "autoscaler: `seconds` from asking for a replica to its serving (model load, start-up)")
	fs.Float64Var(&f.ScaleQueue, "scale-queue", 8, "autoscaler: add a replica when more than `N` requests wait per serving replica")
	fs.Float64Var(&f.ScaleTTFTms, "scale-ttft-ms", 0, "autoscaler: add a replica when the interval's p90 TTFT exceeds `ms`")
	fs.Float64Var(&f.IdleS, "idle-s", 300, "autoscaler: remove a replica idle for `seconds`")
	fs.Float64Var(&f.IntervalS, "scale-interval-s", 10, "autoscaler: decide every `seconds`")
	fs.Float64Var(&f.SeriesS, "series-s", 0, "width of the over-time series' buckets in `seconds` (default: the span / 240)")
	fs.BoolVar(&f.Stats, "stats", false, "print the traffic's statistics (rates, token percentiles, prefix reuse) and stop")
	fs.StringVar(&f.Format, "format", "text", "output `format`: text or json")
	fs.BoolVar(&f.Plan, "plan", false, "find the fewest replicas meeting the --slo-* objectives, per deployment option and routing policy")
	fs.StringArrayVar(&f.Options, "option", nil, "with --plan: another deployment option, a scenario TOML `file` (repeatable; the --config/--vllm-cmd one is the first)")
	fs.IntVar(&f.MaxReplicas, "max-replicas", 64, "with --plan: search up to `N` replicas")
	fs.StringVar(&f.Shard, "shard", "", "with --plan: run only shard `i/n` (0 <= i < n) of the (option, policy) searches and write them as JSON, for 'servesim fleet --plan --merge'")
	fs.StringArrayVar(&f.Merge, "merge", nil, "with --plan: merge the JSON `files` of --shard runs into the plan (repeatable)")
}

func fleetCmd() *command {
	return &command{
		Name:   "fleet",
		NoArgs: true,
		Short:  "simulate replicas behind a router on a trace or a rate; --plan: how many replicas meet the SLO",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var sf scenarioFlags
			sf.register(fs)
			var ff fleet.Options
			registerFleet(fs, &ff)
			var slo workload.SLOArgs
			registerSLO(fs, &slo)
			var out outFlag
			out.register(fs, "the results")
			return func(args []string) error {
				if err := out.check(); err != nil {
					return err
				}
				if err := ff.CheckFormat(); err != nil {
					return err
				}
				var buf bytes.Buffer
				if ff.Plan && len(ff.Merge) > 0 {
					f, err := fleet.MergePlans(ff.Merge)
					if err != nil {
						return err
					}
					if err := ff.WritePlanFile(&buf, f); err != nil {
						return err
					}
					return out.write(e.stdout, &buf)
				}
				traffic, err := ff.Traffic(fs.Changed)
				if err != nil {
					return err
				}
				if err := slo.Apply(fs.Changed, &traffic.Spec.SLO); err != nil {
					return err
				}
				if ff.Stats {
					if err := ff.WriteStats(&buf, traffic); err != nil {
						return err
					}
					return out.write(e.stdout, &buf)
				}
				r, srv, err := sf.loadServer(e.stderr, e.info())
				if err != nil {
					return err
				}
				ff.Seed = r.Scenario.Seed
				if err := traffic.Scan(); err != nil {
					return err
				}
				if ff.Plan {
					return runFleetPlan(e, &buf, &out, &ff, r, srv, traffic)
				}
				p, err := ff.RunPolicy()
				if err != nil {
					return err
				}
				if ff.Replicas == 0 && len(ff.Groups) > 0 && (!sf.isSeed() || sf.Params != "" || sf.Uncalibrated) {
					return usage.Errorf("--replicas 0: the --group deployments alone form the fleet; the --config/--vllm-cmd deployment's flags would go unused")
				}
				seeded := ff.Replicas > 0 // with --replicas 0 the first group's scenario gives the seed
				groups, err := ff.FleetGroups(fleet.Group{Name: r.Scenario.Name, Deployment: report.Subject(r), Server: srv}, func(file string) (fleet.Group, error) {
					a := scenario.Args{Config: file, Seed: sf.Seed, SeedSet: sf.SeedSet}
					ro, err := a.Load(e.stderr, e.info(), false)
					if err != nil {
						return fleet.Group{}, err
					}
					if !seeded {
						ff.Seed, seeded = ro.Scenario.Seed, true
					}
					so, err := sim.NewServer(ro.Deployment, ro.Params)
					if err != nil {
						return fleet.Group{}, err
					}
					so.StepByStep = sf.stepByStep
					return fleet.Group{Name: ro.Scenario.Name, Deployment: report.Subject(ro), Server: so}, nil
				})
				if err != nil {
					return err
				}
				cfg := ff.Settings().FleetConfig(groups, p, traffic)
				start := time.Now()
				res, err := runFleet(e, cfg, traffic)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.info(), "servesim: %s requests routed, %.0f s of fleet time in %.2f s\n", groupThousands(int(res.Routed)), res.EndS, time.Since(start).Seconds())
				if err := ff.WriteResult(&buf, res, traffic, groups[0].Deployment); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}

// A fleet of hugeFleet replicas or more has the heap reserve heapPerReplica bytes a replica in
// transparent huge pages (package hugepages) before it runs: 100 replicas of an 8B model on one
// GPU each hold some 200 MB, and a long run of them takes about a tenth less CPU time in huge
// pages.
const (
	hugeFleet      = 16
	heapPerReplica = 2 << 20
)

// runFleet runs one fleet configuration with progress on stderr.
func runFleet(e *env, cfg fleet.Config, t *fleet.Traffic) (*fleet.Result, error) {
	st, err := t.Open()
	if err != nil {
		return nil, err
	}
	defer fleet.CloseStream(st)
	if n := cfg.Replicas(); n >= hugeFleet {
		// A large fleet's state, visited a step at a time, then spans fewer pages.
		hugepages.Reserve(n * heapPerReplica)
	}
	pr := newProgress(e, 2*time.Second)
	total := t.Requests
	cfg.Progress = func(routed int64, _ vtime.Time) { pr.Update("requests routed", int(routed), total) }
	res, err := fleet.Run(cfg, st)
	pr.Finish()
	return res, err
}

// runFleetPlan is fleet --plan: the searches of the deployment and the --option files (or the
// --shard's part of them, written as JSON), then the plan.
func runFleetPlan(e *env, buf *bytes.Buffer, out *outFlag, ff *fleet.Options, r *scenario.Resolved, srv *sim.Server, t *fleet.Traffic) error {
	pols, err := ff.PlanPolicies(t.Spec.SLO)
	if err != nil {
		return err
	}
	opts := []fleet.PlanOption{{Name: report.Subject(r), Group: r.Scenario.Name, Server: srv}}
	for _, p := range ff.Options {
		s, err := scenario.Load(p)
		if err != nil {
			return fmt.Errorf("--option: %w", err)
		}
		ro, err := s.Resolve(scenario.ResolveOptions{})
		if err != nil {
			return fmt.Errorf("--option %s: %w", p, err)
		}
		so, err := sim.NewServer(ro.Deployment, ro.Params)
		if err != nil {
			return fmt.Errorf("--option %s: %w", p, err)
		}
		opts = append(opts, fleet.PlanOption{Name: report.Subject(ro) + " (" + p + ")", Group: ro.Scenario.Name, Server: so})
	}
	shardI, shardN := 0, 1
	if ff.Shard != "" {
		sh, err := parseShard(ff.Shard)
		if err != nil {
			return err
		}
		shardI, shardN = sh.Index, sh.Count
	}
	pl := fleet.Planner{Traffic: t, Settings: *ff.Settings(), MaxReplicas: ff.MaxReplicas, Log: e.info(),
		Run: func(cfg fleet.Config) (*fleet.Result, error) { return runFleet(e, cfg, t) }}
	file, err := pl.Plan(opts, pols, shardI, shardN, ff.Shard)
	if err != nil {
		return err
	}
	if err := ff.WritePlanFile(buf, file); err != nil {
		return err
	}
	return out.write(e.stdout, buf)
}
