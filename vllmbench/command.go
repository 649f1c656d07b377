package vllmbench

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/servesim/servesim/vllmcmd"
	"github.com/servesim/servesim/workload"
)

// MaxCommandBytes bounds a command line (1 MiB).
const MaxCommandBytes = 1 << 20

// Command is a `vllm bench serve` or `vllm bench throughput` command line, read.
type Command struct {
	// Mode is "serve" or "throughput".
	Mode string
	// Bench is the run the command describes, with vLLM's defaults for what it leaves out.
	Bench workload.VLLMBench
	// SLO holds the --goodput limits (request_goodput counts requests within all of them).
	SLO workload.SLO
	// Model is --model, when given (the scenario's model is what is simulated).
	Model string
	// Accepted lists the flags accepted without effect on the simulation, with their values.
	Accepted []string
	// Notes say what the simulation approximates or assumes for this command.
	Notes []string
	// Env lists leading VAR=value assignments (not used).
	Env []string

	ignoreEOS  bool
	datasetSet bool
	randomSet  []string // random-dataset flags given
	sharegpt   []string // sharegpt flags given
}

// ParseLine splits a command line as a POSIX shell would (vllmcmd.Split) and parses it.
func ParseLine(line string) (*Command, error) {
	if len(line) > MaxCommandBytes {
		return nil, fmt.Errorf("command line of %d bytes: servesim reads at most %d", len(line), MaxCommandBytes)
	}
	words, err := vllmcmd.Split(line)
	if err != nil {
		return nil, err
	}
	return Parse(words)
}

// arity of a flag: a switch, one value, or one or more values (argparse nargs "+" / "*").
type arity int

const (
	switchFlag arity = iota
	oneValue
	manyValues
)

// flagDef is one flag servesim knows: how many values it takes and what to do with them.
type flagDef struct {
	arity arity
	// set maps the flag into the command (nil: accepted without effect, listed in Accepted).
	set func(c *Command, name string, vals []string) error
	// note is added to Notes when the flag is given (with set == nil: accepted with a caveat).
	note string
	// refuse is the reason a known flag cannot be simulated.
	refuse string
}

func accept(a arity) flagDef { return flagDef{arity: a} }

func refuse(a arity, why string) flagDef { return flagDef{arity: a, refuse: why} }

func intInto(dst func(c *Command) *int, min int, what string) func(*Command, string, []string) error {
	return func(c *Command, name string, v []string) error {
		n, err := parseInt(v[0])
		if err != nil || n < min {
			return fmt.Errorf("%s %q: want %s", name, v[0], what)
		}
		*dst(c) = n
		return nil
	}
}

// parseInt reads a Python int(): optional sign, digits, underscores between digits.
func parseInt(s string) (int, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "__") || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") {
		return 0, fmt.Errorf("bad integer")
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
	if err != nil || n > 1<<40 || n < -(1<<40) {
		return 0, fmt.Errorf("bad integer")
	}
	return int(n), nil
}

// parseFloat reads a Python float(): inf, infinity and nan included (nan is refused).
func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), "_", ""), 64)
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Errorf("bad number")
	}
	return f, nil
}

func randomFlag(c *Command, name string) { c.randomSet = append(c.randomSet, name) }

