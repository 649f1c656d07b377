package report

import (
	"bytes"
	"fmt"

	"github.com/servesim/servesim/planner"
	"github.com/servesim/servesim/plots"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/workload"
)

// AddWorkload runs a workload on the report's deployment (its resolved parameters and seed;
// every engine step request by request with stepByStep) and adds the run and its section: the
// workload's table and its figures.
func (in *Input) AddWorkload(spec *workload.Spec, stepByStep bool) error {
	srv, err := sim.NewServer(in.Resolved.Deployment, in.Resolved.Params)
	if err != nil {
		return err
	}
	srv.StepByStep = stepByStep
	m, err := workload.Run(srv, spec, workload.Options{Seed: in.Resolved.Scenario.Seed})
	if err != nil {
		return fmt.Errorf("--workload: %w", err)
	}
	var tb bytes.Buffer
	if err := workload.WriteTable(&tb, m); err != nil {
		return err
	}
	subject := Subject(in.Resolved)
	if spec.Name != "" {
		subject += ", " + spec.Name
	}
	in.Workload = &WorkloadRun{Spec: spec, Metrics: m}
	in.Sections = append(in.Sections, Section{ID: "workload", Title: "Workload", Note: "servesim simulate: " + spec.Describe() + ".",
		Text: tb.String(), Charts: plots.WorkloadCharts(m, subject)})
	return nil
}

// AddPlan adds a saved plan (read from name) and its section: the best configuration of each
// hardware layout, ranked, and the plan's figures.
func (in *Input) AddPlan(p *planner.Plan, name string) error {
	in.Plan = p
	var tb bytes.Buffer
	if err := p.WriteTable(&tb, planner.TableOptions{Top: 15}); err != nil {
		return err
	}
	in.Sections = append(in.Sections, Section{ID: "plan", Title: "Plan", Note: "servesim plan (" + name + "): the best configuration of each hardware layout, ranked.",
		Text: tb.String(), Charts: p.Charts()})
	return nil
}
