package sim

import (
	"reflect"
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

// TestNextWake: while a step runs, NextWake is the step's end, not the arrivals queued before it;
// an engine run from wake to wake gives what one run event by event gives (every record's times,
// the steps, the events), arrivals while busy included; and an idle engine wakes at its next
// arrival.
func TestNextWake(t *testing.T) {
	srv := smallServer(t, 1.3, 16, 2048, 0)
	run := func(byWake bool) ([]*Record, *Engine) {
		e := srv.NewEngine(3)
		if e.NextWake() != vtime.Never {
			t.Fatalf("idle engine: NextWake %v, want Never", e.NextWake())
		}
		var recs []*Record
		sent := 0
		submit := func() {
			recs = append(recs, e.Submit(RequestSpec{PromptTokens: 200 + 37*sent, MaxTokens: 3 + sent%9, PromptID: uint64(sent + 1)}))
			sent++
		}
		// Requests every 4 ms for 200 ms: many reach the engine while a step runs.
		for at := vtime.Time(0); sent < 50; at = at.Add(4 * vtime.Millisecond) {
			next := e.NextEvent()
			if byWake {
				next = e.NextWake()
				if e.Busy() && next < e.NextEvent() {
					t.Fatalf("busy: NextWake %v before the next event %v", next, e.NextEvent())
				}
			}
			for next <= at {
				if err := e.RunUntil(next); err != nil {
					t.Fatal(err)
				}
				next = e.NextEvent()
				if byWake {
					next = e.NextWake()
				}
			}
			if err := e.RunUntil(at); err != nil {
				t.Fatal(err)
			}
			if !e.Busy() && e.NextWake() != e.NextEvent() {
				t.Fatalf("idle: NextWake %v, NextEvent %v", e.NextWake(), e.NextEvent())
			}
			submit()
		}
		if err := e.RunUntilIdle(); err != nil {
			t.Fatal(err)
		}
		return recs, e
	}
	byEvent, e1 := run(false)
	byWake, e2 := run(true)
	if e1.Events() != e2.Events() || e1.Steps != e2.Steps {
		t.Errorf("events %d / %d, steps %d / %d: want equal", e1.Events(), e2.Events(), e1.Steps, e2.Steps)
	}
	for i := range byEvent {
		a, b := *byEvent[i], *byWake[i]
		a.req, b.req = nil, nil
		if a.Arrive != b.Arrive || a.Admitted != b.Admitted || a.FirstToken != b.FirstToken || a.End != b.End || a.Tokens != b.Tokens {
			t.Errorf("request %d: by event %+v, by wake %+v", i, a, b)
		}
	}
}

// TestForeseeRefusesCancel: a request cancelled while the engine foresees its finishes stops the
// run with an error (a caller routing by the foreseen count would no longer see what happens).
func TestForeseeRefusesCancel(t *testing.T) {
	srv := smallServer(t, 1.3, 16, 2048, 0)
	e := srv.NewEngine(1)
	if err := e.Foresee(); err != nil {
		t.Fatal(err)
	}
	if f := e.StepFloor(); f <= 0 {
		t.Fatalf("step floor %v", f)
	}
	rec := e.Submit(RequestSpec{PromptTokens: 100, MaxTokens: 50, PromptID: 1})
	if err := e.RunUntil(vtime.Time(20 * vtime.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if at, n := e.Finishing(); !e.Busy() || at != e.NextWake() || n != 0 {
		t.Fatalf("decoding: Finishing %v, %d, busy %v; want the step's end, 0", at, n, e.Busy())
	}
	e.Cancel(rec)
	if err := e.RunUntilIdle(); err == nil {
		t.Error("cancel while foreseeing: no error")
	}
	spec := smallServer(t, 1.3, 16, 2048, 2).NewEngine(1)
	if err := spec.Foresee(); err == nil {
		t.Error("Foresee with speculative decoding: no error")
	}
}

// TestRecycle: a record given back is reused by the next Submit, reset as a new one (every field
// as a fresh record's: the first request's times, tokens and chunks are gone); a live record is
// refused.
func TestRecycle(t *testing.T) {
	srv := smallServer(t, 1.3, 16, 2048, 0)
	e := srv.NewEngine(1)
	e.KeepChunks = true
	first := e.Submit(RequestSpec{PromptTokens: 100, MaxTokens: 4, PromptID: 1})
	if err := e.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	if !first.Finished || first.Tokens != 4 || len(first.Chunks) == 0 {
		t.Fatalf("first request: finished %v, %d tokens, %d chunks", first.Finished, first.Tokens, len(first.Chunks))
	}
	e.Recycle(first)
	second := e.Submit(RequestSpec{PromptTokens: 50, MaxTokens: 2, PromptID: 2})
	if second != first {
		t.Fatal("Submit after Recycle: a new record, want the one given back")
	}
	fresh := Record{ID: second.ID, Spec: second.Spec, Send: e.Now(), Arrive: -1, Admitted: -1, FirstToken: -1, LastToken: -1, End: -1}
	got := *second
	got.req = nil
	if !reflect.DeepEqual(got, fresh) {
		t.Errorf("reused record %+v, want %+v", got, fresh)
	}
	if err := e.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	if !second.Finished || second.Tokens != 2 {
		t.Errorf("second request: finished %v, %d tokens", second.Finished, second.Tokens)
	}
	live := e.Submit(RequestSpec{PromptTokens: 50, MaxTokens: 2, PromptID: 3})
	defer func() {
		if recover() == nil {
			t.Error("Recycle of a live record: no panic")
		}
	}()
	e.Recycle(live)
}
