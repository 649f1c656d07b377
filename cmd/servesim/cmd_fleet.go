package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/fleet"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// fleetFlags are the fleet command's traffic and fleet flags.
type fleetFlags struct {
	trace                     string
	traceFormat, timeUnit     string
	speed, rateScale          float64
	fromS, toS                float64
	rate                      float64
	requests                  int
	durationS                 float64
	process                   string
	cv                        float64
	input, output             int
	rangeRatio                float64
	replicas                  int
	router                    string
	replicaCap, queueCap      int
	price                     float64
	autoMax, autoMin          int
	startupS, scaleQ, scaleMS float64
	idleS, intervalS          float64
	seriesS                   float64
	stats                     bool
	format                    string
	seed                      uint64
	// plan
	plan        bool
	options     []string
	maxReplicas int
	shard       string
	merge       []string
}

func (f *fleetFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.trace, "trace", "", "replay a trace `file` (.csv: Azure or arrival/input/output columns; .jsonl: Mooncake with hash_ids), streamed")
	fs.StringVar(&f.traceFormat, "trace-format", "", "the trace's `format` (csv or jsonl; default: from the extension)")
	fs.StringVar(&f.timeUnit, "time-unit", "", "`unit` of a bare timestamp column (s, ms, us; default ms for JSONL, s for CSV)")
	fs.Float64Var(&f.speed, "speed", 1, "replay the trace `k` times faster (arrival times divided by k)")
	fs.Float64Var(&f.rateScale, "rate-scale", 1, "multiply the trace's request rate by `k`, keeping its shape over the day (thins below 1, copies above)")
	fs.Float64Var(&f.fromS, "from", 0, "replay the trace from `seconds` after its first row")
	fs.Float64Var(&f.toS, "to", 0, "replay the trace up to `seconds` after its first row (0: the end)")
	fs.Float64Var(&f.rate, "rate", 0, "instead of a trace, open-loop arrivals at `req/s` (the whole fleet's)")
	fs.IntVar(&f.requests, "requests", 0, "with --rate: `N` requests")
	fs.Float64Var(&f.durationS, "duration-s", 0, "with --rate: arrivals for `seconds`")
	fs.StringVar(&f.process, "process", "poisson", "with --rate: arrival `process`, poisson or gamma (with --cv)")
	fs.Float64Var(&f.cv, "cv", 1, "with --process gamma: the gaps' coefficient of `variation` (above 1: bursty)")
	fs.IntVar(&f.input, "input-tokens", 1024, "with --rate: mean input `tokens`")
	fs.IntVar(&f.output, "output-tokens", 256, "with --rate: mean output `tokens`")
	fs.Float64Var(&f.rangeRatio, "range-ratio", 0, "with --rate: lengths uniform within +-`fraction` of the means")
	fs.IntVar(&f.replicas, "replicas", 1, "`N` replicas of the deployment")
	fs.StringVar(&f.router, "router", "round-robin", "routing `policy`: "+fleet.PolicyNames()+"; with --plan a comma-separated list or 'all'")
	fs.IntVar(&f.replicaCap, "replica-cap", 0, "the router holds a request while every replica has `N` outstanding (0: sends at once)")
	fs.IntVar(&f.queueCap, "queue-cap", 0, "the router's queue holds at most `N` requests; more are rejected and counted (0: unbounded)")
	fs.Float64Var(&f.price, "price-per-hour", -1, "one replica's price in `USD` per hour (default: its GPUs' list price)")
	fs.IntVar(&f.autoMax, "autoscale-max", 0, "autoscale the replicas up to `N` (0: no autoscaler)")
	fs.IntVar(&f.autoMin, "autoscale-min", 0, "keep at least `N` replicas (default: --replicas)")
	fs.Float64Var(&f.startupS, "startup-s", 120, "autoscaler: `seconds` from asking for a replica to its serving (model load, start-up)")
	fs.Float64Var(&f.scaleQ, "scale-queue", 8, "autoscaler: add a replica when more than `N` requests wait per serving replica")
	fs.Float64Var(&f.scaleMS, "scale-ttft-ms", 0, "autoscaler: add a replica when the interval's p90 TTFT exceeds `ms`")
	fs.Float64Var(&f.idleS, "idle-s", 300, "autoscaler: remove a replica idle for `seconds`")
	fs.Float64Var(&f.intervalS, "scale-interval-s", 10, "autoscaler: decide every `seconds`")
	fs.Float64Var(&f.seriesS, "series-s", 0, "width of the over-time series' buckets in `seconds` (default: the span / 240)")
	fs.BoolVar(&f.stats, "stats", false, "print the traffic's statistics (rates, token percentiles, prefix reuse) and stop")
	fs.StringVar(&f.format, "format", "text", "output `format`: text or json")
	fs.BoolVar(&f.plan, "plan", false, "find the fewest replicas meeting the --slo-* objectives, per deployment option and routing policy")
	fs.StringArrayVar(&f.options, "option", nil, "with --plan: another deployment option, a scenario TOML `file` (repeatable; the --config/--vllm-cmd one is the first)")
	fs.IntVar(&f.maxReplicas, "max-replicas", 64, "with --plan: search up to `N` replicas")
	fs.StringVar(&f.shard, "shard", "", "with --plan: run only shard `i/n` (0 <= i < n) of the (option, policy) searches and write them as JSON, for 'servesim fleet --plan --merge'")
	fs.StringArrayVar(&f.merge, "merge", nil, "with --plan: merge the JSON `files` of --shard runs into the plan (repeatable)")
}

