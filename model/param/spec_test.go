package param

import (
	"math"
	"testing"
)

// TestSpecPriorsMeanLength checks that each method's prior gives the mean acceptance length of
// the public figure it is named after (SpecPriors). Tolerances: 0.01 tokens where the prior is set
// by bisection to a figure (EAGLE-3's 3.5 at k = 6), 0.02 in acceptance where it is read off a
// log-linear fit (Leviathan et al.'s three LaMDA drafters).
func TestSpecPriorsMeanLength(t *testing.T) {
	mean := func(method string, k int) float64 {
		p, ok := SpecPriorFor(method)
		if !ok {
			t.Fatalf("no prior for %s", method)
		}
		return MeanLengthOf(ConditionalCDF(p.First, p.Decay, k))
	}
	for _, c := range []struct {
		method string
		k      int
		lo, hi float64
		why    string
	}{
		// DeepSeek-V3: the MTP token is accepted 85-90 % of the time: 1.85..1.90 tokens per step.
		{"mtp", 1, 1.85, 1.90, "DeepSeek-V3 report, 85-90 % acceptance of the MTP token"},
		// EAGLE-3 on Llama-3.1-8B: about 3-4 tokens per step at k = 5..7.
		{"eagle3", 5, 3.0, 4.0, "EAGLE-3, k = 5"},
		{"eagle3", 6, 3.49, 3.51, "EAGLE-3, k = 6 (the prior's anchor, 3.5)"},
		{"eagle3", 7, 3.0, 4.0, "EAGLE-3, k = 7"},
		// EAGLE (ICML 2024): first-position acceptance about 0.75 on MT-bench, then falling
		// slowly (decay 0.92): k = 1 gives 1.75 tokens per step.
		{"eagle", 1, 1.749, 1.751, "EAGLE, first-position acceptance 0.75"},
		{"eagle", 4, 2.5, 3.2, "EAGLE, chain of 4"},
		// ngram on chat: low, about 1.5.
		{"ngram", 3, 1.4, 1.7, "prompt lookup on chat (Spec-Bench)"},
		{"ngram", 5, 1.4, 1.7, "prompt lookup on chat, more drafts do not help"},
	} {
		if got := mean(c.method, c.k); got < c.lo || got > c.hi {
			t.Errorf("%s k = %d: mean acceptance length %.3f, want in [%.2f, %.2f] (%s)", c.method, c.k, got, c.lo, c.hi, c.why)
		}
	}
	// Leviathan et al., table 3 (LaMDA 137B, dialog): drafters of 100M, 2B and 8B accept 0.57,
	// 0.71 and 0.75 per token.
	for _, c := range []struct{ ratio, alpha float64 }{{0.1 / 137, 0.57}, {2.0 / 137, 0.71}, {8.0 / 137, 0.75}} {
		if got := DraftModelAcceptance(c.ratio); math.Abs(got-c.alpha) > 0.02 {
			t.Errorf("draft model of %.4g x the target: acceptance %.3f, want %.2f within 0.02", c.ratio, got, c.alpha)
		}
	}
	// A constant per-token acceptance alpha gives (1 - alpha^(k+1)) / (1 - alpha) tokens per step
	// (Leviathan et al., equation 1).
	a := DraftModelAcceptance(8.0 / 137)
	if got, want := MeanLengthOf(ConditionalCDF(a, 1, 4)), (1-math.Pow(a, 5))/(1-a); math.Abs(got-want) > 1e-12 {
		t.Errorf("draft model k = 4: mean length %v, want %v", got, want)
	}
	for _, p := range SpecPriors() {
		if p.Source == "" || p.Decay <= 0 || p.Decay > 1 || p.First < 0 || p.First > 1 {
			t.Errorf("prior %+v: want a source, decay in (0, 1], first in [0, 1]", p)
		}
	}
}

// TestFirstAcceptanceAt checks the bisection: the mean length it is asked for comes back.
func TestFirstAcceptanceAt(t *testing.T) {
	for _, c := range []struct {
		tau, decay float64
		k          int
	}{{1.85, 0.8, 1}, {2.4, 0.9, 3}, {3.5, 0.92, 6}, {4, 1, 5}} {
		f := FirstAcceptanceAt(c.tau, c.decay, c.k)
		if got := MeanLengthOf(ConditionalCDF(f, c.decay, c.k)); math.Abs(got-c.tau) > 1e-9 {
			t.Errorf("tau %v, decay %v, k %d: first %v gives %v", c.tau, c.decay, c.k, f, got)
		}
	}
}
