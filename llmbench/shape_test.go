package llmbench_test

import (
	"sync"
	"testing"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
)

var (
	priorOnce sync.Once
	priorRes  *llmbench.Result
	priorErr  error
)

// priorRun simulates the seed with the physical priors only: no fitting to the seed.
func priorRun(t *testing.T) *matrix.Matrix {
	t.Helper()
	priorOnce.Do(func() {
		s := scenario.Default()
		r, err := s.Resolve(scenario.ResolveOptions{Uncalibrated: true})
		if err != nil {
			priorErr = err
			return
		}
		srv, err := sim.NewServer(r.Deployment, r.Params)
		if err != nil {
			priorErr = err
			return
		}
		priorRes, priorErr = llmbench.RunMatrix(srv, &s.Protocol, llmbench.Options{Seed: s.Seed})
	})
	if priorErr != nil {
		t.Fatal(priorErr)
	}
	return priorRes.Matrix
}

func cell(t *testing.T, m *matrix.Matrix, phase matrix.Phase, ctx string, c int) *matrix.Cell {
	t.Helper()
	x, ok := m.Find(matrix.Key{Phase: phase, Context: ctx, Concurrency: c})
	if !ok {
		t.Fatalf("no cell %s %s x %d", phase, ctx, c)
	}
	return x
}

// The shapes of the seed, predicted from priors alone. Each bound is the acceptance band
// around the measured ratio.
func TestPriorShapes(t *testing.T) {
	m := priorRun(t)
	meas := seedMeasured(t)
	ratio := func(m *matrix.Matrix, f func(*matrix.Matrix) float64) float64 { return f(m) }

	prefill := func(m *matrix.Matrix) float64 {
		return cell(t, m, matrix.Prefill, "1019K", 1).TotalTokS / cell(t, m, matrix.Prefill, "64K", 1).TotalTokS
	}
	if got := ratio(m, prefill); got < 0.60 || got > 0.85 {
		t.Errorf("prefill tok/s 1019K / 64K = %.3f, want in [0.60, 0.85] (measured %.3f)", got, prefill(meas))
	}

	flat := func(m *matrix.Matrix) float64 {
		return cell(t, m, matrix.Decode, "1019K", 1).TotalTokS / cell(t, m, matrix.Decode, "8K", 1).TotalTokS
	}
	if got := ratio(m, flat); got < 0.75 || got > 1.25 {
		t.Errorf("C=1 decode 1019K / 8K = %.3f, want within 25%% of 1 (measured %.3f: sparse attention keeps it flat)", got, flat(meas))
	}

	fall := func(m *matrix.Matrix) float64 {
		return cell(t, m, matrix.Decode, "8K", 1).PerRequestTokS / cell(t, m, matrix.Decode, "8K", 32).PerRequestTokS
	}
	if got := ratio(m, fall); got < 3.5 || got > 6 {
		t.Errorf("per-request tok/s at 8K falls C=1 -> C=32 by %.2fx, want in [3.5, 6] (measured %.2f)", got, fall(meas))
	}

	queued := func(m *matrix.Matrix) float64 {
		return 1 - cell(t, m, matrix.Decode, "8K", 64).TotalTokS/cell(t, m, matrix.Decode, "8K", 32).TotalTokS
	}
	// The queued cells measure the same 32 running requests as C = 32, later in their outputs (the
	// window starts at the tool's 60 s timeout). With the priors acceptance does not change along
	// an output (accept_late_ratio 1), so only the longer KV separates them: within 3 %. The seed's
	// 8.8 % is the fitted late acceptance (README, Known discrepancies).
	if got := ratio(m, queued); got < -0.03 || got > 0.03 {
		t.Errorf("total tok/s at 8K: C=64 is %.1f%% below C=32 with priors, want within 3%% (the seed: %.1f%%, fitted)", 100*got, 100*queued(meas))
	}
}

// TestPriorAccuracy holds the uncalibrated model to an error budget against the seed. The priors
// are the GPU generation's (Blackwell PCIe: published figures and the Hopper kernel profiles,
// nothing from the seed) and the generic engine and model ones, so the budget is wider than the
// 20 % the seed-derived priors of earlier versions met: 25 % for total and 30 % for per-request
// decode throughput (the C = 1 column is about 35 % slow: fixed kernel time, 0.8 of GDDR7's
// bandwidth and uniform-ish routing priors against the seed's fitted 0.88 and 0.45).
func TestPriorAccuracy(t *testing.T) {
	cmp := matrix.Compare(priorRun(t), seedMeasured(t))
	if cmp.Summary.StatusMatched != 64 {
		t.Errorf("statuses %d/64 match with priors", cmp.Summary.StatusMatched)
	}
	limits := map[matrix.Column]float64{matrix.DecodeTotalTokS: 25, matrix.DecodePerRequestTokS: 30, matrix.PrefillTokS: 15}
	for _, s := range cmp.Summary.Columns {
		if lim, ok := limits[s.Column]; ok && !(s.MAPEPct <= lim) {
			t.Errorf("%s MAPE %.1f%% with priors, want <= %.0f%%", s.Column, s.MAPEPct, lim)
		}
	}
}
