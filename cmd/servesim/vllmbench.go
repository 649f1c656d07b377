package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/vllmbench"
	"github.com/servesim/servesim/workload"
)

// vllmBenchFlags read vLLM's benchmark client: --vllm-bench, and the two assumptions servesim needs
// because it has no tokenizer.
type vllmBenchFlags struct {
	cmdlines []string
	special  int
	cpt      float64
	multi    bool
}

// register adds the flags; multi lets --vllm-bench repeat (fit: one command per result file).
func (f *vllmBenchFlags) register(fs *pflag.FlagSet, multi bool) {
	f.multi = multi
	usage := "a `\"vllm bench serve ...\"` or \"vllm bench throughput ...\" command: its dataset, request rate, burstiness, max concurrency and warm-ups become the workload"
	if multi {
		usage = "the `\"vllm bench serve ...\"` command of the --measured files (once for all, or once per file in order): their dataset, seed, prefix and warm-ups"
	}
	fs.StringArrayVar(&f.cmdlines, "vllm-bench", nil, usage)
	fs.IntVar(&f.special, "special-tokens", 1, "special `tokens` the model's tokenizer adds to a prompt (vLLM's random dataset subtracts them from the input length; 1 = a BOS token); servesim has no tokenizer")
	fs.Float64Var(&f.cpt, "chars-per-token", workload.DefaultCharsPerToken, "`characters` per token, to estimate ShareGPT turns that carry no num_tokens count")
}

// check validates the flags' values.
func (f *vllmBenchFlags) check(fs *pflag.FlagSet) error {
	if !f.multi && len(f.cmdlines) > 1 {
		return usage.Errorf("--vllm-bench given %d times: give one benchmark command", len(f.cmdlines))
	}
	if f.special < 0 || f.special > 64 {
		return usage.Errorf("--special-tokens %d: want 0..64", f.special)
	}
	if !(f.cpt >= 0.1 && f.cpt <= 100) {
		return usage.Errorf("--chars-per-token %v: want a ratio in [0.1, 100]", f.cpt)
	}
	return nil
}

// forFiles checks that a repeated --vllm-bench gives one command per result file (n of them).
func (f *vllmBenchFlags) forFiles(n int) error {
	if k := len(f.cmdlines); k > 1 && k != n {
		return usage.Errorf("--vllm-bench given %d times for %d result file(s): give one command for all of them, or one per file in order", k, n)
	}
	return nil
}

// used reports whether any of the flags was given.
func (f *vllmBenchFlags) used(fs *pflag.FlagSet) bool {
	return len(f.cmdlines) > 0 || fs.Changed("special-tokens") || fs.Changed("chars-per-token")
}

func (f *vllmBenchFlags) options(fs *pflag.FlagSet) vllmbench.Options {
	var o vllmbench.Options
	if fs.Changed("special-tokens") {
		n := f.special
		o.SpecialTokens = &n
	}
	if fs.Changed("chars-per-token") {
		o.CharsPerToken = f.cpt
	}
	return o
}

// command parses the i-th --vllm-bench (nil when there is none).
func (f *vllmBenchFlags) command(i int) (*vllmbench.Command, error) {
	if len(f.cmdlines) == 0 {
		return nil, nil
	}
	if len(f.cmdlines) == 1 {
		i = 0
	}
	c, err := vllmbench.ParseLine(f.cmdlines[i])
	if err != nil {
		return nil, usage.Errorf("--vllm-bench: %v", err)
	}
	return c, nil
}

// printVLLMBenchNotes writes what a benchmark import accepted without effect and what it assumed.
func printVLLMBenchNotes(w io.Writer, prefix string, c *vllmbench.Command, notes []string) {
	if c != nil && len(c.Accepted) > 0 {
		fmt.Fprintf(w, "%saccepted without effect on the simulation: %s\n", prefix, strings.Join(c.Accepted, " "))
	}
	for _, n := range notes {
		fmt.Fprintf(w, "%snote: %s\n", prefix, n)
	}
}

// vllmBenchWorkload is the workload of --vllm-bench, or of a --measured result file (with the
// command's dataset when both are given); nil when neither is. Notes go to info (silenced by
// --quiet).
func (f *vllmBenchFlags) vllmBenchWorkload(fs *pflag.FlagSet, res *vllmbench.Result, info io.Writer) (*workload.Spec, error) {
	if res != nil {
		spec, cmd, notes, err := resultWorkload(res, f, fs, 0)
		if err != nil {
			return nil, err
		}
		printVLLMBenchNotes(info, "servesim: ", cmd, notes)
		return spec, nil
	}
	cmd, err := f.command(0)
	if err != nil {
		return nil, err
	}
	o := f.options(fs)
	var spec *workload.Spec
	var notes []string
	switch {
	case cmd != nil:
		spec, notes, err = cmd.Spec(o)
	default:
		if f.used(fs) {
			return nil, usage.Errorf("--special-tokens and --chars-per-token apply to --vllm-bench and --measured")
		}
		return nil, nil
	}
	if err != nil {
		if isFileError(err) {
			return nil, fmt.Errorf("--vllm-bench: %w", err)
		}
		return nil, usage.Errorf("--vllm-bench: %v", err) // a value of the command out of range
	}
	printVLLMBenchNotes(info, "servesim: ", cmd, notes)
	return spec, nil
}

// noteModelLen warns when a benchmark's longest request exceeds max_model_len.
func noteModelLen(w io.Writer, s *workload.Spec, mml int) {
	if s.Kind != workload.KindVLLMBench && s.Kind != workload.KindOffline {
		return
	}
	if n := s.MaxRequestTokens(); n > mml {
		fmt.Fprintf(w, "servesim: note: the longest request is %d tokens (prompt + output), more than max_model_len %d: vLLM refuses such requests (they count as failed; a ready check that long stops the benchmark)\n", n, mml)
	}
}

// isFileError reports whether err is about a file read (missing, unreadable, not a regular file,
// too large) rather than a value given on the command line.
func isFileError(err error) bool {
	var pe *fs.PathError
	var nr *fsutil.NotRegularError
	var tl *fsutil.TooLargeError
	return errors.As(err, &pe) || errors.As(err, &nr) || errors.As(err, &tl)
}
