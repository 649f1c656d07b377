package scenario

import (
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/deploy"
)

// CheckMeasured checks a measured matrix against the resolved scenario: every cell one its
// protocol runs (protocol.Protocol.CheckMeasured), every value consistent with the cell's own
// numbers and within what the deployment can physically do (matrix.Matrix.Plausible with
// deploy.Deployment.Ceiling).
func (r *Resolved) CheckMeasured(m *matrix.Matrix) error {
	if err := r.Scenario.Protocol.CheckMeasured(m, r.Deployment.Engine.MaxModelLen); err != nil {
		return err
	}
	c := r.Deployment.Ceiling()
	return m.Plausible(matrix.Limits{ForwardS: c.ForwardS, TokensPerStep: c.TokensPerStep, OutputTokS: c.OutputTokS,
		Margin: deploy.PlausibleMargin, Why: c.Why})
}
