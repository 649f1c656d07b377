package main

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/numfmt"
	"github.com/servesim/servesim/internal/progress"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/planner"
	"github.com/servesim/servesim/plots"
	"github.com/servesim/servesim/workload"
)

// parseShard reads --shard i/n.
func parseShard(s string) (planner.Shard, error) {
	sh, err := planner.ParseShard(s)
	return sh, usage.Wrap(err)
}

// planFrom prints a saved plan: its table (or csv, json), a row in full, its launch commands or its
// figures, as the sweep that made it would have. Flags that change the question are refused:
// the plan answers the question it was made for.
func planFrom(e *env, fs *pflag.FlagSet, a *planner.Args, format *formatFlag[planResult], out *outFlag) error {
	var given []string
	fs.Visit(func(f *pflag.Flag) { given = append(given, f.Name) })
	if err := a.CheckFrom(given, fs.Changed); err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	f, err := fsutil.Open(a.From, fsutil.MaxPlanBytes)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	p, err := planner.ReadJSON(f, a.From)
	f.Close()
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	if p.Shard != nil {
		return usage.Errorf("--from %s: shard %d/%d of a sweep: merge the shards first ('servesim merge')", a.From, p.Shard.Index, p.Shard.Count)
	}
	if a.Plot != "" {
		if err := fsutil.EnsureDir(a.Plot); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		if err := drawFigures(e, a.Plot, plots.Draw(p.Charts())); err != nil {
			return err
		}
	}
	return writePlan(e, p, a, format, out)
}

// writePlan prints the plan: row --explain-row in full, or the table (with --show-commands, the
// rows' commands) in the --format.
func writePlan(e *env, p *planner.Plan, a *planner.Args, format *formatFlag[planResult], out *outFlag) error {
	var buf bytes.Buffer
	if a.ExplainRow >= 0 {
		if err := p.WriteRow(&buf, a.ExplainRow); err != nil {
			return err
		}
		return out.write(e.stdout, &buf)
	}
	if a.ShowCmds {
		if err := p.AddCommands(); err != nil {
			return err
		}
	}
	if err := format.write(&buf, planResult{p, a.Table()}); err != nil {
		return err
	}
	return out.write(e.stdout, &buf)
}

