package sim

import (
	"testing"

	"github.com/servesim/servesim/vtime"
)

// TestNextEvent: NextEvent names the time of the event the engine processes next (an arrival after
// the API server, then each step's end), and Never once nothing is queued; running to it delivers
// exactly what running to any time before it would not. A caller pacing the engine to a clock
// relies on this to sleep until the next thing happens.
func TestNextEvent(t *testing.T) {
	srv := smallServer(t, 1.3, 16, 2048, 0)
	srv.StepByStep = true // every delivery is reported
	e := srv.NewEngine(1)
	if got := e.NextEvent(); got != vtime.Never {
		t.Fatalf("idle engine: NextEvent %v, want Never", got)
	}
	delivered := 0
	e.Hooks.OnTokens = func(_ *Engine, _ *Record, n int, _ bool) { delivered += n }
	rec := e.Submit(RequestSpec{PromptTokens: 300, MaxTokens: 5, PromptID: 1})
	arrive := e.NextEvent()
	if arrive < 0 || arrive == vtime.Never {
		t.Fatalf("after Submit: NextEvent %v, want the arrival after the API server", arrive)
	}
	steps := 0
	for e.NextEvent() != vtime.Never {
		next := e.NextEvent()
		if next < e.Now() {
			t.Fatalf("NextEvent %v before now %v", next, e.Now())
		}
		before := delivered
		if err := e.RunUntil(next - 1); err != nil {
			t.Fatal(err)
		}
		if delivered != before || e.NextEvent() != next {
			t.Fatalf("running to just before the next event (%v) changed the engine: %d tokens, next %v", next, delivered-before, e.NextEvent())
		}
		if err := e.RunUntil(next); err != nil {
			t.Fatal(err)
		}
		steps++
	}
	if !rec.Finished || delivered != 5 || rec.Arrive != arrive {
		t.Errorf("finished %v, %d tokens delivered, arrival %v (NextEvent said %v); want finished, 5, equal", rec.Finished, delivered, rec.Arrive, arrive)
	}
	if steps < 6 {
		t.Errorf("%d events for an arrival, a prefill and 4 decode steps", steps)
	}
}

// TestEngineConfig: NewEngine is New of EngineConfig, so a caller that changes the limits keeps
// everything else the server sets.
func TestEngineConfig(t *testing.T) {
	srv := smallServer(t, 1.3, 16, 2048, 2)
	cfg := srv.EngineConfig(7)
	if cfg.Seed != 7 || cfg.Layout != srv.Layout || cfg.Scheduler.SpecTokens != 2 || cfg.MaxEvents != 0 {
		t.Errorf("EngineConfig(7): seed %d, layout shared %v, spec tokens %d, max events %d", cfg.Seed, cfg.Layout == srv.Layout, cfg.Scheduler.SpecTokens, cfg.MaxEvents)
	}
	run := func(e *Engine) []vtime.Time {
		var at []vtime.Time
		e.Hooks.OnTokens = func(e *Engine, _ *Record, _ int, _ bool) { at = append(at, e.Now()) }
		e.Submit(RequestSpec{PromptTokens: 500, MaxTokens: 40, PromptID: 1})
		if err := e.RunUntilIdle(); err != nil {
			t.Fatal(err)
		}
		return at
	}
	cfg.MaxSimTime = vtime.Never - 1
	a, b := run(srv.NewEngine(7)), run(New(cfg))
	if len(a) != len(b) {
		t.Fatalf("NewEngine delivered %d times, New(EngineConfig) %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("delivery %d at %v and %v", i, a[i], b[i])
		}
	}
}
