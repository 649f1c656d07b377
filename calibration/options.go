package calibration

import (
	"strings"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/model/param"
)

// Options are the fit command's flags. Their checks are usage errors naming the flag; Check
// also parses the weights and the training filter.
type Options struct {
	Measured             []string
	KVTokens             int
	Train                string
	Exclude              []string
	CV                   string // "standard" for --cv without a value
	MaxJobs, MaxRequests int
	NoSeed               bool
	Out, Report          string
	Method               string
	Starts, MaxIter      int
	Workers              int
	FitSeed              uint64
	WeightsText          string
	Free                 []string

	Weights     Weights
	TrainFilter Filter
}

// Mode reads the cross-validation mode and whether the fit is multi-source (corpus or result
// files as arguments, or --cv loso|logo|lofo, which may come as the argument after --cv); it
// returns the arguments left.
func (o *Options) Mode(args []string) (cv string, rest []string, multi bool) {
	cv = o.CV
	if cv == "standard" && len(args) > 0 && (args[0] == "loso" || args[0] == "logo" || args[0] == "lofo") {
		cv, args = args[0], args[1:] // --cv loso, as well as --cv=loso
	}
	return cv, args, len(args) > 0 || cv == "loso" || cv == "logo" || cv == "lofo"
}

// Check validates the values for a fit in mode cv (multi: multi-source).
func (o *Options) Check(cv string, multi bool) error {
	if !multi && cv != "" && cv != "standard" {
		return usage.Errorf("--cv %q: want loso, logo or lofo with corpus files, or no value (the standard splits)", cv)
	}
	switch o.Method {
	case "lm", "bfgs", "nelder-mead":
	default:
		return usage.Errorf("--method %q: want lm, bfgs or nelder-mead", o.Method)
	}
	if o.Starts <= 0 {
		return usage.Errorf("--starts %d: must be a positive integer", o.Starts)
	}
	if o.MaxIter < 0 || o.MaxIter > 1_000_000 {
		return usage.Errorf("--max-iter %d: want a positive number of iterations per start (or 0: the method's)", o.MaxIter)
	}
	if o.Workers < 0 || o.Workers > 1<<16 {
		return usage.Errorf("--workers %d: want a positive number of parallel simulations (or 0: all CPUs)", o.Workers)
	}
	var err error
	if o.Weights, err = ParseWeights(o.WeightsText); err != nil {
		return usage.Errorf("--weights: %v", err)
	}
	if o.TrainFilter, err = ParseFilter(o.Train); err != nil {
		return usage.Errorf("--train: %v", err)
	}
	if o.KVTokens < 0 {
		return usage.Errorf("--kv-tokens %d: must be a positive token count", o.KVTokens)
	}
	return nil
}

// CheckSources checks the measurements against the flags: results vllm bench result files (0:
// a matrix), benchCmds --vllm-bench commands, benchUsed whether a --vllm-bench flag was given.
func (o *Options) CheckSources(cv string, multi bool, results, benchCmds int, benchUsed bool) error {
	switch {
	case results == 0 && benchUsed:
		return usage.Errorf("--vllm-bench, --special-tokens and --chars-per-token apply to vllm bench serve result files given with --measured")
	case results > 0 && (o.Train != "" || cv == "standard"):
		return usage.Errorf("--train and --cv select cells of a measured matrix; with vllm bench result files every file trains the fit")
	case benchCmds > 1 && benchCmds != results:
		return usage.Errorf("--vllm-bench given %d times for %d result files: give it once for all, or once per file", benchCmds, results)
	case len(o.Measured) > 1 && results == 0:
		return usage.Errorf("--measured given %d times: a fit takes one measured matrix (or several vllm bench result files)", len(o.Measured))
	case !multi:
		return nil
	case o.Train != "" || len(o.Free) > 0 || o.KVTokens > 0:
		return usage.Errorf("--train, --free and --kv-tokens apply to a fit to one matrix or to result files, not to a multi-source fit")
	case o.Out != "" && cv != "":
		return usage.Errorf("--out writes the parameters of one fit; --cv %s runs one fit per fold (run the fit without --cv to write its parameters)", cv)
	case o.MaxJobs < 0 || o.MaxRequests < 0:
		return usage.Errorf("--max-jobs and --max-requests: want >= 0")
	}
	return nil
}

// FreeIDs are the --free parameters.
func (o *Options) FreeIDs() ([]param.ID, error) {
	var ids []param.ID
	for _, n := range o.Free {
		id, ok := param.ByName(strings.TrimSpace(n))
		if !ok {
			return nil, usage.Errorf("--free: unknown parameter %q (known: %s)", n, strings.Join(param.Names(), ", "))
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Exclusion is the cells the fit leaves out: --exclude when given (changed), else the scenario's
// [fit] exclude (scenarioExclude); errors name where the filter came from (what: "" for the
// flag's or the scenario's name).
func (o *Options) Exclusion(changed bool, scenarioExclude []string, what string) ([]Filter, error) {
	excl, src := scenarioExclude, "scenario [fit] exclude"
	if changed {
		excl, src = o.Exclude, "--exclude"
	}
	if what != "" {
		src = what
	}
	f, err := ParseExclude(excl)
	if err != nil {
		return nil, usage.Errorf("%s: %v", src, err)
	}
	return f, nil
}

// Settings are the search's settings (progress: the status line, nil for none).
func (o *Options) Settings(progress func(Progress)) *Settings {
	w := o.Weights
	return &Settings{Method: o.Method, Starts: o.Starts, MaxIter: o.MaxIter, Workers: o.Workers, Seed: o.FitSeed, Weights: &w, Progress: progress}
}
