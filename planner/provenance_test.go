package planner

import (
	"bytes"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/workload"
)

// llamaH100MI300X asks about Llama-3.1-8B on one H100 or MI300X under a small closed loop,
// from the seed scenario's parameter policy (provenance-tagged intervals).
func llamaH100MI300X(t *testing.T) *Question {
	r := seedResolved(t)
	ms, err := ModelsFor(r.Deployment, "../model/hf/testdata/llama-3.1-8b", "")
	if err != nil {
		t.Fatal(err)
	}
	w := &workload.Spec{Name: "fixed", Kind: workload.KindClosed, Closed: workload.Closed{Requests: 32, Concurrency: 4},
		Lengths: workload.Lengths{InputTokens: 1000, OutputTokens: 200}}
	q := ScenarioQuestion(r, ms, w, gpus(t, "H100", "MI300X"),
		Space{Counts: []int{1}, MaxNumSeqs: []int{16}, MaxNumBatchedTokens: []int{4096}, KVCacheDTypes: []string{"auto"},
			SpecTokens: []int{0}, GPUMemoryUtilization: []float64{0.9}})
	q.Engine.Version = ""
	return q
}

// TestPlanProvenance: a plan of Llama-3.1-8B over H100 and MI300X gives every simulated row its
// provenance and intervals from it; H100 rows rest on the Hopper priors (measured data: Vidur),
// MI300X rows on priors for a family no measured data supports, and the table says so; the
// seed's own configuration on its GPU is calibrated with narrower intervals.
func TestPlanProvenance(t *testing.T) {
	p := mustRun(t, llamaH100MI300X(t), Options{})
	seen := map[string]bool{}
	for _, row := range p.Results {
		if row.Perf == nil {
			continue
		}
		if row.Provenance == nil || len(row.Intervals) != 4 {
			t.Fatalf("row %d: provenance %v, intervals %v", row.Index, row.Provenance, row.Intervals)
		}
		gpu := row.Config.GPU
		seen[gpu] = true
		switch {
		case strings.HasPrefix(gpu, "MI300X"):
			if !row.Provenance.Unsupported || row.SourceLabel() != "PRIORS ONLY" {
				t.Errorf("MI300X row: %+v, want priors only for an unsupported family", row.Provenance)
			}
		default:
			if row.Provenance.Unsupported || row.Provenance.Class != param.ClassPrior {
				t.Errorf("%s row: %+v, want Hopper priors (supported by Vidur's profiles)", gpu, row.Provenance)
			}
		}
	}
	if len(seen) != 2 {
		t.Fatalf("rows simulated on %v, want H100 and MI300X", seen)
	}
	var buf bytes.Buffer
	if err := p.WriteTable(&buf, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "PRIORS ONLY: no measured data supports CDNA") {
		t.Errorf("table without the unsupported-family note:\n%s", buf.String())
	}
}
