package validate

import (
	"fmt"
	"strings"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scenario"
)

// Args are the validate command's own flags: the rows to score (--source, --filter), the
// simulations at once (--workers), and the parameters and seed of the scenario flags.
type Args struct {
	Sources      []string
	Filter       string
	Workers      int
	Params       string
	Uncalibrated bool
	Seed         uint64
	SeedSet      bool
	StepByStep   bool
}

// Prepare checks the flags and reads what the arguments (files) give: the corpus rows (the
// shipped corpus without arguments), the vllm bench result files among them, and the run's
// options. given are the other flags given: flags that describe a server or a benchmark apply
// only to result files (corpus rows carry their own server and workload).
func (a *Args) Prepare(files, given []string) ([]Row, []string, Options, error) {
	if a.Workers < 0 {
		return nil, nil, Options{}, usage.Errorf("--workers %d: must be >= 0", a.Workers)
	}
	flt, err := ParseFilter(a.Filter)
	if err != nil {
		return nil, nil, Options{}, usage.Errorf("--filter: %v", err)
	}
	if a.Params != "" && a.Uncalibrated {
		return nil, nil, Options{}, usage.Errorf("--params and --uncalibrated contradict each other")
	}
	pol, err := scenario.NewParamsPolicy(scenario.ResolveOptions{ParamsFile: a.Params, Uncalibrated: a.Uncalibrated}, nil)
	if err != nil {
		return nil, nil, Options{}, err
	}
	var results, csvs []string
	for _, p := range files {
		if strings.EqualFold(strings.TrimSpace(p[max(0, len(p)-5):]), ".json") {
			results = append(results, p)
		} else {
			csvs = append(csvs, p)
		}
	}
	var rows []Row
	if len(files) == 0 || len(csvs) > 0 {
		if rows, err = SelectRows(csvs, flt, a.Sources); err != nil {
			return nil, nil, Options{}, err
		}
	}
	if len(results) == 0 {
		for _, name := range given {
			switch name {
			case "params", "uncalibrated", "seed", "step-by-step", "workers", "filter", "source", "format", "out", "quiet", "help":
				continue
			}
			return nil, nil, Options{}, usage.Errorf("--%s applies only to vllm bench result files (.json), which do not record the server; corpus rows carry their own: leave it out", name)
		}
	}
	opt := Options{Workers: a.Workers, StepByStep: a.StepByStep,
		Params: func(d *deploy.Deployment) (param.Values, string, error) {
			c, err := pol.Choose(d)
			if err != nil {
				return param.Values{}, "", err
			}
			return c.Params, fmt.Sprintf("%s (%s)", c.From, c.Source), nil
		},
		Provenance: func(d *deploy.Deployment) param.Summary {
			c, _ := pol.Choose(d)
			return c.Summary
		}}
	if a.SeedSet {
		opt.Seed = a.Seed
	}
	return rows, results, opt, nil
}

// ResultsSelected reports whether --source keeps the result files' rows.
func (a *Args) ResultsSelected() bool {
	return len(a.Sources) == 0 || SourceSelected(a.Sources, ResultSource)
}
