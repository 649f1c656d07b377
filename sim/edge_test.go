package sim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/cost"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
)

// Engine edge cases found by adversarial review, fixed in the engine: each test
// reproduces the bug it was written for.

func seedServer(t *testing.T) *sim.Server {
	t.Helper()
	r, err := scenario.Default().Resolve(scenario.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestEdgeRequestAtMaxModelLenFinishes: a request whose prompt plus output is within 2 tokens
// of max-model-len (here exactly 1,048,576 = 1,048,000 + 576) must finish. With DFlash k = 7 (the
// seed; any k >= 3) the scheduler cannot fit its 1 + k verify tokens (k lookahead slots) near the
// end of the context: the request stops a few tokens short and never finishes (the engine goes
// idle with it unfinished, or, in a run with a client, idles to its 30-day guard). The scheduler
// cut every entry shorter than its 1 + k tokens at an aligned block (the hybrid align mode), which
// for a verify entry capped by max_model_len is 0 tokens; vLLM aligns only prompt chunks, and caps
// the verified tokens at max_model_len - 1 - computed.
func TestEdgeRequestAtMaxModelLenFinishes(t *testing.T) {

	srv := seedServer(t)
	mml := srv.Deployment.Engine.MaxModelLen
	if k := srv.Deployment.Engine.SpecTokens(); k < 3 {
		t.Fatalf("the seed's speculative k = %d; the bug needs k >= 3", k)
	}
	for i, slack := range []int{0, 1, 2, 0} {
		srv.StepByStep = i == 3 // the reference mode too
		e := srv.NewEngine(1)
		rec := e.Submit(sim.RequestSpec{PromptTokens: 1_048_000 - slack, MaxTokens: mml - 1_048_000})
		err := e.RunUntilIdle()
		if err != nil || !rec.Finished || rec.Tokens != mml-1_048_000 {
			t.Errorf("prompt %d + output %d (max-model-len %d): finished %v with %d tokens at %v, err %v",
				1_048_000-slack, mml-1_048_000, mml, rec.Finished, rec.Tokens, e.Now(), err)
		}
	}
}

// slowCost is the seed's cost model with every step (not the API server) 1e10 s long: what a
// GPU with 1 B/s of memory bandwidth (tens of GB read per step) would give. The GPU catalog now
// refuses such a GPU, so the step is made long here directly.
type slowCost struct{ sim.StepCoster }

func (c slowCost) Step(s *cost.StepShape) cost.StepCost {
	sc := c.StepCoster.Step(s)
	sc.TotalSeconds = 1e10 // above 2^63 ns = 9.2e9 s
	return sc
}

// TestEdgeHugeStepDoesNotWrap: a step longer than 2^63 ns must not wrap: vtime.FromSeconds
// converts 1e19 ns to a negative int64, the engine clamps it to 1 ns, and the run reports TPOT
// 0.00 ms (seen with a GPU of 1 B/s bandwidth). Either the step saturates (and the run stops at
// its guard with an error) or it is refused; it must never come out fast. The engine refuses it:
// the run stops with ErrLimit, naming the step and its binding term.
func TestEdgeHugeStepDoesNotWrap(t *testing.T) {

	srv := seedServer(t)
	e := sim.New(sim.Config{Scheduler: srv.SchedulerConfig(), Layout: srv.Layout,
		EagleDrop: srv.Deployment.Engine.Speculative.EagleFamily(), Cost: slowCost{srv.Cost}, Seed: 1})
	rec := e.Submit(sim.RequestSpec{PromptTokens: 128, MaxTokens: 8})
	err := e.RunUntilIdle()
	if err == nil && rec.Finished {
		tpot := rec.LastToken.Sub(rec.FirstToken).Seconds() / float64(rec.Tokens-1)
		if tpot < 1e9 {
			t.Errorf("steps of 1e10 s: finished at %v with TPOT %.3g s", e.Now(), tpot)
		}
	}
	if !errors.Is(err, sim.ErrLimit) || !strings.Contains(err.Error(), "step 1 ") || !strings.Contains(err.Error(), "lasts 1e+10 s") {
		t.Errorf("steps of 1e10 s: err = %v, want ErrLimit naming step 1 and its 1e+10 s", err)
	}
	if got := vtime.FromSeconds(1e10); got != vtime.MaxDuration {
		t.Errorf("FromSeconds(1e10) = %d, want MaxDuration (saturated)", got)
	}
	if got := vtime.Time(5).Add(vtime.MaxDuration); got != vtime.Never {
		t.Errorf("Add past the clock's range = %d, want Never", got)
	}
}
