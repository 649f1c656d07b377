package vllmbench

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/workload"
)

// Flags are what a command line says about vLLM's benchmark client: --vllm-bench (its command
// lines), and the two assumptions servesim needs because it has no tokenizer (--special-tokens,
// --chars-per-token). Errors are usage errors naming the flag.
type Flags struct {
	Cmdlines      []string
	SpecialTokens int
	CharsPerToken float64
	// Multi lets --vllm-bench repeat (one command per result file).
	Multi bool
	// Changed reports whether a flag was given (the flag set's Changed).
	Changed func(name string) bool
}

func (f *Flags) changed(name string) bool { return f.Changed != nil && f.Changed(name) }

// Check validates the flags' values.
func (f *Flags) Check() error {
	if !f.Multi && len(f.Cmdlines) > 1 {
		return usage.Errorf("--vllm-bench given %d times: give one benchmark command", len(f.Cmdlines))
	}
	if f.SpecialTokens < 0 || f.SpecialTokens > 64 {
		return usage.Errorf("--special-tokens %d: want 0..64", f.SpecialTokens)
	}
	if !(f.CharsPerToken >= 0.1 && f.CharsPerToken <= 100) {
		return usage.Errorf("--chars-per-token %v: want a ratio in [0.1, 100]", f.CharsPerToken)
	}
	return nil
}

// ForFiles checks that a repeated --vllm-bench gives one command per result file (n of them).
func (f *Flags) ForFiles(n int) error {
	if k := len(f.Cmdlines); k > 1 && k != n {
		return usage.Errorf("--vllm-bench given %d times for %d result file(s): give one command for all of them, or one per file in order", k, n)
	}
	return nil
}

// Used reports whether any of the flags was given.
func (f *Flags) Used() bool {
	return len(f.Cmdlines) > 0 || f.changed("special-tokens") || f.changed("chars-per-token")
}

// Options are the tokenizer assumptions the flags give (unset when not given).
func (f *Flags) Options() Options {
	var o Options
	if f.changed("special-tokens") {
		n := f.SpecialTokens
		o.SpecialTokens = &n
	}
	if f.changed("chars-per-token") {
		o.CharsPerToken = f.CharsPerToken
	}
	return o
}

// Command parses the i-th --vllm-bench (the only one when there is one; nil when there is none).
func (f *Flags) Command(i int) (*Command, error) {
	if len(f.Cmdlines) == 0 {
		return nil, nil
	}
	if len(f.Cmdlines) == 1 {
		i = 0
	}
	c, err := ParseLine(f.Cmdlines[i])
	if err != nil {
		return nil, usage.Errorf("--vllm-bench: %v", err)
	}
	return c, nil
}

// PrintNotes writes what a benchmark import accepted without effect and what it assumed.
func PrintNotes(w io.Writer, prefix string, c *Command, notes []string) {
	if c != nil && len(c.Accepted) > 0 {
		fmt.Fprintf(w, "%saccepted without effect on the simulation: %s\n", prefix, strings.Join(c.Accepted, " "))
	}
	for _, n := range notes {
		fmt.Fprintf(w, "%snote: %s\n", prefix, n)
	}
}

// ResultWorkload is the one mapping of a result file to a simulated run, shared by simulate
// --measured, validate, fit, plot and report: the workload recovered from the file (with the
// i-th --vllm-bench command for its dataset), the command and the notes on what was assumed. The
// run is seeded with the scenario's seed wherever it is simulated.
func (f *Flags) ResultWorkload(res *Result, i int) (*workload.Spec, *Command, []string, error) {
	cmd, err := f.Command(i)
	if err != nil {
		return nil, nil, nil, err
	}
	o := f.Options()
	spec, notes, err := res.Workload(RecoverOptions{Command: cmd, SpecialTokens: o.SpecialTokens, CharsPerToken: o.CharsPerToken})
	if err != nil {
		return nil, nil, nil, err
	}
	return spec, cmd, notes, nil
}

