package report

import (
	"fmt"

	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scenario"
)

// howSure is the report's line on how sure its predictions are: the parameters' provenance by
// group (param.Summary) and the 80 % intervals' factors for throughput, per-user speed and TTFT.
func howSure(r *scenario.Resolved) kv {
	s := &r.Summary
	f := func(m param.Metric) float64 { return s.Interval80(m, 1).Factor() }
	return kv{"How sure", fmt.Sprintf("80 %% intervals: throughput ×/÷ %.2f, per-user speed and time between tokens ×/÷ %.2f, time to first token ×/÷ %.2f (wider the less the parameters rest on measurements; 'servesim validate' checks their coverage). Parameters %s",
		f(param.MetricThroughput), f(param.MetricTPOT), f(param.MetricTTFT), s.Line())}
}
