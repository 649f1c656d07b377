package vllmcmd

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/servesim/servesim/model/deploy"
)

// Result is a parsed vLLM launch command.
type Result struct {
	// Args are the engine flags the command gives; the others are not set (deploy.Resolve gives
	// them vLLM's defaults). Name is always "vllm".
	Args deploy.EngineArgs
	// Env holds the environment assignments before the program (`env A=B` or bare `A=B`).
	Env map[string]string
	// Program is how vLLM was started: the path of the vllm binary, "python3 -m <module>", or ""
	// when the command starts at `serve` or at the flags.
	Program string
	// Model is the model served: the positional argument after `serve`, else --model.
	Model string
	// Revision is --revision: the checkpoint revision (a branch, tag or commit) to read.
	Revision string
	// Ignored lists the flags recognised as having no effect on the simulation, in order, as
	// "--flag value" (secrets as <redacted>).
	Ignored []string
	// Unknown lists the flags and words not recognised, in order. They are not errors.
	Unknown []string
	// Notes are remarks on settings that matter but are not (or only partly) simulated.
	Notes []string
}

// Parse reads the words of a vLLM launch command (see Split). Accepted shapes:
//
//	[env [-i] [-u NAME]] [A=B ...] [nohup] PROGRAM [serve] [MODEL] FLAGS... [| tee log] [> log 2>&1] [&]
//
// where PROGRAM is vllm (or any path ending in /vllm, followed by serve), python[3[.x]] -m
// vllm.entrypoints.openai.api_server, python -m vllm.entrypoints.cli.main serve, or nothing (the
// words start at `serve` or at the first flag). Flags may be written --flag value, --flag=value or
// with underscores (--max_model_len) as vLLM allows. A malformed value is an error naming the
// flag; flags Parse does not know are listed in Result.Unknown, and if such a flag is followed by a
// word that is not a flag, that word is taken as its value.
func Parse(args []string) (*Result, error) {
	for i, a := range args {
		// Names and values are text: a stray byte would be written back as U+FFFD (in
		// --speculative-config's JSON) and name another model than the one given.
		if !utf8.ValidString(a) {
			return nil, fmt.Errorf("argument %d %q: not valid UTF-8", i+1, a)
		}
	}
	p := &parser{args: args, res: &Result{Env: map[string]string{}}, table: flagTable()}
	if err := p.prefix(); err != nil {
		return nil, err
	}
	if err := p.flags(); err != nil {
		return nil, err
	}
	if n := p.legacySpecTokens; n > 0 && p.legacySpecModel == "" && !p.specGiven {
		// Without a method the count would read as speculation off, and the note and Format
		// would disagree about it.
		return nil, fmt.Errorf("--num-speculative-tokens %d without --speculative-model: vLLM rejects a token count without a draft model; for an MTP checkpoint write --speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":%d}'", n, n)
	}
	p.finish()
	return p.res, nil
}

type parser struct {
	args  []string
	i     int
	res   *Result
	table map[string]*flagSpec // flagTable()

	envOrder   []string // assignment names in order of first appearance
	positional string   // model given as a positional argument
	modelFlag  string   // model given with --model
	served     []string // --served-model-name
	attnFlag   bool     // --attention-backend given

	specGiven        bool
	spec             deploy.Speculative
	legacySpecModel  string
	legacySpecTokens int
}

func (p *parser) note(format string, a ...any) {
	p.res.Notes = append(p.res.Notes, fmt.Sprintf(format, a...))
}

var negNumRE = regexp.MustCompile(`^-[0-9.]`)

const wantProgram = "want vllm serve MODEL, python -m vllm.entrypoints.openai.api_server --model MODEL, or the flags alone"