func planCmd() *command {
	return &command{
		Name:   "plan",
		NoArgs: true,
		Short:  "plan capacity: sweep GPUs, counts, parallelism and engine flags for a model, workload and SLOs; rank by cost",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var sf scenarioFlags
			sf.register(fs)
			var a planner.Args
			fs.StringVar(&a.Model, "model", "", "model: built-in `name`, Hugging Face id (from a built-in config or the local Hugging Face cache), a directory holding config.json, a config.json or a servesim model TOML (default: the scenario's)")
			fs.StringVar(&a.Drafter, "drafter", "", "speculative drafter description: built-in `name` or file (default: the scenario's for its model, else <model>-dflash2 if built in)")
			fs.StringVar(&a.Context, "context", "", "the llm-inference-bench question: prompt length per stream, `tokens` or KiB of tokens (128K); output: the protocol's 4,096 tokens unless --output-tokens")
			fs.IntVar(&a.Users, "users", 0, "simultaneous users (streams, the concurrency) at --context or --input-tokens")
			fs.StringVar(&a.InputTokens, "input-tokens", "", "your question: prompt `tokens` per request (1000, 8K), closed loop at --users, 10 x --users requests (at least 100)")
			fs.StringVar(&a.OutputText, "output-tokens", "", fmt.Sprintf("output `tokens` per request, a count or KiB of tokens as --input-tokens (500, 1K; default: %d with --input-tokens; the protocol's 4,096 with --context)", planner.DefaultOutputTokens))
			fs.StringVar(&a.Workload, "workload", "", "workload `file` or preset instead of --context/--input-tokens and --users")
			registerOverrides(fs, &a.Overrides, "--workload")
			bf := registerVLLMBench(fs, false)
			registerSLO(fs, &a.SLO)
			def, sp := planner.DefaultSpace(), &a.Space
			fs.StringSliceVar(&a.GPUKinds, "gpu-kinds", nil, "candidate GPUs, a comma-separated `list` of names (default: the whole catalog, with --gpu-catalog's entries)")
			fs.IntVar(&sp.MaxGPUs, "max-gpus", def.MaxGPUs, "most GPUs in a configuration (`N`, 1..4096)")
			fs.IntSliceVar(&sp.Counts, "gpu-counts", nil, "GPU counts to try, `list` (default: powers of two up to --max-gpus)")
			fs.IntSliceVar(&sp.TP, "tp", nil, "tensor-parallel sizes, `list` (default: powers of two dividing the count)")
			fs.StringSliceVar(&sp.EP, "ep", nil, "expert parallel: `on,off` (default: both for MoE models)")
			fs.IntSliceVar(&sp.MaxNumSeqs, "max-num-seqs", def.MaxNumSeqs, "max-num-seqs values, `list`")
			fs.StringSliceVar(&sp.MaxNumBatchedTokens, "max-num-batched-tokens", planner.TokenTexts(def.MaxNumBatchedTokens), "max-num-batched-tokens values, `list` of token counts (8192, 16K)")
			fs.StringSliceVar(&sp.KVCacheDTypes, "kv-cache-dtype", def.KVCacheDTypes, "KV-cache dtypes, `list` (auto = bf16)")
			fs.StringSliceVar(&sp.Spec, "spec", planner.SpecTexts(def.SpecTokens), "speculative decoding: off and/or numbers of draft tokens, `list`")
			fs.StringSliceVar(&sp.SpecMethods, "spec-methods", []string{"auto"}, "speculative methods swept for each k, `list`: auto (the scenario's drafter method and mtp when the checkpoint has MTP layers), mtp, ngram (prompt lookup: only when listed, its acceptance depends on the prompts' text), dflash, eagle, eagle3, draft_model")
			fs.Float64SliceVar(&sp.GPUMemoryUtilization, "gpu-memory-utilization", def.GPUMemoryUtilization, "gpu-memory-utilization values, `list`")
			fs.StringSliceVar(&sp.Weights, "weights", def.Weights, "checkpoint variants, `list`: auto (the checkpoint, plus fp8 quantized by vLLM when loading for a 16-bit checkpoint on GPUs with fp8 tensor cores; fp8 or bf16 where a GPU cannot run its format), native, fp8, bf16")
			fs.IntVar(&sp.MaxModelLen, "max-model-len", 0, "max-model-len (`tokens`; default: the scenario's)")
			fs.StringVar(&a.Shard, "shard", "", "run only slice `i/n` of the sweep (0 <= i < n)")
			fs.IntVar(&a.Workers, "workers", 0, "simulations at once (`N`; default 0: the number of CPUs)")
			var format formatFlag[planResult]
			format.register(fs, planFormats())
			fs.IntVar(&a.Top, "top", 25, "hardware layouts shown in the table (`N`)")
			fs.BoolVar(&a.Wide, "wide", false, "table: every column (flags, latencies at p50 and the quantile, headroom, source, interval) instead of the compact one")
			fs.BoolVar(&a.Exhaustive, "exhaustive", false, "simulate every row in full (default: screen every row on the first requests, then simulate in full the rows that can still reach the top 5 or be the best of their layout)")
			fs.BoolVar(&a.All, "all", false, "table: every configuration that loads, not the best per layout")
			fs.BoolVar(&a.ShowCmds, "show-commands", false, "print each row's `vllm serve` and `vllm bench serve` commands (table: every row shown; csv, json: every row)")
			fs.IntVar(&a.ExplainRow, "explain-row", -1, "print row `N` (its index) in full: flags, vLLM's defaults, predictions, launch commands")
			fs.StringVar(&a.Plot, "plot", "", "also draw the plan's figures (cost against SLO-feasible throughput, with the frontier) as PNG and SVG into `directory`")
			fs.StringVar(&a.From, "from", "", "print a plan saved with --format json from `file` (its table, --explain-row N, --show-commands, csv) instead of sweeping again")
			var out outFlag
			out.register(fs, "the plan")
			return func(args []string) error {
				if err := format.check(); err != nil {
					return err
				}
				if a.From != "" {
					return planFrom(e, fs, &a, &format, &out)
				}
				if err := a.Check(fs.Changed); err != nil {
					return err
				}
				if err := bf.Check(); err != nil {
					return err
				}
				spec0, err := a.Question(fs.Changed, func() (*workload.Spec, error) { return bf.Workload(nil, e.info()) }, len(bf.Cmdlines) > 0, bf.Used(), e.stderr)
				if err != nil {
					return err
				}
				space, sh, err := a.Sweep()
				if err != nil {
					return err
				}
				if err := out.check(); err != nil {
					return err
				}
				if a.Plot != "" {
					// Before the work: a --plot that cannot take figures fails now, not after the run.
					if err := fsutil.EnsureDir(a.Plot); err != nil {
						return fmt.Errorf("--plot: %w", err)
					}
				}
				r, err := sf.load(e.stderr, e.info())
				if err != nil {
					return err
				}
				if spec0, err = a.Finish(fs.Changed, spec0, r.Scenario.Protocol); err != nil {
					return err
				}
				ms, err := planner.ModelsFor(r.Deployment, a.Model, a.Drafter)
				if err != nil {
					return err
				}
				cat, err := r.Scenario.Catalog()
				if err != nil {
					return fmt.Errorf("--gpu-catalog: %w", err)
				}
				cands, err := a.Candidates(cat)
				if err != nil {
					return err
				}
				q := planner.ScenarioQuestion(r, ms, spec0, cands, space)
				q.StepByStep = sf.stepByStep
				if (sf.MeanAcceptanceLength != 0 || sf.AcceptanceRates != nil) && !ms.Scenario {
					return usage.Errorf("--mean-acceptance-length and --acceptance-rates describe the scenario's server, and %s is not its model: give the server with --vllm-cmd \"vllm serve %s ... --speculative-config '{...}'\"", ms.ModelRef, ms.ServeRef)
				}
				if !ms.Scenario && sf.Config == "" && sf.VLLMCmd == "" {
					// The embedded seed's engine version is the seed's, not the question's.
					q.Engine.Version = sf.VLLMVersion
				}
				info := e.info()
				fmt.Fprintf(info, "servesim: planning %s for %s\n", ms.ModelRef, spec0.Describe())
				pr := newProgress(e, 2*time.Second)
				p, err := planner.Run(q, planner.Options{Workers: a.Workers, Shard: sh, Exhaustive: a.Exhaustive,
					Start: func(est planner.Estimate) { pr.EndLine(); fmt.Fprint(info, est.Describe()) },
					Progress: func(g planner.Progress) {
						if g.Stage != "pilot" {
							pr.Update(g.StageText(), g.Done, g.Total)
						}
					}})
				pr.Finish()
				if se := (*planner.SpaceError)(nil); errors.As(err, &se) {
					return usage.Wrap(err)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(info, "servesim: %s rows, %s in %s\n", numfmt.Commas(fmt.Sprint(len(p.Results))), p.SearchText(), progress.Seconds(pr.Elapsed().Seconds()))
				if a.Plot != "" {
					if err := drawFigures(e, a.Plot, plots.Draw(p.Charts())); err != nil {
						return err
					}
				}
				if a.ExplainRow >= 0 {
					fmt.Fprintln(info, "servesim: a plan saved with --format json -o FILE prints any row at once: --from FILE --explain-row N")
				}
				return writePlan(e, p, &a, &format, &out)
			}
		},
	}
}