// Workload is the workload of --vllm-bench, or of a --measured result file (with the command's
// dataset when both are given); nil when neither is. Notes go to info.
func (f *Flags) Workload(res *Result, info io.Writer) (*workload.Spec, error) {
	if res != nil {
		spec, cmd, notes, err := f.ResultWorkload(res, 0)
		if err != nil {
			return nil, err
		}
		PrintNotes(info, "servesim: ", cmd, notes)
		return spec, nil
	}
	cmd, err := f.Command(0)
	if err != nil {
		return nil, err
	}
	if cmd == nil {
		if f.Used() {
			return nil, usage.Errorf("--special-tokens and --chars-per-token apply to --vllm-bench and --measured")
		}
		return nil, nil
	}
	spec, notes, err := cmd.Spec(f.Options())
	if err != nil {
		if isFileError(err) {
			return nil, fmt.Errorf("--vllm-bench: %w", err)
		}
		return nil, usage.Errorf("--vllm-bench: %v", err) // a value of the command out of range
	}
	PrintNotes(info, "servesim: ", cmd, notes)
	return spec, nil
}

// Choose picks the workload of --workload (wl), --vllm-bench or --measured (a result file, whose
// run is recovered; with --vllm-bench too, the command gives its dataset).
func (f *Flags) Choose(wl string, res *Result, info io.Writer) (*workload.Spec, error) {
	switch {
	case wl != "" && len(f.Cmdlines) > 0:
		return nil, usage.Errorf("--workload and --vllm-bench are exclusive: give one workload")
	case wl != "" && res != nil:
		return nil, usage.Errorf("--measured recovers the workload from the result file (with --vllm-bench for its dataset); it does not take --workload")
	case wl == "" && res == nil && len(f.Cmdlines) == 0:
		return nil, usage.Errorf("--workload: missing: give a workload file (TOML, or a .csv/.jsonl trace), a preset (%s), --vllm-bench \"vllm bench serve ...\" or --measured RESULT.json", workload.PresetNames())
	}
	spec, err := f.Workload(res, info)
	if err != nil || spec != nil {
		return spec, err
	}
	return workload.LoadArg("--workload", wl)
}

// ReadMeasured reads the --measured files when they are result files (nil when they are not:
// a matrix). Mixing the two is a usage error.
func ReadMeasured(paths []string) ([]*Result, error) {
	out, matrices, err := ReadResultFiles(paths)
	if err != nil {
		return nil, fmt.Errorf("--measured: %w", err)
	}
	if len(out) > 0 && matrices > 0 {
		return nil, usage.Errorf("--measured: %d vllm bench result file(s) and %d matrix file(s): fit to one kind at a time", len(out), matrices)
	}
	return out, nil
}

// NoteModelLen warns when a benchmark's longest request exceeds max_model_len.
func NoteModelLen(w io.Writer, s *workload.Spec, mml int) {
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

// Simulated is simulate's workload: that of --workload (wl), --vllm-bench or --measured (a
// result file at measured, returned too), with the objectives (slo) and overrides (o) the flags
// give; readyTimeout says --ready-timeout-s was given, which only a benchmark cell takes.
func (f *Flags) Simulated(wl, measured string, slo *workload.SLOArgs, o *workload.Overrides, readyTimeout bool, info io.Writer) (*workload.Spec, *Result, error) {
	var res *Result
	if measured != "" {
		var err error
		if res, err = ReadResult(measured); err != nil {
			return nil, nil, fmt.Errorf("--measured: %w", err)
		}
	}
	spec, err := f.Choose(wl, res, info)
	if err != nil {
		return nil, nil, err
	}
	if err := slo.Apply(f.changed, &spec.SLO); err != nil {
		return nil, nil, err
	}
	if o.Used(f.changed) && wl == "" {
		return nil, nil, usage.Errorf("--rate and --requests change a --workload (file or preset)")
	}
	if err := o.Apply(f.changed, spec); err != nil {
		return nil, nil, err
	}
	if readyTimeout && spec.Kind != workload.KindLLMBenchCell {
		return nil, nil, usage.Errorf("--ready-timeout-s applies to the benchmark's cells (a bench-CTXxC workload, or 'servesim matrix'), not to workload %q (kind %s)", spec.Name, spec.Kind)
	}
	return spec, res, nil
}
