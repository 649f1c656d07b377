package calibration

import (
	"math"

	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/model/priors"
)

// objectiveAt evaluates Fit's objective at the parameter set p with the given free parameters:
// the weighted training residuals plus the pull of each free parameter toward its prior, summed
// in squares. It also returns how many residuals carry information (are non-zero), which is the
// count paramStdErr uses for the residual variance. It mirrors the resid closure in Fit;
// TestShippedCalibrationReproduces checks that it gives Fit's reported loss at Fit's optimum.
func objectiveAt(prob *Problem, w Weights, free []param.ID, p param.Values) (loss float64, informative int) {
	ev := newEvaluator(prob, w, 0)
	vc := &vector{base: prob.Base, free: free}
	prior, _ := priors.Of(prob.Deployment)
	uPrior := vc.toU(prior)
	outs := ev.simulate([]param.Values{p})
	r := ev.residuals(&outs[0])
	for j, u := range vc.toU(p) {
		r = append(r, w.Prior*(u-uPrior[j]))
	}
	for _, v := range r {
		if v != 0 {
			informative++
		}
	}
	return sumSq(r), informative
}

// shippedCheck is one finding of compareShipped.
type shippedCheck struct {
	name string
	msg  string
}

// compareShipped compares a refit with the shipped parameter set, in the fit's own units of
// uncertainty (see TestShippedCalibrationReproduces for why):
//
//   - a fitted parameter may differ by at most a quarter of its standard error (by 1e-3 of its
//     range when the fit could not estimate one);
//   - a parameter the fit does not move must equal the refit's value (the prior) to 1e-9;
//   - the objective at the shipped values may exceed the refit's by at most s^2/16, where
//     s^2 = loss / (informative residuals - free parameters) is the residual variance.
//
// It returns one finding per violation.
func compareShipped(res *Result, shipped param.Values, lossShipped float64, informative int) []shippedCheck {
	var out []shippedCheck
	for i, d := range param.Defs() {
		pe := res.Report.Parameters[d.Name]
		got, want := res.Params[i], shipped[i]
		if !pe.Fitted {
			if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				out = append(out, shippedCheck{d.Name, "not fitted: the shipped value is not the prior the fit keeps"})
			}
			continue
		}
		tol, unit := pe.StdErr/4, "SE/4"
		if !(pe.StdErr > 0) {
			tol, unit = 1e-3*(d.Hi-d.Lo), "1e-3 of the range (no standard error)"
		}
		if math.Abs(got-want) > tol {
			out = append(out, shippedCheck{d.Name, "differs from the refit by more than " + unit})
		}
	}
	n := len(res.Free)
	if informative > n {
		s2 := res.Report.Loss / float64(informative-n)
		if lossShipped > res.Report.Loss+s2/16 {
			out = append(out, shippedCheck{"loss", "the shipped values fit the seed worse than the refit by more than s^2/16"})
		}
	}
	return out
}
