package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/plots"
	"github.com/servesim/servesim/report"
	"github.com/servesim/servesim/vllmbench"
	"github.com/servesim/servesim/workload"
)

// sloFlags are the objectives simulate and plan share.
type sloFlags struct {
	ttft, tpot, e2e, user, q float64
}

func (f *sloFlags) register(fs *pflag.FlagSet) {
	fs.Float64Var(&f.ttft, "slo-ttft-ms", 0, "objective: time to first token at the quantile, at most `ms`")
	fs.Float64Var(&f.tpot, "slo-tpot-ms", 0, "objective: time per output token at the quantile, at most `ms`")
	fs.Float64Var(&f.e2e, "slo-e2e-ms", 0, "objective: end-to-end latency at the quantile, at most `ms`")
	fs.Float64Var(&f.user, "slo-user-tok-s", 0, "objective: per-user decode rate (1000 / TPOT at the quantile), at least `tok/s`")
	fs.Float64Var(&f.q, "slo-quantile", 0, "`fraction` of requests that must meet each objective (default 0.9: p90)")
}

// apply overrides the workload's objectives with the flags that were given.
func (f *sloFlags) apply(fs *pflag.FlagSet, s *workload.SLO) error {
	set := func(name string, dst *float64, v float64) error {
		if !fs.Changed(name) {
			return nil
		}
		if !(v > 0) {
			return usagef("--%s %v: must be a positive number", name, v)
		}
		*dst = v
		return nil
	}
	for _, c := range []struct {
		n   string
		dst *float64
		v   float64
	}{{"slo-ttft-ms", &s.TTFTms, f.ttft}, {"slo-tpot-ms", &s.TPOTms, f.tpot}, {"slo-e2e-ms", &s.E2Ems, f.e2e}, {"slo-user-tok-s", &s.UserTokS, f.user}} {
		if err := set(c.n, c.dst, c.v); err != nil {
			return err
		}
	}
	if fs.Changed("slo-quantile") {
		if !(f.q >= 0.5 && f.q < 1) {
			return usagef("--slo-quantile %v: want a fraction in [0.5, 1), such as 0.9 or 0.99", f.q)
		}
		s.Quantile = f.q
	}
	return nil
}

// chooseWorkload picks the workload of --workload, --vllm-bench or --measured (a vllm bench serve
// result file, whose run is recovered; with --vllm-bench too, the command gives its dataset).
func chooseWorkload(fs *pflag.FlagSet, wl string, bf *vllmBenchFlags, res *vllmbench.Result, info io.Writer) (*workload.Spec, error) {
	switch {
	case wl != "" && len(bf.cmdlines) > 0:
		return nil, usagef("--workload and --vllm-bench are exclusive: give one workload")
	case wl != "" && res != nil:
		return nil, usagef("--measured recovers the workload from the result file (with --vllm-bench for its dataset); it does not take --workload")
	case wl == "" && res == nil && len(bf.cmdlines) == 0:
		return nil, usagef("--workload: missing: give a workload file (TOML, or a .csv/.jsonl trace), a preset (%s), --vllm-bench \"vllm bench serve ...\" or --measured RESULT.json", presetNames())
	}
	spec, err := bf.vllmBenchWorkload(fs, res, info)
	if err != nil || spec != nil {
		return spec, err
	}
	return loadWorkload(wl)
}

// loadWorkload reads --workload: a file (TOML, CSV or JSONL trace) or a preset name.
func loadWorkload(arg string) (*workload.Spec, error) { return loadWorkloadFlag("--workload", arg) }

