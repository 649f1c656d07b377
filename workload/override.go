package workload

import (
	"fmt"
	"math"

	"github.com/servesim/servesim/internal/numfmt"
)

// Override changes an open loop's arrival rate (rate > 0 when setRate) and an open or closed
// loop's request count (when setRequests): "chat at 10 req/s". The name records the change; an
// error names the --rate or --requests flag and says why the workload does not take it.
func (s *Spec) Override(rate float64, setRate bool, requests int, setRequests bool) error {
	if setRate {
		switch {
		case !(rate > 0) || math.IsInf(rate, 0):
			return fmt.Errorf("--rate %v: want a positive number of requests per second", rate)
		case s.Kind != KindOpen:
			return fmt.Errorf("--rate: workload %q is a %s workload: --rate sets an open loop's arrival rate", s.Name, s.Kind)
		case len(s.Open.Ramp) > 0:
			return fmt.Errorf("--rate: workload %q ramps its rate: edit its ramp instead", s.Name)
		}
		s.Open.RatePerS = rate
		s.Name += fmt.Sprintf(" at %g req/s", rate)
	}
	if setRequests {
		if requests < 1 {
			return fmt.Errorf("--requests %d: want a positive number of requests", requests)
		}
		switch s.Kind {
		case KindOpen:
			s.Open.Requests = requests
		case KindClosed:
			s.Closed.Requests = requests
		default:
			return fmt.Errorf("--requests: workload %q is a %s workload: --requests sets an open or closed loop's request count", s.Name, s.Kind)
		}
		s.Name += fmt.Sprintf(", %s requests", numfmt.Commas(fmt.Sprint(requests)))
	}
	return nil
}