// prefix consumes the environment, the program and the subcommand.
func (p *parser) prefix() error {
	if len(p.args) == 0 {
		return fmt.Errorf("empty command: %s", wantProgram)
	}
	assign, next, unknown := ShellPrefix(p.args[p.i:])
	for _, a := range assign {
		k, v, _ := strings.Cut(a, "=")
		if _, seen := p.res.Env[k]; !seen {
			p.envOrder = append(p.envOrder, k)
		}
		p.res.Env[k] = v
	}
	p.res.Unknown = append(p.res.Unknown, unknown...)
	p.i += next
	if p.i >= len(p.args) {
		return fmt.Errorf("no program after the environment: %s", wantProgram)
	}
	return p.program()
}

func (p *parser) program() error {
	prog := p.args[p.i]
	base := path.Base(prog)
	switch {
	case prog == "serve":
		p.i++
	case strings.HasPrefix(prog, "-"):
	case base == "vllm":
		p.res.Program = prog
		p.i++
		return p.serve("vllm")
	case IsPython(prog):
		p.i++
		module := ""
		for module == "" {
			if p.i >= len(p.args) {
				return fmt.Errorf("%s: want -m vllm.entrypoints.openai.api_server", prog)
			}
			a := p.args[p.i]
			p.i++
			switch {
			case a == "-m":
				if p.i >= len(p.args) {
					return fmt.Errorf("%s -m: needs a module name, but the command ends", prog)
				}
				module = p.args[p.i]
				p.i++
			case strings.HasPrefix(a, "-m"):
				module = a[2:]
			case a == "-X" || a == "-W":
				p.i++
			case strings.HasPrefix(a, "-c"):
				return fmt.Errorf("%s -c: want -m vllm.entrypoints.openai.api_server", prog)
			case strings.HasPrefix(a, "-"):
			default:
				return fmt.Errorf("%s %s: want -m vllm.entrypoints.openai.api_server", prog, a)
			}
		}
		p.res.Program = prog + " -m " + module
		switch module {
		case "vllm.entrypoints.openai.api_server":
		case "vllm.entrypoints.cli.main":
			return p.serve(p.res.Program)
		default:
			return fmt.Errorf("%s -m %s: want vllm.entrypoints.openai.api_server or vllm.entrypoints.cli.main", prog, module)
		}
	default:
		return fmt.Errorf("program %q: %s", prog, wantProgram)
	}
	return nil
}

// serve consumes the `serve` subcommand after the vllm entry point.
func (p *parser) serve(prog string) error {
	if p.i >= len(p.args) {
		return fmt.Errorf("%s: want the serve subcommand, but the command ends", prog)
	}
	if sub := p.args[p.i]; sub != "serve" {
		return fmt.Errorf("%s %s: want %s serve", prog, sub, prog)
	}
	p.i++
	return nil
}

// looksLikeFlag reports whether a word would be taken as an option rather than a value (argparse
// takes negative numbers as values).
func looksLikeFlag(a string) bool {
	return len(a) > 1 && a[0] == '-' && !negNumRE.MatchString(a)
}

