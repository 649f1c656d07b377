package workload

import (
	"math"

	"github.com/servesim/servesim/model/param"
)

// Intervals80 are a run's 80 % intervals given its parameters' provenance: output tok/s (not
// for an open loop or trace that keeps up: the arrivals set its throughput, and whether it keeps
// up is the question Overload answers), TPOT, TTFT and E2E at the median, and the per-user tok/s.
// A metric without a positive finite value gets none.
func (m *Metrics) Intervals80(s *param.Summary) []param.NamedInterval {
	var out []param.NamedInterval
	arrivals := (m.Kind == KindOpen || m.Kind == KindTrace) && m.Overload == nil
	for _, x := range []struct {
		name string
		m    param.Metric
		v    float64
	}{{"output_tok_s", param.MetricThroughput, m.OutputTokS}, {"tpot_ms_p50", param.MetricTPOT, m.TPOT.P50},
		{"ttft_ms_p50", param.MetricTTFT, m.TTFT.P50}, {"e2e_ms_p50", param.MetricE2E, m.E2E.P50}, {"user_tok_s", param.MetricTPOT, m.UserTokS}} {
		if math.IsNaN(x.v) || math.IsInf(x.v, 0) || x.v <= 0 || (arrivals && x.m == param.MetricThroughput) {
			continue
		}
		out = append(out, param.NamedInterval{Name: x.name, Interval: s.Interval80(x.m, x.v)})
	}
	return out
}
