package sim

import (
	"testing"

	"github.com/servesim/servesim/vtime"
)

// TestAsyncSchedulingLag: with async scheduling, a request that arrives while a step runs is not
// in the next step (scheduled when the running one started) but in the one after; one that
// reaches an idle engine starts at once. The engines share one cost model, so async changes
// nothing but the admission: on a busy engine the newcomer's first token comes exactly one step
// later (the running request has one more token by then); on an idle one, at the same time.
func TestAsyncSchedulingLag(t *testing.T) {
	srv := smallServer(t, 1.3, 16, 2048, 0)
	type result struct {
		first      vtime.Time // B's first token
		aTokens    int        // A's tokens when B got its first
		arrive     vtime.Time
		stepAtSend int64
	}
	run := func(async, stepByStep, busy bool) result {
		e := New(Config{Scheduler: srv.SchedulerConfig(), Layout: srv.Layout, Cost: srv.Cost,
			StepByStep: stepByStep, AsyncScheduling: async})
		var r result
		var a, b *Record
		e.Hooks.OnTokens = func(e *Engine, rec *Record, n int, done bool) {
			if rec == b && rec.FirstToken == e.Now() && rec.Tokens == n {
				e.Sync(a)
				r.first, r.aTokens = e.Now(), a.Tokens
			}
		}
		if busy {
			a = e.Submit(RequestSpec{PromptTokens: 200, MaxTokens: 400, PromptID: 1})
		}
		// Send B well inside A's decoding, at a time that is not a step boundary.
		if err := e.RunUntil(vtime.Time(50*vtime.Millisecond + 12345)); err != nil {
			t.Fatal(err)
		}
		if busy {
			e.Sync(a)
		}
		if busy && a.Tokens < 2 {
			t.Fatalf("A has %d tokens at B's send: not decoding yet", a.Tokens)
		}
		r.stepAtSend = e.Steps
		b = e.Submit(RequestSpec{PromptTokens: 300, MaxTokens: 5, PromptID: 2})
		if !busy {
			a = b
		}
		if err := e.RunUntilIdle(); err != nil {
			t.Fatal(err)
		}
		if b.FirstToken < 0 || !b.Finished {
			t.Fatalf("B did not finish: %+v", b)
		}
		r.arrive = b.Arrive
		if !busy {
			r.first = b.FirstToken
		}
		return r
	}
	for _, sbs := range []bool{true, false} {
		off, on := run(false, sbs, true), run(true, sbs, true)
		if off.arrive != on.arrive {
			t.Fatalf("step by step %v: arrivals differ: %v vs %v", sbs, off.arrive, on.arrive)
		}
		if on.aTokens != off.aTokens+1 {
			t.Errorf("step by step %v, busy engine: A had %d tokens at B's first with async, %d without: want one more step", sbs, on.aTokens, off.aTokens)
		}
		if on.first <= off.first {
			t.Errorf("step by step %v, busy engine: B's first token at %v with async, %v without: want later", sbs, on.first, off.first)
		}
		idleOff, idleOn := run(false, sbs, false), run(true, sbs, false)
		if idleOff.first != idleOn.first || idleOn.first < 0 {
			t.Errorf("step by step %v, idle engine: B's first token at %v with async, %v without: want equal", sbs, idleOn.first, idleOff.first)
		}
		t.Logf("step by step %v: busy TTFT %v (async) vs %v; idle %v vs %v", sbs, on.first.Sub(on.arrive), off.first.Sub(off.arrive), idleOn.first.Sub(idleOn.arrive), idleOff.first.Sub(idleOff.arrive))
	}
}