// serveFlags are the flags of `vllm bench serve` servesim knows (vllm/benchmarks/serve.py and
// the dataset arguments of vllm/benchmarks/datasets.py), by their dashed long name.
func serveFlags() map[string]flagDef {
	m := commonFlags()
	for _, n := range []string{"--host", "--port", "--base-url", "--endpoint", "--tokenizer", "--tokenizer-mode",
		"--served-model-name", "--result-dir", "--result-filename", "--label", "--percentile-metrics",
		"--metric-percentiles", "--request-id-prefix"} {
		m[n] = accept(oneValue)
	}
	for _, n := range []string{"--save-result", "--save-detailed", "--append-result", "--trust-remote-code", "--disable-tqdm", "--skip-chat-template"} {
		m[n] = accept(switchFlag)
	}
	m["--metadata"] = accept(manyValues)
	m["--header"] = accept(manyValues)
	sampling := flagDef{arity: oneValue, note: "sampling parameters (--temperature, --top-p, --top-k, --min-p, penalties) do not change the simulated timing: every output runs to its length"}
	for _, n := range []string{"--temperature", "--top-p", "--top-k", "--min-p", "--frequency-penalty", "--presence-penalty", "--repetition-penalty"} {
		m[n] = sampling
	}
	backend := func(c *Command, name string, v []string) error {
		switch v[0] {
		case "openai", "vllm":
			c.Accepted = append(c.Accepted, name+" "+v[0])
		case "openai-chat":
			c.Accepted = append(c.Accepted, name+" "+v[0])
			c.Notes = append(c.Notes, "--backend openai-chat: the chat template's tokens are not added to the prompts (servesim has no tokenizer)")
		default:
			return fmt.Errorf("%s %s: servesim simulates a vLLM server through /v1/completions (openai, vllm) or /v1/chat/completions (openai-chat)", name, v[0])
		}
		return nil
	}
	m["--backend"] = flagDef{arity: oneValue, set: backend}
	m["--endpoint-type"] = flagDef{arity: oneValue, set: backend}
	m["--sharegpt-output-len"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		c.sharegpt = append(c.sharegpt, name)
		return intInto(func(c *Command) *int { return &c.Bench.OutputLen }, 1, "a positive token count")(c, name, v)
	}}
	m["--random-input-len"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		randomFlag(c, name)
		return intInto(func(c *Command) *int { return &c.Bench.InputLen }, 0, "a token count")(c, name, v)
	}}
	m["--random-output-len"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		randomFlag(c, name)
		return intInto(func(c *Command) *int { return &c.Bench.OutputLen }, 0, "a token count")(c, name, v)
	}}
	m["--random-batch-size"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		if n, err := parseInt(v[0]); err != nil || n != 1 {
			return fmt.Errorf("%s %s: batched prompts are for embedding models; servesim simulates generation (1)", name, v[0])
		}
		c.Accepted = append(c.Accepted, name+" 1")
		return nil
	}}
	m["--request-rate"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		f, err := parseFloat(v[0])
		if err != nil || f <= 0 {
			return fmt.Errorf("%s %q: want a positive number of requests/s or inf", name, v[0])
		}
		c.Bench.RequestRate = 0
		if !math.IsInf(f, 1) {
			c.Bench.RequestRate = f
		}
		return nil
	}}
	m["--burstiness"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		f, err := parseFloat(v[0])
		if err != nil || f <= 0 {
			return fmt.Errorf("%s %q: want a positive gamma shape (1: Poisson) or inf", name, v[0])
		}
		c.Bench.Burstiness, c.Bench.ConstantGaps = f, false
		if math.IsInf(f, 1) {
			c.Bench.Burstiness, c.Bench.ConstantGaps = 0, true
		}
		return nil
	}}
	m["--max-concurrency"] = flagDef{arity: oneValue, set: intInto(func(c *Command) *int { return &c.Bench.MaxConcurrency }, 1, "a positive number of requests")}
	m["--num-warmups"] = flagDef{arity: oneValue, set: intInto(func(c *Command) *int { return &c.Bench.NumWarmups }, 0, "a number of requests")}
	m["--ready-check-timeout-sec"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		n, err := parseInt(v[0])
		if err != nil {
			return fmt.Errorf("%s %q: want seconds (0: no ready check)", name, v[0])
		}
		c.Bench.NoReadyCheck = n <= 0
		return nil
	}}
	m["--ignore-eos"] = flagDef{arity: switchFlag, set: func(c *Command, _ string, _ []string) error { c.ignoreEOS = true; return nil }}
	m["--goodput"] = flagDef{arity: manyValues, set: goodput}
	m["--no-stream"] = refuse(switchFlag, "without streaming the client sees the whole response at once; servesim simulates streamed requests")
	m["--use-beam-search"] = refuse(switchFlag, "beam search is not simulated")
	m["--logprobs"] = refuse(oneValue, "log-probabilities are not simulated")
	m["--lora-modules"] = refuse(manyValues, "LoRA adapters are not simulated")
	m["--extra-body"] = refuse(oneValue, "servesim cannot tell what extra request fields do")
	m["--profile"] = refuse(switchFlag, "the torch profiler slows the server; not simulated")
	for _, n := range []string{"--ramp-up-strategy", "--ramp-up-start-rps", "--ramp-up-end-rps"} {
		m[n] = refuse(oneValue, "rate ramps are not imported; write an open-loop workload TOML with [open] ramp = [...]")
	}
	return m
}

