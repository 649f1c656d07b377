package main

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vllmbench"
	"github.com/servesim/servesim/workload"
)

// scenarioFlags are the flags every simulating command shares.
type scenarioFlags struct {
	config       string
	params       string
	uncalibrated bool
	vllmCmd      string
	seed         seedFlag
	gpu          string
	gpus         gpuCount
	gpuCatalog   string
	modelConfig  string
	vllmVersion  string
	// readyTimeoutS, when set, replaces the protocol's ready_timeout_s (0: the tool's default by
	// context).
	readyTimeoutS secondsFlag
	stepByStep    bool
	// meanAccept and acceptRates are measured speculative acceptance (vLLM's spec-decode
	// metrics): they replace the method's prior or the calibrated acceptance.
	meanAccept  float64
	acceptRates []float64
	// matrix is set by the commands that run the benchmark matrix: they also print the notes
	// about its protocol (contexts that do not fit max_model_len).
	matrix bool
	// vllmWords, when set, is a launch command already split into words (import's positional
	// arguments); it takes the place of --vllm-cmd.
	vllmWords []string
}

// gpuCount is --gpus: a number of GPUs on every command. A list of GPU kinds (plan's candidates)
// is --gpu-kinds and a catalog file is --gpu-catalog; a value that looks like one says so.
type gpuCount int

func (g *gpuCount) String() string { return strconv.Itoa(int(*g)) }
func (g *gpuCount) Type() string   { return "int" }
func (g *gpuCount) Set(v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	switch {
	case err == nil:
		*g = gpuCount(n)
		return nil
	case strings.HasSuffix(strings.ToLower(v), ".toml"):
		return fmt.Errorf("want a number of GPUs; a GPU catalog file is --gpu-catalog %s", v)
	default:
		return fmt.Errorf("want a number of GPUs; GPU kinds to plan over are --gpu-kinds %s (plan), one GPU is --gpu NAME", v)
	}
}

func (f *scenarioFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "scenario TOML `file` (default: the embedded seed scenario, or an empty one with --vllm-cmd or --model-config; see 'servesim config')")
	fs.StringVar(&f.params, "params", "", "parameter `file` from 'servesim fit --out' (default: the built-in calibration that matches, else priors)")
	fs.BoolVar(&f.uncalibrated, "uncalibrated", false, "use the physical priors, ignoring every calibration")
	fs.StringVar(&f.vllmCmd, "vllm-cmd", "", "a `vllm serve ...` launch command: the engine section and the model; flags it does not give take vLLM's defaults")
	fs.StringVar(&f.gpu, "gpu", "", "the GPU `name` (see 'servesim hardware list'); required with --vllm-cmd unless --config gives one")
	fs.Var(&f.gpus, "gpus", "the number of GPUs (`N`; default: the engine's TP x PP x DP)")
	fs.StringVar(&f.gpuCatalog, "gpu-catalog", "", "GPU catalog `file` ([[gpu]] TOML, as 'servesim hardware show NAME --format toml' prints) adding or overriding GPUs by name; replaces the scenario's hardware.gpu_file")
	fs.StringVar(&f.modelConfig, "model-config", "", "the model's Hugging Face config.json, or the `path` of the directory holding it (instead of the built-ins and the Hugging Face cache)")
	fs.StringVar(&f.vllmVersion, "vllm-version", "", "the vLLM `version` whose defaults apply (default: the scenario's, else "+deploy.DefaultVersion+")")
	fs.Var(&f.seed, "seed", "random `seed` for speculative acceptance, a non-negative integer (default: the scenario's)")
	fs.Var(&f.readyTimeoutS, "ready-timeout-s", "the benchmark's readiness timeout in `seconds` for every context; 0: the tool's default by context (60 s below 64K, 120 s below 128K, 180 s from 128K) (default: the scenario's protocol.ready_timeout_s)")
	fs.BoolVar(&f.stepByStep, "step-by-step", false, "simulate every engine step request by request (the reference the default event-driven mode agrees with)")
	fs.Float64Var(&f.meanAccept, "mean-acceptance-length", 0, "measured speculative `tokens` per verify step (1 + accepted drafts; vLLM's \"Mean acceptance length\"): replaces the method's prior or calibrated level, its per-position shape kept")
	fs.Float64SliceVar(&f.acceptRates, "acceptance-rates", nil, "measured per-position acceptance `rates` P(accepted >= i), one per draft, comma-separated (vLLM's \"Per-position acceptance rate\"): replace the method's prior or calibrated acceptance")
}

