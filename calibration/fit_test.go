package calibration

import (
	"fmt"
	"math"
	"testing"

	"github.com/servesim/servesim/bench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
)

func TestTransformRoundTrip(t *testing.T) {
	for _, d := range param.Defs() {
		for _, v := range []float64{d.Lo, d.Prior, d.Hi, (d.Lo + d.Hi) / 2} {
			u := toU(&d, v)
			got := fromU(&d, u)
			// The logit clamps t to [1e-9, 1-1e-9], so values at a bound come back within 1e-6
			// of the range.
			if math.Abs(got-v) > 1e-6*(d.Hi-d.Lo) {
				t.Errorf("%s: fromU(toU(%v)) = %v", d.Name, v, got)
			}
		}
		// Every u maps inside the bounds.
		for _, u := range []float64{-1e3, -5, 0, 5, 1e3} {
			if v := fromU(&d, u); v < d.Lo || v > d.Hi {
				t.Errorf("%s: fromU(%v) = %v outside [%v, %v]", d.Name, u, v, d.Lo, d.Hi)
			}
		}
	}
}

// smallProblem is the seed deployment with a reduced protocol (two contexts, two
// concurrencies), cheap enough to fit in a test.
func smallProblem(t testing.TB) (*Problem, *sim.Server) {
	fail := func(err error) {
		if t == nil {
			panic(err)
		}
		t.Fatal(err)
	}
	s := scenario.Default()
	r, err := s.Resolve(scenario.ResolveOptions{Uncalibrated: true})
	if err != nil {
		fail(err)
	}
	proto := s.Protocol
	proto.Contexts = []string{"8K", "64K"}
	proto.PrefillOnly = nil
	proto.Concurrency = []int{1, 8}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		fail(err)
	}
	return &Problem{Deployment: r.Deployment, Protocol: &proto, Base: param.Priors(), Seed: 3}, srv
}

// TestFitRecoversKnownParameters makes "measurements" with the simulator at known parameter
// values and checks the fit finds them again from the priors: the objective, transforms and
// optimiser work together, and these two parameters are identifiable from these cells.
func TestFitRecoversKnownParameters(t *testing.T) {
	prob, _ := smallProblem(t)
	truth := param.Priors()
	truth[param.MemBWEff] = 0.68
	truth[param.AcceptP1] = 0.86
	srv, err := sim.NewServer(prob.Deployment, truth)
	if err != nil {
		t.Fatal(err)
	}
	res, err := bench.RunMatrix(srv, prob.Protocol, bench.Options{Seed: prob.Seed})
	if err != nil {
		t.Fatal(err)
	}
	prob.Measured = res.Matrix
	prob.Free = []param.ID{param.MemBWEff, param.AcceptP1}
	// Maximum likelihood (no pull toward the priors), so the truth is the optimum.
	w := DefaultWeights()
	w.Prior = 0
	fit, err := Fit(prob, &Settings{Starts: 1, Seed: 1, Weights: &w})
	if err != nil {
		t.Fatal(err)
	}
	// Same simulator and seed: the optimum is the truth up to the acceptance draws' response to
	// the parameters; 2 % is far tighter than the 18 % and 15 % the priors start from.
	for _, id := range prob.Free {
		got, want := fit.Params[id], truth[id]
		if math.Abs(got-want) > 0.02*want {
			t.Errorf("%s = %.4f, want %.4f (prior %.4f)", id.Def().Name, got, want, id.Def().Prior)
		}
	}
	if fit.Report.Train.DecodeTotalMAPE > 2 {
		t.Errorf("in-sample decode MAPE %.2f%% on self-generated data, want < 2%%", fit.Report.Train.DecodeTotalMAPE)
	}
	if fit.Report.Parameters["mem_bw_eff"].StdErr <= 0 {
		t.Errorf("mem_bw_eff has no standard error")
	}
}