// throughputFlags are the workload flags of `vllm bench throughput` (vllm/benchmarks/throughput.py).
func throughputFlags() map[string]flagDef {
	m := commonFlags()
	m["--dataset"] = flagDef{arity: oneValue, set: func(c *Command, _ string, v []string) error { c.Bench.DatasetPath = v[0]; return nil }}
	m["--input-len"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		randomFlag(c, name)
		return intInto(func(c *Command) *int { return &c.Bench.InputLen }, 1, "a positive token count")(c, name, v)
	}}
	m["--random-input-len"] = m["--input-len"]
	m["--output-len"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		randomFlag(c, name)
		return intInto(func(c *Command) *int { return &c.Bench.OutputLen }, 1, "a positive token count")(c, name, v)
	}}
	m["--random-output-len"] = m["--output-len"]
	m["--prefix-len"] = m["--random-prefix-len"]
	m["--n"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		if n, err := parseInt(v[0]); err != nil || n != 1 {
			return fmt.Errorf("%s %s: parallel sampling (several outputs per prompt) is not simulated", name, v[0])
		}
		return nil
	}}
	m["--backend"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		if v[0] != "vllm" {
			return fmt.Errorf("%s %s: servesim simulates the vLLM engine (backend vllm)", name, v[0])
		}
		c.Accepted = append(c.Accepted, name+" vllm")
		return nil
	}}
	for _, n := range []string{"--tokenizer", "--output-json"} {
		m[n] = accept(oneValue)
	}
	for _, n := range []string{"--disable-detokenize", "--trust-remote-code", "--disable-tqdm"} {
		m[n] = accept(switchFlag)
	}
	m["--async-engine"] = flagDef{arity: switchFlag, note: "--async-engine: the in-process async engine is simulated like the LLM class (no API server)"}
	m["--lora-path"] = refuse(oneValue, "LoRA adapters are not simulated")
	m["--hf-max-batch-size"] = refuse(oneValue, "the Hugging Face backend is not simulated")
	return m
}

// commonFlags are the flags both commands share.
func commonFlags() map[string]flagDef {
	m := map[string]flagDef{}
	m["--model"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		c.Model = v[0]
		c.Accepted = append(c.Accepted, name+" "+v[0])
		return nil
	}}
	m["--dataset-name"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		switch v[0] {
		case "random", "sharegpt":
			c.Bench.Dataset, c.datasetSet = v[0], true
			return nil
		}
		return fmt.Errorf("%s %s: servesim reads the random and sharegpt datasets (it has no tokenizer for the others' texts)", name, v[0])
	}}
	m["--dataset-path"] = flagDef{arity: oneValue, set: func(c *Command, _ string, v []string) error { c.Bench.DatasetPath = v[0]; return nil }}
	m["--num-prompts"] = flagDef{arity: oneValue, set: intInto(func(c *Command) *int { return &c.Bench.NumPrompts }, 1, "a positive number of prompts")}
	m["--seed"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		n, err := parseInt(v[0])
		if err != nil || n < 0 {
			return fmt.Errorf("%s %q: want a non-negative integer", name, v[0])
		}
		c.Bench.Seed = uint64(n)
		return nil
	}}
	m["--random-range-ratio"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		randomFlag(c, name)
		f, err := parseFloat(v[0])
		if err != nil || !(f >= 0 && f < 1) {
			return fmt.Errorf("%s %q: want a ratio in [0, 1) (vLLM's rule)", name, v[0])
		}
		c.Bench.RangeRatio = f
		return nil
	}}
	m["--random-prefix-len"] = flagDef{arity: oneValue, set: func(c *Command, name string, v []string) error {
		randomFlag(c, name)
		return intInto(func(c *Command) *int { return &c.Bench.PrefixLen }, 0, "a token count")(c, name, v)
	}}
	m["--disable-shuffle"] = flagDef{arity: switchFlag, set: func(c *Command, name string, _ []string) error {
		c.sharegpt = append(c.sharegpt, name)
		c.Bench.DisableShuffle = true
		return nil
	}}
	m["--no-oversample"] = flagDef{arity: switchFlag, set: func(c *Command, name string, _ []string) error {
		c.sharegpt = append(c.sharegpt, name)
		c.Bench.NoOversample = true
		return nil
	}}
	return m
}

