package planner

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestSpaceRefusals: sweep lists the planner refuses are *SpaceError (the caller's usage error):
// a value out of range, a --tp list that divides none of the GPU counts (which swept nothing and
// said nothing). A count no listed TP divides, beside one that has rows, is noted.
func TestSpaceRefusals(t *testing.T) {
	r := seedResolved(t)
	base := Space{Counts: []int{4}, TP: []int{4}, EP: []bool{true}, MaxNumSeqs: []int{32}, MaxNumBatchedTokens: []int{8192},
		KVCacheDTypes: []string{"fp8"}, SpecTokens: []int{0}, GPUMemoryUtilization: []float64{0.92}, Weights: []string{"native"}}
	for _, c := range []struct {
		name string
		edit func(*Space)
		want string
	}{
		{"tp 3 on 4 GPUs", func(s *Space) { s.TP = []int{3} }, "tp [3] divides none of the GPU counts [4]"},
		{"max-num-seqs 0", func(s *Space) { s.MaxNumSeqs = []int{0} }, "max-num-seqs 0"},
		{"utilization 2", func(s *Space) { s.GPUMemoryUtilization = []float64{2} }, "gpu-memory-utilization 2"},
	} {
		sp := base
		c.edit(&sp)
		_, err := Run(question(t, r, "8K", 2, 2, gpus(t, "RTX-PRO-6000-Server"), sp), Options{})
		var se *SpaceError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a *SpaceError naming %q", c.name, err, c.want)
		}
	}
	sp := base
	sp.Counts, sp.TP = []int{3, 4}, []int{4}
	p := mustRun(t, question(t, r, "8K", 2, 2, gpus(t, "RTX-PRO-6000-Server"), sp), Options{})
	if !strings.Contains(strings.Join(p.Notes, "\n"), "GPU count(s) 3: no tp in [4] divides them") {
		t.Errorf("count 3 with tp 4: notes %q, want one saying count 3 has no row", p.Notes)
	}
}

// TestBatchBelowSeqsPruned: a row whose max-num-batched-tokens is below its max-num-seqs is one
// vLLM refuses to start: pruned at the engine stage with the reason, not simulated; the other rows
// run, and the plan reads back (its checks accept the pruned row).
func TestBatchBelowSeqsPruned(t *testing.T) {
	r := seedResolved(t)
	sp := Space{Counts: []int{4}, TP: []int{4}, EP: []bool{true}, MaxNumSeqs: []int{32, 1024}, MaxNumBatchedTokens: []int{512, 8192},
		KVCacheDTypes: []string{"fp8"}, SpecTokens: []int{0}, GPUMemoryUtilization: []float64{0.92}, Weights: []string{"native"}}
	p := mustRun(t, question(t, r, "8K", 2, 2, gpus(t, "RTX-PRO-6000-Server"), sp), Options{})
	pruned := 0
	for _, row := range p.Results {
		c := row.Config
		refused := c.MaxNumBatchedTokens < c.MaxNumSeqs
		if refused != (row.Stage == StageEngine) {
			t.Errorf("row %d (mbt %d, mns %d): status %s, stage %q: %s", row.Index, c.MaxNumBatchedTokens, c.MaxNumSeqs, row.Status, row.Stage, row.Reason)
		}
		if refused {
			pruned++
			if row.Perf != nil || !strings.Contains(row.Reason, "max_num_batched_tokens = 512 is below max_num_seqs = 1024") {
				t.Errorf("row %d: reason %q, perf %v; want vLLM's refusal and no simulation", row.Index, row.Reason, row.Perf)
			}
		}
	}
	if pruned != 1 || len(p.Results) != 4 {
		t.Errorf("%d rows, %d pruned; want 4 rows, 1 pruned (512 tokens, 1024 sequences)", len(p.Results), pruned)
	}
	if _, err := ReadJSON(bytes.NewReader(planJSON(t, p)), "p.json"); err != nil {
		t.Errorf("the plan reads back: %v", err)
	}
}
