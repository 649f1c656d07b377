package validate

import (
	"errors"
	"path"
	"strings"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/scenario"
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