// goodput reads --goodput ttft:MS tpot:MS e2el:MS.
func goodput(c *Command, name string, vals []string) error {
	for _, v := range vals {
		k, x, ok := strings.Cut(v, ":")
		f, err := parseFloat(x)
		if !ok || err != nil || !(f > 0) || math.IsInf(f, 0) {
			return fmt.Errorf("%s %q: want KEY:VALUE with KEY ttft, tpot or e2el and VALUE in ms", name, v)
		}
		switch k {
		case "ttft":
			c.SLO.TTFTms = f
		case "tpot":
			c.SLO.TPOTms = f
		case "e2el":
			c.SLO.E2Ems = f
		default:
			return fmt.Errorf("%s %q: unknown metric %q (want ttft, tpot or e2el)", name, v, k)
		}
	}
	return nil
}

// program recognises the benchmark program at the start of words and returns the mode and the
// index of the first flag.
func program(words []string, c *Command) (string, int, error) {
	env, i, _ := vllmcmd.ShellPrefix(words)
	c.Env = append(c.Env, env...)
	if i == len(words) {
		return "", 0, fmt.Errorf("empty command: want vllm bench serve ... or vllm bench throughput ...")
	}
	w := words[i]
	base := path.Base(w)
	mode := func(j int) (string, int, error) {
		if j < len(words) && words[j] == "serve" {
			return "", 0, fmt.Errorf("vllm serve is the server's launch command (servesim takes it with --vllm-cmd); want the benchmark's: vllm bench serve ... or vllm bench throughput ...")
		}
		if j+1 >= len(words) || words[j] != "bench" {
			return "", 0, fmt.Errorf("%q: want vllm bench serve ... or vllm bench throughput ...", strings.Join(words[i:min(len(words), j+2)], " "))
		}
		switch m := words[j+1]; m {
		case "serve", "throughput":
			return m, j + 2, nil
		default:
			return "", 0, fmt.Errorf("vllm bench %s: servesim reads vllm bench serve and vllm bench throughput", m)
		}
	}
	switch {
	case strings.HasPrefix(w, "-"):
		return "serve", i, nil
	case base == "vllm":
		return mode(i + 1)
	case vllmcmd.IsPython(w):
		j := i + 1
		for j < len(words) && strings.HasPrefix(words[j], "-") && words[j] != "-m" {
			j++
		}
		if j+1 < len(words) && words[j] == "-m" && words[j+1] == "vllm.entrypoints.cli.main" {
			return mode(j + 2)
		}
		if j < len(words) {
			switch path.Base(words[j]) {
			case "benchmark_serving.py":
				return "serve", j + 1, nil
			case "benchmark_throughput.py":
				return "throughput", j + 1, nil
			}
		}
		return "", 0, fmt.Errorf("%q: want python -m vllm.entrypoints.cli.main bench serve, benchmarks/benchmark_serving.py or benchmarks/benchmark_throughput.py", strings.Join(words[i:min(len(words), j+2)], " "))
	case base == "benchmark_serving.py":
		return "serve", i + 1, nil
	case base == "benchmark_throughput.py":
		return "throughput", i + 1, nil
	}
	return "", 0, fmt.Errorf("%q is not a vllm bench command: want vllm bench serve ... or vllm bench throughput ...", w)
}

