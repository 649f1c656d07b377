package main

import (
	"errors"
	"path"
	"strings"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/vllmbench"
	"github.com/servesim/servesim/workload"
)

// resultWorkload is the one mapping of a vllm bench serve result file to a simulated run, shared
// by simulate --measured, validate, fit, plot and report: the workload recovered from the file
// (with the i-th --vllm-bench command for its dataset), the command and the notes on what was
// assumed. The run is seeded with the scenario's seed (--seed) wherever it is simulated.
func resultWorkload(res *vllmbench.Result, bf *vllmBenchFlags, fs *pflag.FlagSet, i int) (*workload.Spec, *vllmbench.Command, []string, error) {
	cmd, err := bf.command(i)
	if err != nil {
		return nil, nil, nil, err
	}
	o := bf.options(fs)
	spec, notes, err := res.Workload(vllmbench.RecoverOptions{Command: cmd, SpecialTokens: o.SpecialTokens, CharsPerToken: o.CharsPerToken})
	if err != nil {
		return nil, nil, nil, err
	}
	return spec, cmd, notes, nil
}

// checkResult refuses a result file measured on another model or server than the scenario's
// (vllmbench.Result.CheckServer), as a usage error that says what to give, and one whose values
// the deployment cannot physically give (vllmbench.Result.CheckPhysics).
func checkResult(res *vllmbench.Result, r *scenario.Resolved) error {
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
