package validate

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vllmbench"
)

// CheckResult refuses a vllm bench result file measured on another model or server than the
// resolved scenario's (vllmbench.Result.CheckServer), as a usage error that says what to give, and one
// whose values the deployment cannot physically give (vllmbench.Result.CheckPhysics).
func CheckResult(r *scenario.Resolved, res *vllmbench.Result) error {
	names := []string{r.Scenario.Model.Name, r.Deployment.Model.Name, r.Deployment.Engine.ServedModel}
	if r.Scenario.Model.File != "" {
		names = append(names, path.Dir(strings.ReplaceAll(r.Scenario.Model.File, "\\", "/")))
	}
	err := res.CheckServer(names, &r.Deployment.Engine)
	var mm *vllmbench.ModelMismatch
	switch {
	case err == nil:
		return res.CheckPhysics(r.Deployment.Ceiling())
	case errors.As(err, &mm):
		return usage.Errorf("%v, but the scenario serves %q (%s): give the server that ran it (--vllm-cmd \"vllm serve %s ...\" --gpu NAME, or --config)",
			err, r.Scenario.Model.Name, r.Deployment.Model.Name, mm.Measured)
	}
	return usage.Errorf("%v: give the server that ran it (--vllm-cmd \"vllm serve ...\", or --config)", err)
}

// PrepareResults reads vllm bench serve result files and builds each one's server with load from
// the scenario arguments a: the embedded seed without them (for the seed's model), the file's
// model_id served with vLLM's defaults when only --gpu is given. The workload and the seed are
// those of 'simulate --measured' (vllmbench.Flags.ResultWorkload), so both predict the same
// numbers; a file measured on another model or server is refused (CheckResult).
func PrepareResults(paths []string, a scenario.Args, bf *vllmbench.Flags, load func(*scenario.Args) (*scenario.Resolved, *sim.Server, error)) ([]*Prepared, error) {
	if err := bf.Check(); err != nil {
		return nil, err
	}
	if err := bf.ForFiles(len(paths)); err != nil {
		return nil, err
	}
	var out []*Prepared
	for i, p := range paths {
		res, err := vllmbench.ReadResult(p)
		if err != nil {
			return nil, err
		}
		spec, _, notes, err := bf.ResultWorkload(res, i)
		if err != nil {
			return nil, err
		}
		f := a
		if f.Config == "" && f.VLLMCmd == "" && f.GPU != "" {
			if res.ModelID == "" {
				return nil, fmt.Errorf("%s: no model_id: give --vllm-cmd", p)
			}
			f.VLLMWords = []string{"vllm", "serve", res.ModelID}
		}
		r, srv, err := load(&f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if err := CheckResult(r, res); err != nil {
			if a.Config == "" && a.VLLMCmd == "" && a.GPU == "" {
				return nil, usage.Errorf("%s: measured model %q, not the embedded seed scenario's %q: a vllm bench result file records the model, not the server: give --gpu NAME (and --vllm-cmd \"vllm serve %s ...\", or --config)", p, res.ModelID, r.Scenario.Model.Name, res.ModelID)
			}
			return nil, err
		}
		pr := PrepareResult(res, spec, notes, srv, fmt.Sprintf("%s (%s)", r.ParamsFrom, r.Source))
		pr.Summary = &r.Summary
		pr.Seed = r.Scenario.Seed
		out = append(out, pr)
	}
	return out, nil
}
