package param

import (
	"math"
	"testing"
)

func TestAcceptance(t *testing.T) {
	p := Priors()
	// Constant p = 0.8: tau = (1 - p^(k+1)) / (1 - p) (a geometric series) with k = 7.
	k := 7
	tau := (1 - math.Pow(0.8, float64(k+1))) / (1 - 0.8)
	p[AcceptTau], p[AcceptDecay] = tau, 1
	// Bisection to 2^-60: p1 and everything from it exact to rounding (1e-12 is generous).
	if got := FirstAcceptance(tau, 1); math.Abs(got-0.8) > 1e-12 {
		t.Errorf("FirstAcceptance(%v, 1) = %v, want 0.8", tau, got)
	}
	if got := p.MeanEmitted(k); math.Abs(got-tau) > 1e-12 {
		t.Errorf("tau = %v, want %v", got, tau)
	}
	cdf := p.AcceptanceCDF(3)
	if math.Abs(cdf[2]-0.512) > 1e-12 {
		t.Errorf("P(accepted >= 3) = %v, want 0.512", cdf[2])
	}
	// The prior: 2.45 tokens per step with 7 drafts, whatever the decay.
	for _, decay := range []float64{0.6, 0.9, 1} {
		p := Priors()
		p[AcceptDecay] = decay
		if got := p.MeanEmitted(ReferenceDrafts); math.Abs(got-2.45) > 1e-9 {
			t.Errorf("decay %v: tau = %v, want the prior 2.45", decay, got)
		}
	}
	// Late in an output accept_late_ratio x accept_tau, in its opening accept_open_ratio x accept_tau.
	p = Priors()
	p[AcceptLateRatio], p[AcceptOpenRatio] = 0.9, 1.12
	if late := MeanLengthOf(p.LateAcceptanceCDF(ReferenceDrafts)); math.Abs(late-0.9*2.45) > 1e-9 {
		t.Errorf("late tau = %v, want 0.9 x 2.45", late)
	}
	if open := MeanLengthOf(p.OpeningAcceptanceCDF(ReferenceDrafts)); math.Abs(open-1.12*2.45) > 1e-9 {
		t.Errorf("opening tau = %v, want 1.12 x 2.45", open)
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
		if d.Level != LevelGPU && d.Level != LevelEngine && d.Level != LevelModel && d.Level != LevelWorkload {
			t.Errorf("%s: level %q, want gpu, engine, model or workload", d.Name, d.Level)
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