// Parse reads the words of a `vllm bench serve` or `vllm bench throughput` command: `vllm bench
// serve`, `python -m vllm.entrypoints.cli.main bench serve`, benchmarks/benchmark_serving.py (and
// the throughput equivalents), or the flags alone (serve), after optional VAR=value assignments,
// env and nohup. A shell control operator (|, &&, ;, &) ends the command; redirections are
// skipped. Flags are spelled --flag value, --flag=value, or with underscores (--num_prompts).
// Unknown flags are refused, naming them.
func Parse(words []string) (*Command, error) {
	c := &Command{}
	mode, i, err := program(words, c)
	if err != nil {
		return nil, err
	}
	c.Mode = mode
	defs := serveFlags()
	if mode == "throughput" {
		defs = throughputFlags()
	}
	// vLLM's defaults (serve.py, datasets.py): random dataset, 1,000 prompts, 1024 / 128 tokens,
	// rate inf, burstiness 1, seed 0, ready check on.
	c.Bench = workload.VLLMBench{Dataset: "random", NumPrompts: 1000, InputLen: 1024, OutputLen: 128}
	if mode == "throughput" {
		c.Bench.InputLen, c.Bench.OutputLen = 0, 0
	}
	notes := map[string]bool{}
	for i < len(words) {
		w := words[i]
		if vllmcmd.IsControlOperator(w) {
			i = len(words)
			continue
		}
		if red, target := vllmcmd.Redirection(w); red {
			i++
			if target {
				i++
			}
			continue
		}
		if !strings.HasPrefix(w, "--") || w == "--" {
			return nil, fmt.Errorf("%q: not a flag of vllm bench %s (every argument is a --flag)", w, mode)
		}
		name, val, hasVal := strings.Cut(w, "=")
		name = "--" + strings.ReplaceAll(name[2:], "_", "-")
		d, ok := defs[name]
		if !ok {
			hint := ""
			if mode == "throughput" {
				hint = "; engine arguments of vllm bench throughput (--tensor-parallel-size, --max-model-len, ...) go in --vllm-cmd \"vllm serve MODEL ...\""
			}
			return nil, fmt.Errorf("%s: unknown flag of vllm bench %s: servesim cannot tell what it changes, so it refuses it%s", name, mode, hint)
		}
		i++
		var vals []string
		switch d.arity {
		case switchFlag:
			if hasVal {
				return nil, fmt.Errorf("%s=%s: %s takes no value", name, val, name)
			}
		case oneValue:
			switch {
			case hasVal:
				vals = []string{val}
			case i < len(words) && !(strings.HasPrefix(words[i], "--") && len(words[i]) > 2):
				vals = []string{words[i]}
				i++
			default:
				return nil, fmt.Errorf("%s: missing its value", name)
			}
		case manyValues:
			if hasVal {
				vals = []string{val}
			}
			for i < len(words) && !strings.HasPrefix(words[i], "-") && !isOperator(words[i]) {
				vals = append(vals, words[i])
				i++
			}
		}
		if d.refuse != "" {
			return nil, fmt.Errorf("%s: %s", name, d.refuse)
		}
		if d.note != "" && !notes[d.note] {
			notes[d.note] = true
			c.Notes = append(c.Notes, d.note)
		}
		if d.set == nil {
			c.Accepted = append(c.Accepted, strings.TrimSpace(name+" "+strings.Join(vals, " ")))
			continue
		}
		if err := d.set(c, name, vals); err != nil {
			return nil, err
		}
	}
	if err := c.finish(); err != nil {
		return nil, err
	}
	return c, nil
}

func isOperator(w string) bool {
	red, _ := vllmcmd.Redirection(w)
	return red || vllmcmd.IsControlOperator(w)
}

