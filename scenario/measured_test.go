package scenario

import (
	"strings"
	"testing"

	"github.com/servesim/servesim/matrix"
)

// TestCheckMeasuredSeed: the seed's measured matrix is plausible for the seed's deployment (its
// physical limits computed, not given), and a cell one hundred times faster than the weights can
// be read is not.
func TestCheckMeasuredSeed(t *testing.T) {
	r, err := Default().Resolve(ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := matrix.LoadBytes(SeedMeasured(), SeedMeasuredName)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CheckMeasured(m); err != nil {
		t.Fatalf("the seed's own measurements: %v", err)
	}
	c := r.Deployment.Ceiling()
	if c.ForwardS <= 0 || c.TokensPerStep != 8 || c.OutputTokS <= 0 {
		t.Fatalf("seed ceiling %+v: want a positive forward pass, 8 tokens per step (DFlash k = 7), a positive output limit", c)
	}
	i := 0
	for ; m.Decode[i].Status != matrix.Valid; i++ {
	}
	m.Decode[i].TTFTms = c.ForwardS * 1e3 / 100
	if err := r.CheckMeasured(m); err == nil || !strings.Contains(err.Error(), "ttft_ms") || !strings.Contains(err.Error(), "forward pass") {
		t.Errorf("TTFT %g ms: %v, want ttft_ms below one forward pass", m.Decode[i].TTFTms, err)
	}
}
