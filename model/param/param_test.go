package param

import (
	"math"
	"testing"
)

func TestAcceptance(t *testing.T) {
	p := Priors()
	p[AcceptP1], p[AcceptDecay] = 0.8, 1
	// Constant p: tau = (1 - p^(k+1)) / (1 - p) (a geometric series).
	k := 7
	want := (1 - math.Pow(0.8, float64(k+1))) / (1 - 0.8)
	if got := p.MeanEmitted(k); math.Abs(got-want) > 1e-12 {
		t.Errorf("tau = %v, want %v", got, want)
	}
	cdf := p.AcceptanceCDF(3)
	if math.Abs(cdf[2]-0.512) > 1e-12 {
		t.Errorf("P(accepted >= 3) = %v, want 0.512", cdf[2])
	}
}

// TestDefs checks that the definitions are in ID order, that priors lie within the bounds, and
// that Defs hands out a copy: changing it leaves the parameters alone.
func TestDefs(t *testing.T) {
	defs := Defs()
	if len(defs) != int(Count) {
		t.Fatalf("%d definitions, want %d", len(defs), Count)
	}
	for i, d := range defs {
		if d.ID != ID(i) || d.ID.Def() != d {
			t.Errorf("definition %d has ID %d", i, d.ID)
		}
		if !(d.Lo <= d.Prior && d.Prior <= d.Hi) {
			t.Errorf("%s: prior %v outside [%v, %v]", d.Name, d.Prior, d.Lo, d.Hi)
		}
		if id, ok := ByName(d.Name); !ok || id != d.ID {
			t.Errorf("ByName(%q) = %d, %v", d.Name, id, ok)
		}
	}
	defs[MemBWEff].Prior = 0.1
	if got := MemBWEff.Def().Prior; got == 0.1 {
		t.Errorf("changing the slice Defs returned changed the prior of mem_bw_eff")
	}
}