// finish applies the rules that depend on several flags and notes the approximations.
func (c *Command) finish() error {
	b := &c.Bench
	if c.Mode == "throughput" && !c.datasetSet {
		// vllm bench throughput: sharegpt when a dataset file is given, random otherwise.
		b.Dataset = "random"
		if b.DatasetPath != "" {
			b.Dataset = "sharegpt"
		}
	}
	switch b.Dataset {
	case "sharegpt":
		if b.DatasetPath == "" {
			return fmt.Errorf("--dataset-name sharegpt needs --dataset-path FILE (a ShareGPT JSON file)")
		}
		if len(c.randomSet) > 0 && c.Mode == "serve" {
			c.Notes = append(c.Notes, "ignored for the sharegpt dataset, as vLLM ignores them: "+strings.Join(c.randomSet, " "))
		}
		if c.Mode == "throughput" {
			// --output-len fixes the output; --input-len is not used by ShareGPT.
			if b.InputLen != 0 {
				c.Notes = append(c.Notes, "--input-len is ignored for the sharegpt dataset")
				b.InputLen = 0
			}
		}
		if c.Mode == "serve" && !c.ignoreEOS {
			c.Notes = append(c.Notes, "sharegpt without --ignore-eos: the real server stops each reply at the model's end-of-sequence token; servesim has none and runs each output to the reply's length in the file")
		}
		b.RangeRatio, b.PrefixLen = 0, 0
	case "random":
		if c.Mode == "throughput" && (b.InputLen == 0 || b.OutputLen == 0) {
			return fmt.Errorf("vllm bench throughput with the random dataset needs --input-len and --output-len")
		}
		if len(c.sharegpt) > 0 {
			c.Notes = append(c.Notes, "ignored for the random dataset, as vLLM ignores them: "+strings.Join(c.sharegpt, " "))
		}
		if b.DatasetPath != "" {
			c.Notes = append(c.Notes, "--dataset-path is not used by the random dataset")
			b.DatasetPath = ""
		}
		if c.Mode == "serve" {
			c.Notes = append(c.Notes, "random dataset: ignore-eos is forced on (as vLLM forces it for OpenAI backends), so every output runs to its drawn length")
		}
		c.Notes = append(c.Notes, "random dataset: lengths drawn with math/rand/v2 seeded from --seed, not numpy's generator: the same distributions, other draws")
	}
	if c.Mode == "serve" && b.RequestRate > 0 && !b.ConstantGaps {
		c.Notes = append(c.Notes, "send times: gamma gaps from math/rand/v2 seeded from --seed, not numpy's global generator: the same distribution, other draws")
	}
	return nil
}

// Options are servesim's settings for what a command line cannot say.
type Options struct {
	// SpecialTokens overrides the special tokens the tokenizer adds to a prompt (default 1, a
	// BOS token): nil keeps the default.
	SpecialTokens *int
	// CharsPerToken estimates ShareGPT token counts from characters (0: 4).
	CharsPerToken float64
	// Name names the workload (default "vllm-bench" or "vllm-bench-throughput").
	Name string
}

// Spec is the workload the command runs: kind vllm-bench (serve) or offline (throughput). A
// ShareGPT file is read here. The notes add the dataset's approximations to Command.Notes.
func (c *Command) Spec(o Options) (*workload.Spec, []string, error) {
	b := c.Bench
	if o.SpecialTokens != nil {
		n := *o.SpecialTokens
		b.SpecialTokens = &n
	}
	b.CharsPerToken = o.CharsPerToken
	kind := workload.KindVLLMBench
	if c.Mode == "throughput" {
		kind = workload.KindOffline
	}
	name := o.Name
	if name == "" {
		name = "vllm-bench"
		if c.Mode == "throughput" {
			name = "vllm-bench-throughput"
		}
	}
	s := &workload.Spec{Name: name, Kind: kind, VLLM: &b, SLO: c.SLO}
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	if err := s.LoadDataset(); err != nil {
		return nil, nil, err
	}
	notes := append([]string(nil), c.Notes...)
	if b.Dataset == "random" {
		notes = append(notes, fmt.Sprintf("random dataset: I' = input_len - %d special token(s) the server's tokenizer adds (an assumption: servesim has no tokenizer; change it with --special-tokens)", b.Special()))
	}
	dn, err := s.DatasetNotes()
	if err != nil {
		return nil, nil, err
	}
	return s, append(notes, dn...), nil
}