// loadWorkloadFlag reads a workload flag's value; errors name the flag.
func loadWorkloadFlag(flag, arg string) (*workload.Spec, error) {
	if arg == "" {
		return nil, usagef(flag+": missing: give a workload file (TOML, or a .csv/.jsonl trace) or a preset (%s)", presetNames())
	}
	if _, err := os.Stat(arg); err == nil {
		return workload.Load(arg)
	} else if strings.ContainsAny(arg, "/\\") || strings.Contains(arg, ".") && !strings.HasPrefix(arg, "bench-") {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	s, err := workload.Preset(arg)
	if err != nil {
		return nil, usagef("%s: %v", flag, err)
	}
	return s, nil
}

func presetNames() string {
	var n []string
	for _, p := range workload.Presets() {
		n = append(n, p.Name)
	}
	return strings.Join(n, ", ")
}

func presetHelp() string {
	var b strings.Builder
	for _, p := range workload.Presets() {
		fmt.Fprintf(&b, "  %-13s %s\n", p.Name, p.Description)
	}
	return b.String()
}

func simulateCmd() *command {
	return &command{
		Name:  "simulate",
		Short: "run a workload (closed loop, Poisson/gamma/ramp arrivals, trace replay, benchmark cell) and measure it",
		Long: `Simulates a workload against the scenario's server (the seed by default; --config, --vllm-cmd
and --params as for matrix) and reports throughput (output and total tok/s, req/s), TTFT, TPOT,
ITL, E2E and queue time at p50/p90/p99, preemptions, KV-cache utilisation over time, and goodput
under the objectives given with --slo-* (or in the workload's [slo] table).

--workload takes a workload TOML file, a trace (.csv or .jsonl: arrival time, input tokens,
output tokens, optional prefix_id and prefix_tokens), or a preset:
` + presetHelp() + `
--vllm-bench takes the benchmark command a run used instead: "vllm bench serve ..." (its random or
ShareGPT dataset, --request-rate, --burstiness, --max-concurrency, --num-warmups, --seed, --goodput)
or "vllm bench throughput ..." (offline: every request at t = 0, no API server). Unknown flags are
refused by name; the server's address, result and percentile flags are accepted and listed. servesim
has no tokenizer: --special-tokens (default 1, a BOS token) is what the tokenizer adds to a prompt,
--chars-per-token (default 4) estimates ShareGPT turns without a num_tokens count. Draws use
math/rand/v2 seeded from the command's --seed: vLLM's distributions, not numpy's exact values.

--measured takes a 'vllm bench serve --save-result' JSON file: its run is simulated (num_prompts,
request_rate, burstiness, max_concurrency from the file; lengths from input_lens/output_lens when it
was saved with --save-detailed, else from --vllm-bench, else the means) and shown beside the
measurement: throughputs, TTFT, TPOT, ITL and E2EL mean, median and percentiles, with errors.
Notes on stderr say what was assumed. --format csv and json then write the comparison.

The workload file format: 'servesim workload --example' prints an annotated file with every key
(it runs as it is; 'go doc github.com/servesim/servesim/workload' has the same and the metrics).
Results are deterministic: the same scenario, workload and seed give the same bytes.

Example:
  servesim simulate --workload chat --slo-ttft-ms 2000 --slo-tpot-ms 40
  servesim simulate --workload bench-128Kx16 --format json
  servesim simulate --vllm-bench "vllm bench serve --model M --dataset-name random --random-input-len 1024 --random-output-len 128 --num-prompts 200 --request-rate 4"
  servesim simulate --measured openai-4.0qps-M-20260914-101500.json`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var sf scenarioFlags
			sf.register(fs)
			wl := fs.String("workload", "", "workload TOML `file`, trace file (.csv, .jsonl), or preset name")
			var wo workloadOverrides
			wo.register(fs)
			var bf vllmBenchFlags
			bf.register(fs, false)
			measured := fs.String("measured", "", "a vllm bench serve --save-result JSON `file`: simulate its run and show predicted vs measured")
			var format formatFlag[report.WorkloadResult]
			format.register(fs, workloadFormats())
			var slo sloFlags
			slo.register(fs)
			series := fs.String("series", "", "also write the KV-usage samples (t_s,kv_usage,running,waiting) as CSV to `file`")
			plotDir := fs.String("plot", "", "also draw the run's figures (latency CDFs with the objectives, KV cache and queue over time) as PNG and SVG into `directory`")
			var out outFlag
			out.register(fs, "the results")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if err := format.check(); err != nil {
					return err
				}
				if err := out.check(); err != nil {
					return err
				}
				if *plotDir != "" {
					// Before the work: a --plot that cannot take figures fails now, not after the run.
					if err := fsutil.EnsureDir(*plotDir); err != nil {
						return fmt.Errorf("--plot: %w", err)
					}
				}
				if *series != "" {
					if err := fsutil.CheckWritable(*series); err != nil {
						return err
					}
				}
				if err := bf.check(fs); err != nil {
					return err
				}
				var res *vllmbench.Result
				if *measured != "" {
					var err error
					if res, err = vllmbench.ReadResult(*measured); err != nil {
						return fmt.Errorf("--measured: %w", err)
					}
				}
				spec, err := chooseWorkload(fs, *wl, &bf, res, e.info())
				if err != nil {
					return err
				}
				if err := slo.apply(fs, &spec.SLO); err != nil {
					return err
				}
				if wo.used(fs) && *wl == "" {
					return usagef("--rate and --requests change a --workload (file or preset)")
				}
				if err := wo.apply(fs, spec); err != nil {
					return err
				}
				if sf.readyTimeoutS.set && spec.Kind != workload.KindLLMBenchCell {
					return usagef("--ready-timeout-s applies to the benchmark's cells (a bench-CTXxC workload, or 'servesim matrix'), not to workload %q (kind %s)", spec.Name, spec.Kind)
				}
				r, srv, err := sf.loadServer(e.stderr, e.info())
				if err != nil {
					return err
				}
				if res != nil {
					if err := checkResult(res, r); err != nil {
						return err
					}
				}
				noteModelLen(e.stderr, spec, srv.Deployment.Engine.MaxModelLen)
				fmt.Fprintf(e.info(), "servesim: %s; parameters: %s (%s)\n", spec.Describe(), r.ParamsFrom, r.Source)
				start := time.Now()
				pr := newProgress(e, 2*time.Second)
				m, err := workload.Run(srv, spec, workload.Options{Seed: r.Scenario.Seed, Progress: func(done, total int) { pr.Update("requests", done, total) }})
				pr.Finish()
				if err != nil {
					return err
				}
				fmt.Fprintf(e.info(), "servesim: %d engine steps, %.0f s of server time in %.2f s\n", m.Steps, m.SimTimeS, time.Since(start).Seconds())
				var buf bytes.Buffer
				if err := format.write(&buf, report.WorkloadResult{Spec: spec, Resolved: r, Metrics: m, Measured: res}); err != nil {
					return err
				}
				if *plotDir != "" {
					subject := report.Subject(r)
					if spec.Name != "" {
						subject += ", " + spec.Name
					}
					figs := plots.Draw(plots.WorkloadCharts(m, subject))
					if err := drawFigures(e, *plotDir, figs); err != nil {
						return err
					}
				}
				if *series != "" {
					var sb bytes.Buffer
					if err := workload.WriteSeriesCSV(&sb, m); err != nil {
						return err
					}
					if err := outputs.WriteFile(*series, sb.Bytes()); err != nil {
						return err
					}
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