func TestFitErrors(t *testing.T) {
	prob, srv := smallProblem(t)
	res, err := bench.RunMatrix(srv, prob.Protocol, bench.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	prob.Measured = res.Matrix
	prob.Train, _ = ParseFilter("concurrency>1000")
	if _, err := Fit(prob, nil); err != ErrNoTrainingCells {
		t.Errorf("empty training set: err = %v, want ErrNoTrainingCells", err)
	}
	prob.Train = Filter{}
	prob.Free = make([]param.ID, MaxFree+1)
	if _, err := Fit(prob, nil); err == nil {
		t.Errorf("%d free parameters: want an error", MaxFree+1)
	}
	prob.Free = []param.ID{param.MemBWEff}
	if _, err := Fit(prob, &Settings{Method: "simplex-ish"}); err == nil {
		t.Error("unknown method: want an error")
	}
}

// TestShippedCalibrationReproduces refits the seed exactly as `servesim fit` does and compares
// with the embedded calibrated parameters, so the shipped file cannot be edited by hand.
func TestShippedCalibrationReproduces(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("full seed refit (about 20 s on 2 cores) skipped under -race and -short")
	}
	var shipped *scenario.ParamsFile
	for _, f := range scenario.BuiltinCalibrations() {
		if f.Calibration.Model == "glm-5.3-flash" {
			shipped = f
		}
	}
	if shipped == nil {
		t.Fatal("no shipped calibration for glm-5.3-flash")
	}
	s := scenario.Default()
	r, err := s.Resolve(scenario.ResolveOptions{Uncalibrated: true})
	if err != nil {
		t.Fatal(err)
	}
	meas, err := matrix.LoadBytes(scenario.SeedMeasured(), "seed")
	if err != nil {
		t.Fatal(err)
	}
	prob := &Problem{Deployment: r.Deployment, Protocol: &s.Protocol, Measured: meas, Base: r.Params, Seed: s.Seed}
	w := DefaultWeights()
	res, err := Fit(prob, &Settings{Method: "lm", Seed: 1, Weights: &w}) // the CLI defaults (4 starts)
	if err != nil {
		t.Fatal(err)
	}
	want := shipped.Values()
	for i, d := range param.Defs() {
		// The fit is deterministic; the file keeps 6 significant digits.
		if math.Abs(res.Params[i]-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
			t.Errorf("%s: refit %.6g, shipped %.6g: regenerate data/calibrated_seed.toml with `servesim fit --uncalibrated --out scenario/data/calibrated_seed.toml`",
				d.Name, res.Params[i], want[i])
		}
	}
	// The in-sample acceptance figures of the shipped calibration.
	e := res.Report.Train
	if e.StatusMatched != 64 || e.StatusCells != 64 {
		t.Errorf("statuses %d/%d, want 64/64", e.StatusMatched, e.StatusCells)
	}
	if e.DecodeTotalMAPE > 5 || e.DecodePerRequestMAPE > 6 || e.TBTMAPE > 6 || e.TTFTMdAPE > 20 {
		t.Errorf("in-sample errors above the targets: %+v", e)
	}
}

func ExampleFit() {
	prob, srv := smallProblem(nil)
	// Measurements made at a known acceptance rate; the fit starts from the prior (0.75).
	truth := param.Priors()
	truth[param.AcceptP1] = 0.85
	srv, _ = sim.NewServer(prob.Deployment, truth)
	res, _ := bench.RunMatrix(srv, prob.Protocol, bench.Options{Seed: prob.Seed})
	prob.Measured = res.Matrix
	prob.Free = []param.ID{param.AcceptP1}
	w := DefaultWeights()
	w.Prior = 0 // maximum likelihood: no pull toward the prior
	fit, err := Fit(prob, &Settings{Starts: 1, Seed: 1, Weights: &w})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("accept_p1 = %.2f; statuses %d/%d\n", fit.Params[param.AcceptP1], fit.Report.Train.StatusMatched, fit.Report.Train.StatusCells)
	// Output: accept_p1 = 0.85; statuses 4/4
}

// TestFitIndependentOfWorkers: the same problem and seed give identical parameters whether the
// simulations run on one goroutine or several.
func TestFitIndependentOfWorkers(t *testing.T) {
	prob, srv := smallProblem(t)
	res, err := bench.RunMatrix(srv, prob.Protocol, bench.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	prob.Measured = res.Matrix
	prob.Free = []param.ID{param.MemBWEff, param.AcceptP1, param.FrontendMSPerReq}
	var got []param.Values
	for _, w := range []int{1, 3} {
		fit, err := Fit(prob, &Settings{Starts: 2, MaxIter: 3, Seed: 9, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fit.Params)
	}
	if got[0] != got[1] {
		t.Fatalf("1 worker: %v\n3 workers: %v", got[0], got[1])
	}
}
