package workload

import (
	"testing"

	"github.com/servesim/servesim/model/param"
)

// TestIntervals80Arrivals: an open loop that keeps up gets no throughput interval (its arrivals
// set its throughput), an overloaded one and a closed loop do; a metric without a value gets none.
func TestIntervals80Arrivals(t *testing.T) {
	names := func(m *Metrics) map[string]bool {
		out := map[string]bool{}
		for _, iv := range m.Intervals80(&param.Summary{}) {
			out[iv.Name] = true
		}
		return out
	}
	base := Metrics{OutputTokS: 500, TPOT: Dist{P50: 8}, TTFT: Dist{P50: 40}, E2E: Dist{P50: 2000}, UserTokS: 125}
	open := base
	open.Kind = KindOpen
	if n := names(&open); n["output_tok_s"] || !n["tpot_ms_p50"] || !n["user_tok_s"] {
		t.Errorf("open loop keeping up: %v", n)
	}
	open.Overload = &Overload{}
	if n := names(&open); !n["output_tok_s"] {
		t.Errorf("open loop overloaded: %v, want a throughput interval", n)
	}
	closed := base
	closed.Kind = KindClosed
	closed.TTFT.P50 = 0
	if n := names(&closed); !n["output_tok_s"] || n["ttft_ms_p50"] {
		t.Errorf("closed loop without TTFT: %v", n)
	}
}
