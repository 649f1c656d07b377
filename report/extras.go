package report

import (
	"bytes"
	"fmt"

	"github.com/servesim/servesim/calibration"
	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/planner"
	"github.com/servesim/servesim/workload"
)

// Extras are what the report command adds to the scenario's figures: a fit report
// (--fit-report), a workload run (--workload with --rate, --requests and the --slo-* objectives)
// and a plan (--plan). Load reads them before the simulation; AddTo adds them to its input.
type Extras struct {
	FitPath, Workload, PlanPath string
	Overrides                   workload.Overrides
	SLO                         workload.SLOArgs

	fit  *calibration.Report
	spec *workload.Spec
	plan *planner.Plan
}

// Load reads the files the flags name; changed reports whether a flag was given.
func (x *Extras) Load(changed func(string) bool) error {
	var err error
	if x.FitPath != "" {
		if x.fit, err = LoadFit(x.FitPath); err != nil {
			return fmt.Errorf("--fit-report: %w", err)
		}
	}
	if x.Workload != "" {
		if x.spec, err = workload.LoadArg("--workload", x.Workload); err != nil {
			return err
		}
		if err := x.Overrides.Apply(changed, x.spec); err != nil {
			return err
		}
		if err := x.SLO.Apply(changed, &x.spec.SLO); err != nil {
			return err
		}
	} else if x.Overrides.Used(changed) {
		return usage.Errorf("--rate and --requests change a --workload (file or preset)")
	}
	if x.PlanPath != "" {
		data, err := fsutil.ReadFile(x.PlanPath, fsutil.MaxPlanBytes)
		if err != nil {
			return fmt.Errorf("--plan: %w", err)
		}
		if x.plan, err = planner.ReadJSON(bytes.NewReader(data), x.PlanPath); err != nil {
			return fmt.Errorf("--plan: %w", err)
		}
	}
	return nil
}

// AddTo adds the fit, the workload's run (stepByStep: the reference mode) and the plan to in.
func (x *Extras) AddTo(in *Input, stepByStep bool) error {
	in.Fit, in.FitName = x.fit, x.FitPath
	if x.spec != nil {
		if err := in.AddWorkload(x.spec, stepByStep); err != nil {
			return err
		}
	}
	if x.plan != nil {
		return in.AddPlan(x.plan, x.PlanPath)
	}
	return nil
}
