package scheduler

import (
	"github.com/servesim/servesim/model/param"
	"math/rand/v2"
	"testing"
)

// TestAcceptanceAlongOutput: a request draws its accepted drafts against the opening rates before
// Accept.OpenEnd output tokens, against the late rates from Accept.Switch on, and against Accept.Rates
// between. Rates of 1 and 0 make every draw certain, so each segment shows as all or nothing.
func TestAcceptanceAlongOutput(t *testing.T) {
	const k = 3
	s := &Scheduler{cfg: Config{SpecTokens: k,
		Accept: param.SpecAcceptance{
			Rates:   []float64{1, 1, 0}, // exactly 2 accepted in the middle
			Opening: []float64{1, 1, 1}, OpenEnd: 100,
			Late: []float64{0, 0, 0}, Switch: 2000,
		},
	}, rng: rand.New(rand.NewPCG(1, 2))}
	for _, c := range []struct{ output, want int }{{0, 3}, {99, 3}, {100, 2}, {1999, 2}, {2000, 0}, {5000, 0}} {
		for range 20 {
			if got := s.sampleAccepted(k, c.output); got != c.want {
				t.Fatalf("output %d: %d accepted, want %d", c.output, got, c.want)
			}
		}
	}
	// Without the opening's rates the first tokens draw against AcceptCDF.
	s.cfg.Accept.Opening = nil
	if got := s.sampleAccepted(k, 0); got != 2 {
		t.Errorf("no opening rates, output 0: %d accepted, want 2", got)
	}
}
