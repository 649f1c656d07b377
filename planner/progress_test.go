package planner

import (
	"sync"
	"testing"
)

// TestProgressCountsMatchPlan: the progress of each kind of simulation ends on the count the plan
// reports (Search.Screens, Search.Full): the pilots count too (the screens' progress stopped 2 short
// of the final count, 2,734 against 2,736).
func TestProgressCountsMatchPlan(t *testing.T) {
	q := qwenChat(t, 10, 1, "L40S", "H100-SXM")
	var mu sync.Mutex
	last := map[string]Progress{}
	p, err := Run(q, Options{Workers: 2, Progress: func(g Progress) {
		mu.Lock()
		defer mu.Unlock()
		if g.Done > g.Total {
			t.Errorf("%s: done %d > total %d", g.Stage, g.Done, g.Total)
		}
		if g.Done >= last[g.Stage].Done {
			last[g.Stage] = g
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Search
	if s == nil || s.Exhaustive {
		t.Fatalf("want a fast search: %+v", s)
	}
	if g := last["screen"]; g.Done != s.Screens || g.Total != s.Screens {
		t.Errorf("screens: progress ended at %d/%d, the plan says %d", g.Done, g.Total, s.Screens)
	}
	if g, ok := last["full"]; ok && g.Done != s.Full {
		t.Errorf("full runs: progress ended at %d, the plan says %d", g.Done, s.Full)
	}
}

// TestPilotsRunPerWorker: the estimate's pilots run as the sweep does, one simulation per worker
// at once (they ran one at a time, so the estimate missed the workers' contention and the
// machine's load: about 2x low under load).
func TestPilotsRunPerWorker(t *testing.T) {
	q := qwenChat(t, 10, 1, "L40S", "H100-SXM")
	var mu sync.Mutex
	first := -1
	if _, err := Run(q, Options{Workers: 3, Progress: func(g Progress) {
		mu.Lock()
		defer mu.Unlock()
		if g.Stage == "pilot" && first < 0 {
			first = g.Total
		}
	}}); err != nil {
		t.Fatal(err)
	}
	if first != 3 {
		t.Errorf("the first pilot batch holds %d simulations, want one per worker (3)", first)
	}
}
