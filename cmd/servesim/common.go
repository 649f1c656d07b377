package main

import (
	"bytes"
	"io"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vllmbench"
	"github.com/servesim/servesim/workload"
)

// scenarioFlags are the flags every simulating command shares: the scenario (scenario.Args) and
// how to simulate it.
type scenarioFlags struct {
	scenario.Args
	stepByStep bool
	// matrix is set by the commands that run the benchmark matrix: they also print the notes
	// about its protocol (contexts that do not fit max_model_len).
	matrix bool
}

func (f *scenarioFlags) register(fs *pflag.FlagSet) {
	a := &f.Args
	fs.StringVar(&a.Config, "config", "", "scenario TOML `file` (default: the embedded seed scenario, or an empty one with --vllm-cmd or --model-config; see 'servesim config')")
	fs.StringVar(&a.Params, "params", "", "parameter `file` from 'servesim fit --out' (default: the built-in calibration that matches, else priors)")
	fs.BoolVar(&a.Uncalibrated, "uncalibrated", false, "use the physical priors, ignoring every calibration")
	fs.StringVar(&a.VLLMCmd, "vllm-cmd", "", "a `vllm serve ...` launch command: the engine section and the model; flags it does not give take vLLM's defaults")
	fs.StringVar(&a.GPU, "gpu", "", "the GPU `name` (see 'servesim hardware list'); required with --vllm-cmd unless --config gives one")
	fs.Var(scenario.GPUsValue{A: a}, "gpus", "the number of GPUs (`N`; default: the engine's TP x PP x DP)")
	fs.StringVar(&a.GPUCatalog, "gpu-catalog", "", "GPU catalog `file` ([[gpu]] TOML, as 'servesim hardware show NAME --format toml' prints) adding or overriding GPUs by name; replaces the scenario's hardware.gpu_file")
	fs.StringVar(&a.ModelConfig, "model-config", "", "the model's Hugging Face config.json, or the `path` of the directory holding it (instead of the built-ins and the Hugging Face cache)")
	fs.StringVar(&a.VLLMVersion, "vllm-version", "", "the vLLM `version` whose defaults apply (default: the scenario's, else "+deploy.DefaultVersion+")")
	fs.Var(scenario.SeedValue{A: a}, "seed", "random `seed` for speculative acceptance, a non-negative integer (default: the scenario's)")
	fs.Var(scenario.ReadyTimeoutValue{A: a}, "ready-timeout-s", "the benchmark's readiness timeout in `seconds` for every context; 0: the tool's default by context (60 s below 64K, 120 s below 128K, 180 s from 128K) (default: the scenario's protocol.ready_timeout_s)")
	fs.BoolVar(&f.stepByStep, "step-by-step", false, "simulate every engine step request by request (the reference the default event-driven mode agrees with)")
	fs.Float64Var(&a.MeanAcceptanceLength, "mean-acceptance-length", 0, "measured speculative `tokens` per verify step (1 + accepted drafts; vLLM's \"Mean acceptance length\"): replaces the method's prior or calibrated level, its per-position shape kept")
	fs.Float64SliceVar(&a.AcceptanceRates, "acceptance-rates", nil, "measured per-position acceptance `rates` P(accepted >= i), one per draft, comma-separated (vLLM's \"Per-position acceptance rate\"): replace the method's prior or calibrated acceptance")
}

// isSeed reports whether the run uses the embedded seed scenario unchanged.
func (f *scenarioFlags) isSeed() bool { return f.IsSeed() }

// load resolves the scenario, printing warnings to stderr and notes to info (stderr, or nothing
// with --quiet). Every command that reads a scenario goes through it.
func (f *scenarioFlags) load(stderr, info io.Writer) (*scenario.Resolved, error) {
	return f.Args.Load(stderr, info, f.matrix)
}

// loadServer resolves the scenario and builds its simulated server.
func (f *scenarioFlags) loadServer(stderr, info io.Writer) (*scenario.Resolved, *sim.Server, error) {
	r, err := f.load(stderr, info)
	if err != nil {
		return nil, nil, err
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		return nil, nil, err
	}
	srv.StepByStep = f.stepByStep
	return r, srv, nil
}

// outFlag handles --out: stdout when empty, else an atomically written file checked up front.
type outFlag struct{ path string }

func (o *outFlag) register(fs *pflag.FlagSet, what string) {
	fs.StringVarP(&o.path, "out", "o", "", "write "+what+" to `file` (atomically) instead of stdout")
}

// check fails before long work when the destination cannot be written.
func (o *outFlag) check() error {
	if o.path == "" {
		return nil
	}
	return fsutil.CheckWritable(o.path)
}

func (o *outFlag) write(stdout io.Writer, buf *bytes.Buffer) error {
	if o.path == "" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	return outputs.WriteFile(o.path, buf.Bytes())
}

// writeOut writes what write gives to path, atomically; nothing when path is "".
func writeOut(path string, write func(*bytes.Buffer) error) error {
	if path == "" {
		return nil
	}
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	return outputs.WriteFile(path, b.Bytes())
}

// intRange refuses --name v outside lo..hi (usage error naming the flag and what is wanted).
// Flags whose help documents 0 as "the default" pass lo = 0; the others have no quiet "unset".
func intRange(name string, v, lo, hi int, want string) error {
	if v < lo || v > hi {
		return usage.Errorf("--%s %d: want %s", name, v, want)
	}
	return nil
}

// registerVLLMBench adds --vllm-bench, --special-tokens and --chars-per-token; multi lets
// --vllm-bench repeat (one command per result file).
func registerVLLMBench(fs *pflag.FlagSet, multi bool) *vllmbench.Flags {
	f := &vllmbench.Flags{Multi: multi, Changed: fs.Changed}
	usage := "a `\"vllm bench serve ...\"` or \"vllm bench throughput ...\" command: its dataset, request rate, burstiness, max concurrency and warm-ups become the workload"
	if multi {
		usage = "the `\"vllm bench serve ...\"` command of the --measured files (once for all, or once per file in order): their dataset, seed, prefix and warm-ups"
	}
	fs.StringArrayVar(&f.Cmdlines, "vllm-bench", nil, usage)
	fs.IntVar(&f.SpecialTokens, "special-tokens", 1, "special `tokens` the model's tokenizer adds to a prompt (vLLM's random dataset subtracts them from the input length; 1 = a BOS token); servesim has no tokenizer")
	fs.Float64Var(&f.CharsPerToken, "chars-per-token", workload.DefaultCharsPerToken, "`characters` per token, to estimate ShareGPT turns that carry no num_tokens count")
	return f
}
