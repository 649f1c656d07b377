package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/progress"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/planner"
	"github.com/servesim/servesim/plots"
	"github.com/servesim/servesim/workload"
)

// parseShard reads --shard i/n.
func parseShard(s string) (planner.Shard, error) {
	sh, err := planner.ParseShard(s)
	if err != nil {
		return sh, usage.Wrap(err)
	}
	return sh, nil
}

// planFrom prints a saved plan: its table (or csv, json), a row in full, its launch commands or its
// figures, as the sweep that made it would have. Flags that change the question are refused:
// the plan answers the question it was made for.
func planFrom(e *env, fs *pflag.FlagSet, file string, format *formatFlag[planResult], out *outFlag, explainRow int, showCmds bool, plotDir string, to planner.TableOptions) error {
	allowed := map[string]bool{"from": true, "explain-row": true, "format": true, "top": true, "wide": true, "all": true, "show-commands": true, "out": true, "plot": true, "quiet": true}
	var bad []string
	fs.Visit(func(f *pflag.Flag) {
		if !allowed[f.Name] {
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return usage.Errorf("--from prints the saved plan's answer to its own question: %s would change the question (sweep again without --from)", strings.Join(bad, ", "))
	}
	if fs.Changed("explain-row") && explainRow < 0 {
		return usage.Errorf("--explain-row %d: want a row index >= 0 (leave the flag out for no row)", explainRow)
	}
	if err := out.check(); err != nil {
		return err
	}
	f, err := fsutil.Open(file, fsutil.MaxPlanBytes)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	p, err := planner.ReadJSON(f, file)
	f.Close()
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	if p.Shard != nil {
		return usage.Errorf("--from %s: shard %d/%d of a sweep: merge the shards first ('servesim merge')", file, p.Shard.Index, p.Shard.Count)
	}
	if plotDir != "" {
		if err := fsutil.EnsureDir(plotDir); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		if err := drawFigures(e, plotDir, plots.Draw(p.Charts())); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if explainRow >= 0 {
		if err := p.WriteRow(&buf, explainRow); err != nil {
			return err
		}
		return out.write(e.stdout, &buf)
	}
	if showCmds {
		if err := p.AddCommands(); err != nil {
			return err
		}
	}
	if err := format.write(&buf, planResult{p, to}); err != nil {
		return err
	}
	return out.write(e.stdout, &buf)
}

func planCmd() *command {
	return &command{
		Name:  "plan",
		Short: "plan capacity: sweep GPUs, counts, parallelism and engine flags for a model, workload and SLOs; rank by cost",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var sf scenarioFlags
			sf.register(fs)
			modelRef := fs.String("model", "", "model: built-in `name`, Hugging Face id (from a built-in config or the local Hugging Face cache), a directory holding config.json, a config.json or a servesim model TOML (default: the scenario's)")
			drafterRef := fs.String("drafter", "", "speculative drafter description: built-in `name` or file (default: the scenario's for its model, else <model>-dflash2 if built in)")
			ctx := fs.String("context", "", "the llm-inference-bench question: prompt length per stream, `tokens` or KiB of tokens (128K); output: the protocol's 4,096 tokens unless --output-tokens")
			users := fs.Int("users", 0, "simultaneous users (streams, the concurrency) at --context or --input-tokens")
			inTok := fs.String("input-tokens", "", "your question: prompt `tokens` per request (1000, 8K), closed loop at --users, 10 x --users requests (at least 100)")
			outTokText := fs.String("output-tokens", "", fmt.Sprintf("output `tokens` per request, a count or KiB of tokens as --input-tokens (500, 1K; default: %d with --input-tokens; the protocol's 4,096 with --context)", planner.DefaultOutputTokens))
			wl := fs.String("workload", "", "workload `file` or preset instead of --context/--input-tokens and --users")
			var wo workload.Overrides
			registerOverrides(fs, &wo, "--workload")
			bf := registerVLLMBench(fs, false)
			var slo workload.SLOArgs
			registerSLO(fs, &slo)
			def := planner.DefaultSpace()
			gpus := fs.StringSlice("gpu-kinds", nil, "candidate GPUs, a comma-separated `list` of names (default: the whole catalog, with --gpu-catalog's entries)")
			maxGPUs := fs.Int("max-gpus", def.MaxGPUs, "most GPUs in a configuration (`N`, 1..4096)")
			counts := fs.IntSlice("gpu-counts", nil, "GPU counts to try, `list` (default: powers of two up to --max-gpus)")
			tps := fs.IntSlice("tp", nil, "tensor-parallel sizes, `list` (default: powers of two dividing the count)")
			eps := fs.StringSlice("ep", nil, "expert parallel: `on,off` (default: both for MoE models)")
			mns := fs.IntSlice("max-num-seqs", def.MaxNumSeqs, "max-num-seqs values, `list`")
			mbt := fs.StringSlice("max-num-batched-tokens", planner.TokenTexts(def.MaxNumBatchedTokens), "max-num-batched-tokens values, `list` of token counts (8192, 16K)")
			kvs := fs.StringSlice("kv-cache-dtype", def.KVCacheDTypes, "KV-cache dtypes, `list` (auto = bf16)")
			spec := fs.StringSlice("spec", planner.SpecTexts(def.SpecTokens), "speculative decoding: off and/or numbers of draft tokens, `list`")
			specMethods := fs.StringSlice("spec-methods", []string{"auto"}, "speculative methods swept for each k, `list`: auto (the scenario's drafter method and mtp when the checkpoint has MTP layers), mtp, ngram (prompt lookup: only when listed, its acceptance depends on the prompts' text), dflash, eagle, eagle3, draft_model")
			util := fs.Float64Slice("gpu-memory-utilization", def.GPUMemoryUtilization, "gpu-memory-utilization values, `list`")
			weights := fs.StringSlice("weights", def.Weights, "checkpoint variants, `list`: auto (the checkpoint, plus fp8 quantized by vLLM when loading for a 16-bit checkpoint on GPUs with fp8 tensor cores; fp8 or bf16 where a GPU cannot run its format), native, fp8, bf16")
			mml := fs.Int("max-model-len", 0, "max-model-len (`tokens`; default: the scenario's)")
			shard := fs.String("shard", "", "run only slice `i/n` of the sweep (0 <= i < n)")
			workers := fs.Int("workers", 0, "simulations at once (`N`; default 0: the number of CPUs)")
			var format formatFlag[planResult]
			format.register(fs, planFormats())
			top := fs.Int("top", 25, "hardware layouts shown in the table (`N`)")
			wide := fs.Bool("wide", false, "table: every column (flags, latencies at p50 and the quantile, headroom, source, interval) instead of the compact one")
			exhaustive := fs.Bool("exhaustive", false, "simulate every row in full (default: screen every row on the first requests, then simulate in full the rows that can still reach the top 5 or be the best of their layout)")
			all := fs.Bool("all", false, "table: every configuration that loads, not the best per layout")
			showCmds := fs.Bool("show-commands", false, "print each row's `vllm serve` and `vllm bench serve` commands (table: every row shown; csv, json: every row)")
			explainRow := fs.Int("explain-row", -1, "print row `N` (its index) in full: flags, vLLM's defaults, predictions, launch commands")
			plotDir := fs.String("plot", "", "also draw the plan's figures (cost against SLO-feasible throughput, with the frontier) as PNG and SVG into `directory`")
			from := fs.String("from", "", "print a plan saved with --format json from `file` (its table, --explain-row N, --show-commands, csv) instead of sweeping again")
			var out outFlag
			out.register(fs, "the plan")
			return func(args []string) error {
				if len(args) > 0 {
					return usage.Errorf("unexpected argument %q", args[0])
				}
				if err := format.check(); err != nil {
					return err
				}
				if *from != "" {
					return planFrom(e, fs, *from, &format, &out, *explainRow, *showCmds, *plotDir, planner.TableOptions{Top: *top, All: *all, Commands: *showCmds, Wide: *wide})
				}
				for _, c := range []struct {
					name      string
					v, lo, hi int
					want      string
				}{
					{"max-gpus", *maxGPUs, 1, 4096, "a number of GPUs in 1..4096"},
					{"workers", *workers, 0, 1 << 16, "a positive number of simulations at once (or 0: the number of CPUs)"},
					{"top", *top, 1, 1 << 30, "a positive number of layouts"},
					{"max-model-len", *mml, 0, 1 << 30, "a positive number of tokens (or 0: the scenario's)"},
				} {
					if err := intRange(c.name, c.v, c.lo, c.hi, c.want); err != nil {
						return err
					}
				}
				// The question's workload.
				if err := bf.Check(); err != nil {
					return err
				}
				var spec0 *workload.Spec
				if fs.Changed("explain-row") && *explainRow < 0 {
					return usage.Errorf("--explain-row %d: want a row index >= 0 (leave the flag out for no row)", *explainRow)
				}
				outTok := new(int)
				if fs.Changed("output-tokens") {
					n, err := matrix.ParseContext(*outTokText)
					if err != nil || n < 1 {
						return usage.Errorf("--output-tokens %q: want a positive token count such as 500 or 1K", *outTokText)
					}
					*outTok = n
				}
				switch {
				case len(bf.Cmdlines) > 0 && (*wl != "" || *ctx != "" || *inTok != "" || fs.Changed("users") || fs.Changed("output-tokens")):
					return usage.Errorf("--vllm-bench, --workload and --context/--input-tokens/--users/--output-tokens are exclusive")
				case len(bf.Cmdlines) > 0:
					s, err := bf.Workload(nil, e.info())
					if err != nil {
						return err
					}
					spec0 = s
				case bf.Used():
					return usage.Errorf("--special-tokens and --chars-per-token apply to --vllm-bench")
				case *wl != "" && (*ctx != "" || *inTok != "" || fs.Changed("users") || fs.Changed("output-tokens")):
					return usage.Errorf("--workload and --context/--input-tokens/--users/--output-tokens are exclusive")
				case *wl != "":
					s, err := workload.LoadArg("--workload", *wl)
					if err != nil {
						return err
					}
					spec0 = s
				case wo.Used(fs.Changed):
					return usage.Errorf("--rate and --requests change a --workload (file or preset)")
				default:
					s, err := planner.LengthQuestion{Context: *ctx, InputTokens: *inTok, Users: *users, OutputTokens: *outTok}.Workload()
					if err != nil {
						return usage.Wrap(err)
					}
					if spec0 = s; s != nil && !fs.Changed("output-tokens") {
						fmt.Fprintf(e.stderr, "servesim: %d output tokens per request (the default; --output-tokens to change)\n", s.Lengths.OutputTokens)
					}
				}
				if err := slo.Apply(fs.Changed, &workload.SLO{}); err != nil {
					return err
				}
				sp, err := (&planner.SpaceText{MaxGPUs: *maxGPUs, Counts: *counts, TP: *tps, EP: *eps, MaxNumSeqs: *mns, MaxNumBatchedTokens: *mbt,
					KVCacheDTypes: *kvs, Spec: *spec, SpecMethods: *specMethods, GPUMemoryUtilization: *util, Weights: *weights, MaxModelLen: *mml}).Space()
				if err != nil {
					return usage.Wrap(err)
				}
				var sh planner.Shard
				if *shard != "" {
					if sh, err = parseShard(*shard); err != nil {
						return err
					}
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

				r, err := sf.load(e.stderr, e.info())
				if err != nil {
					return err
				}
				if spec0 == nil {
					proto := r.Scenario.Protocol
					if *outTok > 0 {
						proto.MaxOutput = *outTok
					}
					spec0 = planner.BenchWorkload(&proto, *ctx, *users)
				}
				if err := slo.Apply(fs.Changed, &spec0.SLO); err != nil {
					return err
				}
				if err := wo.Apply(fs.Changed, spec0); err != nil {
					return err
				}
				if err := spec0.Validate(); err != nil {
					return usage.Errorf("workload: %v", err)
				}
				ms, err := planner.ModelsFor(r.Deployment, *modelRef, *drafterRef)
				if err != nil {
					return err
				}
				cat, err := r.Scenario.Catalog()
				if err != nil {
					return fmt.Errorf("--gpu-catalog: %w", err)
				}
				cands := cat.GPUs
				if len(*gpus) > 0 {
					cands = nil
					for _, n := range *gpus {
						g, err := cat.Find(n)
						if err != nil {
							return usage.Errorf("--gpu-kinds: %v", err)
						}
						cands = append(cands, g)
					}
				}
				q := planner.ScenarioQuestion(r, ms, spec0, cands, sp)
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
				p, err := planner.Run(q, planner.Options{Workers: *workers, Shard: sh, Exhaustive: *exhaustive,
					Start: func(est planner.Estimate) { pr.EndLine(); fmt.Fprint(info, estimateText(est)) },
					Progress: func(g planner.Progress) {
						if g.Stage != "pilot" {
							pr.Update(stageText(g.Stage), g.Done, g.Total)
						}
					}})
				pr.Finish()
				if se := (*planner.SpaceError)(nil); errors.As(err, &se) {
					return usage.Wrap(err)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(info, "servesim: %s rows, %s in %s\n", commasInt(len(p.Results)), searchText(p), progress.Seconds(pr.Elapsed().Seconds()))
				if *plotDir != "" {
					if err := drawFigures(e, *plotDir, plots.Draw(p.Charts())); err != nil {
						return err
					}
				}
				var buf bytes.Buffer
				if *explainRow >= 0 {
					fmt.Fprintln(info, "servesim: a plan saved with --format json -o FILE prints any row at once: --from FILE --explain-row N")
					if err := p.WriteRow(&buf, *explainRow); err != nil {
						return err
					}
					return out.write(e.stdout, &buf)
				}
				if *showCmds {
					if err := p.AddCommands(); err != nil {
						return err
					}
				}
				if err := format.write(&buf, planResult{p, planner.TableOptions{Top: *top, All: *all, Commands: *showCmds, Wide: *wide}}); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