func fleetCmd() *command {
	return &command{
		Name:  "fleet",
		Short: "simulate replicas behind a router on a trace or a rate; --plan: how many replicas meet the SLO",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var sf scenarioFlags
			sf.register(fs)
			var ff fleetFlags
			ff.register(fs)
			var slo workload.SLOArgs
			registerSLO(fs, &slo)
			var out outFlag
			out.register(fs, "the results")
			return func(args []string) error {
				if len(args) > 0 {
					return usage.Errorf("unexpected argument %q", args[0])
				}
				if err := out.check(); err != nil {
					return err
				}
				if ff.format != "text" && ff.format != "json" {
					return usage.Errorf("--format %q: want text or json", ff.format)
				}
				var buf bytes.Buffer
				if ff.plan && len(ff.merge) > 0 {
					f, err := fleet.MergePlans(ff.merge)
					if err != nil {
						return err
					}
					if err := fleet.WritePlan(&buf, f, ff.format); err != nil {
						return err
					}
					return out.write(e.stdout, &buf)
				}
				traffic, err := ff.traffic(fs)
				if err != nil {
					return err
				}
				if err := slo.Apply(fs.Changed, &traffic.Spec.SLO); err != nil {
					return err
				}
				if ff.stats {
					st, err := traffic.Open()
					if err != nil {
						return err
					}
					stats, err := workload.StreamStats(st)
					fleet.CloseStream(st)
					if err != nil {
						return err
					}
					if ff.format == "json" {
						b, _ := json.MarshalIndent(stats, "", "  ")
						buf.Write(append(b, '\n'))
					} else if err := stats.WriteText(&buf); err != nil {
						return err
					}
					return out.write(e.stdout, &buf)
				}
				r, srv, err := sf.loadServer(e.stderr, e.info())
				if err != nil {
					return err
				}
				ff.seed = r.Scenario.Seed
				if err := traffic.Scan(); err != nil {
					return err
				}
				if ff.plan {
					return runFleetPlan(e, &buf, &out, &ff, r, srv, traffic)
				}
				p, err := fleet.ParsePolicy(ff.router)
				if err != nil {
					return usage.Errorf("--router: %v", err)
				}
				if ff.replicas < 1 {
					return usage.Errorf("--replicas %d: want at least 1", ff.replicas)
				}
				cfg := ff.settings().Config(r.Scenario.Name, srv, ff.replicas, p, traffic)
				start := time.Now()
				res, err := runFleet(e, cfg, traffic)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.info(), "servesim: %s requests routed, %.0f s of fleet time in %.2f s\n", groupThousands(int(res.Routed)), res.EndS, time.Since(start).Seconds())
				if ff.format == "json" {
					b, err := json.MarshalIndent(res, "", "  ")
					if err != nil {
						return err
					}
					buf.Write(append(b, '\n'))
				} else {
					fleet.WriteText(&buf, res, traffic, describeDeployment(r))
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}

func (f *fleetFlags) traffic(fs *pflag.FlagSet) (*fleet.Traffic, error) {
	switch {
	case f.trace != "" && f.rate > 0:
		return nil, usage.Errorf("--trace and --rate are exclusive: give one kind of traffic")
	case f.trace != "":
		for _, n := range []string{"requests", "duration-s", "process", "cv", "input-tokens", "output-tokens", "range-ratio"} {
			if fs.Changed(n) {
				return nil, usage.Errorf("--%s goes with --rate, not --trace", n)
			}
		}
		if _, err := os.Stat(f.trace); err != nil {
			return nil, fmt.Errorf("--trace: %w", err)
		}
		return fleet.TraceTraffic(f.trace, workload.StreamOptions{TraceOptions: workload.TraceOptions{TimeUnit: f.timeUnit}, Format: f.traceFormat,
			Speed: f.speed, RateScale: f.rateScale, FromS: f.fromS, ToS: f.toS, Seed: f.seed})
	case f.rate > 0:
		for _, n := range []string{"speed", "rate-scale", "from", "to", "trace-format", "time-unit"} {
			if fs.Changed(n) {
				return nil, usage.Errorf("--%s goes with --trace, not --rate", n)
			}
		}
		if f.requests <= 0 && f.durationS <= 0 {
			return nil, usage.Errorf("--rate: give --requests N or --duration-s S")
		}
		t, err := fleet.RateTraffic(fleet.Rate{Rate: f.rate, Requests: f.requests, DurationS: f.durationS, Process: f.process, CV: f.cv,
			InputTokens: f.input, OutputTokens: f.output, RangeRatio: f.rangeRatio})
		if err != nil {
			return nil, usage.Errorf("%v", err)
		}
		return t, nil
	}
	return nil, usage.Errorf("traffic: give --trace FILE or --rate R (with --requests or --duration-s)")
}

func (f *fleetFlags) settings() *fleet.Settings {
	s := &fleet.Settings{PricePerHour: f.price, Seed: f.seed, ReplicaCap: f.replicaCap, QueueCap: f.queueCap, SeriesS: f.seriesS}
	if f.autoMax > 0 {
		s.Autoscale = &fleet.Autoscale{Min: f.autoMin, Max: f.autoMax, StartupS: f.startupS, IntervalS: f.intervalS,
			QueuePerReplica: f.scaleQ, TTFTms: f.scaleMS, IdleS: f.idleS}
	}
	return s
}

// runFleet runs one fleet configuration with progress on stderr.
func runFleet(e *env, cfg fleet.Config, t *fleet.Traffic) (*fleet.Result, error) {
	st, err := t.Open()
	if err != nil {
		return nil, err
	}
	defer fleet.CloseStream(st)
	pr := newProgress(e, 2*time.Second)
	total := t.Requests
	cfg.Progress = func(routed int64, _ vtime.Time) { pr.Update("requests routed", int(routed), total) }
	res, err := fleet.Run(cfg, st)
	pr.Finish()
	return res, err
}

func describeDeployment(r *scenario.Resolved) string {
	m := r.Deployment.Hardware
	return fmt.Sprintf("%s on %d x %s", r.Deployment.Model.Name, m.Count, m.GPU.Name)
}

// runFleetPlan is fleet --plan: the searches of the deployment and the --option files (or the
// --shard's part of them, written as JSON), then the plan.
func runFleetPlan(e *env, buf *bytes.Buffer, out *outFlag, ff *fleetFlags, r *scenario.Resolved, srv *sim.Server, t *fleet.Traffic) error {
	if !t.Spec.SLO.Any() {
		return usage.Errorf("--plan: give the objectives (--slo-ttft-ms, --slo-tpot-ms, ... and --slo-quantile)")
	}
	if ff.autoMax > 0 {
		return usage.Errorf("--plan searches fixed replica counts: it does not take --autoscale-max")
	}
	if ff.maxReplicas < 1 {
		return usage.Errorf("--max-replicas %d: want at least 1", ff.maxReplicas)
	}
	pols, err := fleet.ParsePolicies(ff.router)
	if err != nil {
		return usage.Errorf("--router: %v", err)
	}
	opts := []fleet.PlanOption{{Name: describeDeployment(r), Group: r.Scenario.Name, Server: srv}}
	for _, p := range ff.options {
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
		opts = append(opts, fleet.PlanOption{Name: describeDeployment(ro) + " (" + p + ")", Group: ro.Scenario.Name, Server: so})
	}
	shardI, shardN := 0, 1
	if ff.shard != "" {
		sh, err := parseShard(ff.shard)
		if err != nil {
			return err
		}
		shardI, shardN = sh.Index, sh.Count
	}
	pl := fleet.Planner{Traffic: t, Settings: *ff.settings(), MaxReplicas: ff.maxReplicas, Log: e.info(),
		Run: func(cfg fleet.Config) (*fleet.Result, error) { return runFleet(e, cfg, t) }}
	file, err := pl.Plan(opts, pols, shardI, shardN, ff.shard)
	if err != nil {
		return err
	}
	if ff.shard != "" {
		b, err := json.MarshalIndent(file, "", " ")
		if err != nil {
			return err
		}
		buf.Write(append(b, '\n'))
		return out.write(e.stdout, buf)
	}
	if err := fleet.WritePlan(buf, file, ff.format); err != nil {
		return err
	}
	return out.write(e.stdout, buf)
}
