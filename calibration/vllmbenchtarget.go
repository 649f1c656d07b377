package calibration

import (
	"math"

	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vllmbench"
	"github.com/servesim/servesim/workload"
)

// VLLMBenchRun is a `vllm bench serve --save-result` file as a fit target: the workload recovered from
// it (vllmbench.Result.Workload, or built from the run's command) is simulated and compared with
// the file, row by row as vllmbench.Compare lines them up. Fitted: output throughput, mean and
// median TTFT and TPOT, mean ITL (the rows whose vllmbench.Row.Fit is positive).
type VLLMBenchRun struct {
	Result *vllmbench.Result
	// Spec is the workload to simulate; its dataset must be loaded (LoadDataset) before fitting.
	Spec *workload.Spec
}

// Name is the result file.
func (b *VLLMBenchRun) Name() string { return b.Result.Name }

func observations(c *vllmbench.Comparison, predicted bool) []Observation {
	out := make([]Observation, len(c.Rows))
	for i, r := range c.Rows {
		out[i] = Observation{Metric: r.Key, Class: string(r.Class), Weight: r.Fit, Predicted: r.Predicted, Measured: r.Measured}
		if !predicted {
			out[i].Predicted = math.NaN()
		}
	}
	return out
}

// Measured lists the file's metrics.
func (b *VLLMBenchRun) Measured() []Observation {
	return observations(vllmbench.Compare(&workload.Metrics{}, b.Result), false)
}

// Observe simulates the workload on srv.
func (b *VLLMBenchRun) Observe(srv *sim.Server, seed uint64) ([]Observation, error) {
	m, err := workload.Run(srv, b.Spec, workload.Options{Seed: seed})
	if err != nil {
		return nil, err
	}
	return observations(vllmbench.Compare(m, b.Result), true), nil
}