// flags consumes the flags and positionals up to the end or to a shell control operator.
func (p *parser) flags() error {
	onlyPositionals := false
	for p.i < len(p.args) {
		a := p.args[p.i]
		p.i++
		if IsControlOperator(a) {
			p.note("shell operator %q: the %d words from there on are not part of the vLLM command", a, len(p.args)-p.i+1)
			return nil
		}
		if ok, targetNext := Redirection(a); ok {
			r := a
			if targetNext && p.i < len(p.args) {
				r += " " + p.args[p.i]
				p.i++
			}
			p.note("shell redirection %q ignored", r)
			continue
		}
		switch {
		case onlyPositionals || !looksLikeFlag(a):
			p.positionalArg(a)
		case a == "--":
			onlyPositionals = true
		default:
			if err := p.flag(a); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *parser) positionalArg(a string) {
	if p.positional == "" {
		p.positional = a
		return
	}
	p.res.Unknown = append(p.res.Unknown, a)
}

// value returns the flag's value: the inline one (--flag=value) or the next word.
func (p *parser) value(name, inline string, hasInline bool) (string, error) {
	if hasInline {
		return inline, nil
	}
	if p.i >= len(p.args) {
		return "", fmt.Errorf("%s: needs a value, but the command ends", name)
	}
	v := p.args[p.i]
	if looksLikeFlag(v) {
		return "", fmt.Errorf("%s: needs a value, got the flag %q", name, v)
	}
	p.i++
	return v, nil
}

// canonical spells a flag the way the flag table does: underscores in long names become dashes
// (as vLLM's FlexibleArgumentParser does) and short aliases become their long names.
func canonical(name string) string {
	if strings.HasPrefix(name, "--") {
		name = "--" + strings.ReplaceAll(name[2:], "_", "-")
	}
	if long, ok := shortAliases()[name]; ok {
		return long
	}
	return name
}

func (p *parser) flag(a string) error {
	if len(a) == 3 && strings.HasPrefix(a, "-O") && a[2] >= '0' && a[2] <= '9' {
		return setOptimizationLevel(p, "-O", a[2:])
	}
	if a == "-O" {
		v, err := p.value(a, "", false)
		if err != nil {
			return err
		}
		return setOptimizationLevel(p, "-O", v)
	}
	name, inline, hasInline := strings.Cut(a, "=")
	canon := canonical(name)
	spec, ok := p.table[canon]
	negated := false
	if !ok && strings.HasPrefix(canon, "--no-") {
		if s, found := p.table["--"+canon[len("--no-"):]]; found && s.kind == boolFlag {
			spec, ok, negated = s, true, true
		}
	}
	if !ok {
		entry := a
		if !hasInline && p.i < len(p.args) {
			next := p.args[p.i]
			if !looksLikeFlag(next) && !IsControlOperator(next) && !isRedirection(next) {
				entry += " " + next
				p.i++
			}
		}
		p.res.Unknown = append(p.res.Unknown, entry)
		return nil
	}

	switch spec.kind {
	case boolFlag:
		b, entry := !negated, a
		if hasInline {
			if negated {
				return fmt.Errorf("%s: takes no value", a)
			}
			v, ok := parseBool(inline)
			if !ok {
				return fmt.Errorf("%s %q: want true or false", name, inline)
			}
			b = v
		} else if p.i < len(p.args) && !negated {
			if next := strings.ToLower(p.args[p.i]); next == "true" || next == "false" {
				b, entry = next == "true", a+" "+p.args[p.i]
				p.i++
			}
		}
		if spec.setBool != nil {
			spec.setBool(&p.res.Args, b)
		}
		if spec.ignored {
			p.res.Ignored = append(p.res.Ignored, entry)
		}
	case valueFlag, listFlag:
		v, err := p.value(name, inline, hasInline)
		if err != nil {
			return err
		}
		vals := []string{v}
		if spec.kind == listFlag && !hasInline {
			for p.i < len(p.args) {
				next := p.args[p.i]
				if looksLikeFlag(next) || IsControlOperator(next) || isRedirection(next) {
					break
				}
				vals = append(vals, next)
				p.i++
			}
		}
		if spec.set != nil {
			for _, v := range vals {
				if err := spec.set(p, name, v); err != nil {
					return err
				}
			}
		}
		if spec.ignored {
			shown := strings.Join(vals, " ")
			if spec.secret {
				shown = "<redacted>"
			}
			p.res.Ignored = append(p.res.Ignored, name+" "+shown)
		}
	}
	if spec.note != "" {
		p.note("%s: %s", name, spec.note)
	}
	return nil
}

func parseBool(s string) (v, ok bool) {
	switch strings.ToLower(s) {
	case "true", "1", "yes", "on":
		return true, true
	case "false", "0", "no", "off":
		return false, true
	}
	return false, false
}

// finish resolves what depends on several flags.
func (p *parser) finish() {
	r := p.res
	e := &r.Args
	e.Name = "vllm"

	r.Model = p.modelFlag
	if p.positional != "" {
		if p.modelFlag != "" && p.modelFlag != p.positional {
			p.note("model given twice: the positional %q wins over --model %q, as in vllm serve", p.positional, p.modelFlag)
		}
		r.Model = p.positional
	}
	switch {
	case len(p.served) > 0:
		e.ServedModel = p.served[0]
		if len(p.served) > 1 {
			p.note("--served-model-name: %d names; the first, %q, is used", len(p.served), p.served[0])
		}
	}
	if r.Model == "" {
		p.note("no model in the command: vLLM would serve its default model")
	}

	if p.specGiven {
		s := p.spec
		e.Speculative = &s
	}
	if p.legacySpecModel != "" || p.legacySpecTokens > 0 {
		if e.Speculative == nil {
			e.Speculative = &deploy.Speculative{}
		}
		s := e.Speculative
		if m := p.legacySpecModel; m == "[ngram]" {
			s.Method, s.Model = "ngram", ""
		} else if m != "" {
			s.Model = m
			if s.Method == "" {
				s.Method = inferSpecMethod(m)
			}
		}
		if p.legacySpecTokens > 0 {
			s.NumTokens = p.legacySpecTokens
		}
		p.note("--speculative-model/--num-speculative-tokens are the pre-2025 spelling of --speculative-config; read as method %q, model %q, %d tokens", s.Method, s.Model, s.NumTokens)
	}

	for _, k := range p.envOrder {
		v := r.Env[k]
		if k == "VLLM_ATTENTION_BACKEND" && !p.attnFlag {
			e.AttentionBackend = v
		}
		if k == "VLLM_ALL2ALL_BACKEND" && e.All2AllBackend == "" {
			e.All2AllBackend = v
		}
		if k == "VLLM_ALLOW_LONG_MAX_MODEL_LEN" {
			e.AllowLongMaxModelLen = v == "1" || strings.EqualFold(v, "true")
		}
		if n, ok := envNotes()[k]; ok {
			p.note("%s=%s: %s", k, v, n)
		}
		if k == "CUDA_VISIBLE_DEVICES" {
			if n := len(strings.Split(v, ",")); v != "" && n < e.GPUs() {
				p.note("CUDA_VISIBLE_DEVICES lists %d GPUs but the engine needs %d", n, e.GPUs())
			}
		}
	}
}

// envNotes are the environment variables known to change what vLLM does in ways that matter to
// the simulation.
func envNotes() map[string]string {
	return map[string]string{
		"VLLM_ATTENTION_BACKEND":            "selects the attention backend (taken as AttentionBackend unless --attention-backend is given)",
		"VLLM_USE_V2_MODEL_RUNNER":          "the v2 model runner: per-step overheads differ from v1; calibration is tied to it",
		"VLLM_USE_V1":                       "only the v1 engine is simulated",
		"VLLM_FLASHINFER_AUTOTUNE_SKIP_OPS": "FlashInfer autotuning skipped for these ops: kernel speed may differ from tuned runs (calibrate)",
		"VLLM_ALL2ALL_BACKEND":              "expert-parallel all-to-all implementation (DP > 1): not modelled",
		"VLLM_USE_DEEP_GEMM":                "GEMM/MoE kernel choice: covered by calibration, not modelled",
		"VLLM_USE_FLASHINFER_MOE_FP4":       "MoE kernel choice: covered by calibration, not modelled",
		"VLLM_USE_FLASHINFER_MOE_FP8":       "MoE kernel choice: covered by calibration, not modelled",
		"VLLM_FLASHINFER_MOE_BACKEND":       "MoE kernel choice: covered by calibration, not modelled",
		"VLLM_MLA_DISABLE":                  "disables MLA, which changes the KV bytes per token: not modelled",
		"VLLM_ENABLE_V1_MULTIPROCESSING":    "0 runs the engine core in the API process, so CPU work is not overlapped",
		"VLLM_ALLOW_LONG_MAX_MODEL_LEN":     "allows --max-model-len beyond the model's own limit",
		"NCCL_P2P_DISABLE":                  "GPU peer-to-peer off: all-reduces go through host memory (calibrate the all-reduce)",
		"PYTORCH_CUDA_ALLOC_CONF":           "allocator settings shift non-KV memory slightly",
	}
}