// seedFlag is --seed: unset (the scenario's seed) or a non-negative integer. A negative value is
// refused rather than meaning "unset" (--seed -5 used to run with the scenario's seed quietly).
type seedFlag struct {
	v   uint64
	set bool
}

func (s *seedFlag) String() string {
	if !s.set {
		return ""
	}
	return strconv.FormatUint(s.v, 10)
}

func (s *seedFlag) Set(v string) error {
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return fmt.Errorf("want a non-negative integer (leave --seed out for the scenario's seed)")
	}
	s.v, s.set = n, true
	return nil
}

func (s *seedFlag) Type() string { return "uint" }

// secondsFlag is a duration in seconds that may be left unset: a negative or non-finite value is
// refused rather than meaning "unset" (--ready-timeout-s -5 used to mean the scenario's).
type secondsFlag struct {
	v   float64
	set bool
}

func (s *secondsFlag) String() string {
	if !s.set {
		return ""
	}
	return strconv.FormatFloat(s.v, 'g', -1, 64)
}

func (s *secondsFlag) Set(v string) error {
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(x >= 0 && x <= 1e6) {
		return fmt.Errorf("want seconds >= 0 (leave the flag out for the scenario's value)")
	}
	s.v, s.set = x, true
	return nil
}

func (s *secondsFlag) Type() string { return "float" }

// args is the scenario the flags give.
func (f *scenarioFlags) args() *scenario.Args {
	return &scenario.Args{Config: f.config, Params: f.params, Uncalibrated: f.uncalibrated, VLLMCmd: f.vllmCmd, VLLMWords: f.vllmWords,
		GPU: f.gpu, GPUs: int(f.gpus), GPUCatalog: f.gpuCatalog, ModelConfig: f.modelConfig, VLLMVersion: f.vllmVersion,
		Seed: f.seed.v, SeedSet: f.seed.set, ReadyTimeout: f.readyTimeoutS.v, ReadyTimeoutSet: f.readyTimeoutS.set,
		MeanAcceptanceLength: f.meanAccept, AcceptanceRates: f.acceptRates}
}

// isSeed reports whether the run uses the embedded seed scenario unchanged.
func (f *scenarioFlags) isSeed() bool { return f.args().IsSeed() }

// scenario builds the scenario the flags describe (scenario.Args.Scenario), printing notes
// (ignored vLLM flags) to stderr; a contradiction or a value out of range is a usage error.
func (f *scenarioFlags) scenario(stderr io.Writer) (*scenario.Scenario, error) {
	return f.args().Scenario(stderr)
}

// load resolves the scenario, printing warnings to stderr and notes to info (stderr, or nothing
// with --quiet). Every command that reads a scenario goes through it.
func (f *scenarioFlags) load(stderr, info io.Writer) (*scenario.Resolved, error) {
	s, err := f.scenario(stderr)
	if err != nil {
		return nil, err
	}
	r, err := s.Resolve(scenario.ResolveOptions{})
	if err != nil {
		return nil, err
	}
	for _, n := range r.Notes {
		fmt.Fprintln(info, "note: "+n)
	}
	if f.matrix {
		for _, n := range r.ProtocolNotes {
			fmt.Fprintln(info, "note: "+n)
		}
	}
	return r, nil
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
