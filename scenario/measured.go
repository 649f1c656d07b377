package scenario

import (
	"fmt"

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

// LoadMeasured reads a command's --measured matrix: the file at path, the embedded seed matrix
// when path is "" and the scenario is the seed (seed), nothing for "none" or when there is none
// (nil, ""). The matrix is checked against r (CheckMeasured); the name says where it came from.
func (r *Resolved) LoadMeasured(path string, seed bool) (*matrix.Matrix, string, error) {
	var m *matrix.Matrix
	var err error
	name := path
	switch {
	case path == "none":
	case path != "":
		m, err = matrix.Load(path)
	case seed:
		name = SeedMeasuredName
		m, err = matrix.LoadBytes(SeedMeasured(), name)
	}
	if err == nil && m != nil {
		err = r.CheckMeasured(m)
	}
	if err != nil {
		return nil, "", fmt.Errorf("--measured: %w", err)
	}
	if m == nil {
		name = ""
	}
	return m, name, nil
}
