package calibration

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/model/priors"
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

// measureAt sets prob's measured matrix to the simulator's at the parameter values truth (the
// "measurements" of the self-consistency tests).
func measureAt(t *testing.T, prob *Problem, truth param.Values) {
	t.Helper()
	srv, err := sim.NewServer(prob.Deployment, truth)
	if err != nil {
		t.Fatal(err)
	}
	res, err := llmbench.RunMatrix(srv, prob.Protocol, llmbench.Options{Seed: prob.Seed})
	if err != nil {
		t.Fatal(err)
	}
	prob.Measured = res.Matrix
}

// TestFitRecoversKnownParameters makes "measurements" with the simulator at known parameter
// values and checks the fit finds them again from the priors: the objective, transforms and
// optimiser work together, and these two parameters are identifiable from these cells.
func TestFitRecoversKnownParameters(t *testing.T) {
	prob, _ := smallProblem(t)
	truth := param.Priors()
	truth[param.MemBWEff] = 0.68
	truth[param.AcceptTau] = 2.65
	measureAt(t, prob, truth)
	prob.Free = []param.ID{param.MemBWEff, param.AcceptTau}
	// Maximum likelihood (no pull toward the priors), so the truth is the optimum.
	w := DefaultWeights()
	w.Prior = 0
	fit, err := Fit(prob, &Settings{Starts: 1, Seed: 1, Weights: &w})
	if err != nil {
		t.Fatal(err)
	}
	// Same simulator and seed: the optimum is the truth up to the acceptance draws' response to
	// the parameters; 2 % is far tighter than the 15 % and 8 % the priors start from.
	for _, id := range prob.Free {
		got, want := fit.Params[id], truth[id]
		if math.Abs(got-want) > 0.02*want {
			t.Errorf("%s = %.4f, want %.4f (prior %.4f)", id.Def().Name, got, want, id.Def().Prior)
		}
	}
	if fit.Report.Train.DecodeTotalMAPE > 2 {
		t.Errorf("in-sample decode MAPE %.2f%% on self-generated data, want < 2%%", fit.Report.Train.DecodeTotalMAPE)
	}
	// The priors are the reference: their errors are reported, and this fit beats them.
	if pr := fit.Report.Priors; pr == nil || pr.DecodeTotalMAPE <= fit.Report.Train.DecodeTotalMAPE || len(fit.Report.Warnings) > 0 {
		t.Errorf("priors' errors %+v, fit's %+v, warnings %q", pr, fit.Report.Train, fit.Report.Warnings)
	}
	if fit.Report.Parameters["mem_bw_eff"].StdErr <= 0 {
		t.Errorf("mem_bw_eff has no standard error")
	}
}

func TestFitErrors(t *testing.T) {
	prob, srv := smallProblem(t)
	res, err := llmbench.RunMatrix(srv, prob.Protocol, llmbench.Options{Seed: 1})
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

// TestShippedCalibrationReproduces refits the seed exactly as `servesim fit --uncalibrated` does
// (the CLI defaults: Levenberg-Marquardt, 4 starts, fit seed 1) and compares with the embedded
// calibrated parameters, so the shipped file cannot be edited by hand.
//
// Why the comparison is statistical and not bit-for-bit. On one machine the fit is deterministic,
// but another CPU need not reproduce its floats: Go may fuse x*y+z into one FMA instruction on
// arm64, ppc64le and s390x (the spec allows it; amd64 does not), math.Exp and math.Log run
// assembly on some architectures and pure Go on others, and gonum's kernels differ by
// architecture. So the refit is compared in the fit's own units of uncertainty, which no
// last-bit difference comes near:
//
//   - Each fitted parameter within a quarter of its standard error (SE, the delta-method value
//     the refit reports): one eighth of the +-2 SE interval the data can resolve. Evidence that
//     this absorbs float noise: with every prior moved by one ulp, or the finite-difference step
//     by 1e-12 relative, the refit reproduced the shipped values to 6e-5 SE, which is the file's
//     6-significant-digit rounding. A refit that took another path would not end near the
//     shipped values (a single start from the priors ends 13 SE away, loss 1.43 against 1.18),
//     and should fail: the file would then not be what `servesim fit` gives.
//   - Fit's objective at the shipped values no higher than the refit's loss + s^2/16, where
//     s^2 = loss / (informative residuals - free parameters) is the residual variance (0.0062 on
//     the seed: 206 residuals, 16 parameters). The rounding to 6 digits costs 0.0014 s^2.
//     The objective comes from a discrete simulation and is rugged below 1 SE: moving a single
//     fitted value by 0.05 SE changed it by -0.2 to +0.35 s^2, by 0.26 SE by -0.4 to +16 s^2.
//     So this check catches many edits too small for the parameter check, but not all.
//   - Parameters the fit does not move equal to the priors (1e-9 relative: they are copied, not
//     computed).
//   - A scanned parameter (state_page_scale: it sets the hybrid block size, and the fit picks it
//     on a grid) has no standard error: it must match to 1e-3 of its range, which a grid point
//     does exactly unless two grid points tie.
//
// The figures below were measured on the previous calibration (16 free parameters, loss 1.18);
// the present one has 18 (one scanned) and loss 0.605, and the same checks apply.
//
// Hand edits this catches: any fitted value moved by SE/4 or more (mem_bw_eff by 0.0046,
// accept_p1 by 0.0043, gemm_half_m by 5.9 rows), most moves of 0.1 SE through the loss, and any
// change to a value the fit does not move. Smaller edits are inside the fit's uncertainty.
// Checked by editing the embedded file: accept_p1 0.815343 -> 0.82 (+0.27 SE) fails both checks,
// act_passes 23.7305 -> 24.0 (+0.06 SE) fails the loss check (+0.37 s^2).
//
// Speed: one full fit is about 550 simulations of the matrix (the tool's whole schedule on one
// engine, about 0.2 s each), 70-100 s on 2 cores.
// Fewer starts would not test the same thing: the CLI's starts 2-4 do not beat the first here,
// but a single 12-iteration start from the priors ends at the other optimum above, because
// scouting three iterations and refining is a different path. So the test runs the CLI's
// settings, and skips under -short and -race.
func TestShippedCalibrationReproduces(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("full seed refit (about 70 s on 2 cores) skipped under -race and -short")
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
	if prob.Exclude, err = ParseExclude(s.Fit.Exclude); err != nil { // the scenario's [fit] exclude, as the CLI
		t.Fatal(err)
	}
	w := DefaultWeights()
	res, err := Fit(prob, &Settings{Method: "lm", Seed: 1, Weights: &w}) // the CLI defaults (4 starts)
	if err != nil {
		t.Fatal(err)
	}
	// objectiveAt must be Fit's objective: at Fit's optimum it gives Fit's loss (same machine,
	// same operations: equal up to the order of a sum, hence 1e-12).
	lossRefit, m := objectiveAt(prob, w, res.Free, res.Params)
	if math.Abs(lossRefit-res.Report.Loss) > 1e-12*res.Report.Loss {
		t.Fatalf("objectiveAt(refit) = %.12g, Fit reports loss %.12g: the test's objective is not Fit's", lossRefit, res.Report.Loss)
	}
	// The shipped file sets the parameters the fit moved; the others are the deployment's priors.
	base, _ := priors.Of(prob.Deployment)
	want := shipped.Over(base)
	lossShipped, _ := objectiveAt(prob, w, res.Free, want)
	s2 := res.Report.Loss / float64(m-len(res.Free))
	t.Logf("loss: refit %.7g, shipped values %.7g; informative residuals m = %d, free n = %d, s^2 = %.4g, tolerance s^2/16 = %.3g",
		res.Report.Loss, lossShipped, m, len(res.Free), s2, s2/16)
	for i, d := range param.Defs() {
		if pe := res.Report.Parameters[d.Name]; pe.Fitted {
			t.Logf("%-24s refit %-11.6g shipped %-11.6g SE %-9.4g |diff|/SE %.2g", d.Name, res.Params[i], want[i], pe.StdErr, math.Abs(res.Params[i]-want[i])/pe.StdErr)
		}
	}
	for _, c := range compareShipped(res, want, lossShipped, m) {
		i := slices.IndexFunc(param.Defs(), func(d param.Def) bool { return d.Name == c.name })
		if i < 0 {
			t.Errorf("%s: %s (refit %.7g, shipped values %.7g): regenerate data/calibrated_seed.toml with `servesim fit --uncalibrated --out scenario/data/calibrated_seed.toml`",
				c.name, c.msg, res.Report.Loss, lossShipped)
			continue
		}
		t.Errorf("%s: refit %.6g, shipped %.6g, SE %.3g: %s: regenerate data/calibrated_seed.toml with `servesim fit --uncalibrated --out scenario/data/calibrated_seed.toml`",
			c.name, res.Params[i], want[i], res.Report.Parameters[c.name].StdErr, c.msg)
	}
	// The in-sample acceptance figures of the shipped calibration (README, Known discrepancies):
	// decode total within 4 %, decode TTFT median within 15 %, the eight prefill rows trained on
	// (the 16K row is excluded by the scenario) within 4 %. Per-request throughput and time between
	// tokens are held to 5 %, above the 4 % of the fit without them: with the kernels' fixed time and the GPU-level
	// priors from kernel profiles the fit puts the C = 2, 16 and 32 columns' total throughput
	// within 3 % and their per-request speed 6-7 % slow: the seed's per-request speed exceeds its
	// window rate at C <= 2, and its admission ramp, inside every request's life at C = 16 and 32,
	// is faster than servesim's (README, Known discrepancies).
	e := res.Report.Train
	if e.StatusMatched != 64 || e.StatusCells != 64 {
		t.Errorf("statuses %d/%d, want 64/64", e.StatusMatched, e.StatusCells)
	}
	if e.DecodeTotalMAPE > 4 || e.DecodePerRequestMAPE > 5 || e.TBTMAPE > 5 || e.TTFTMdAPE > 15 || e.PrefillMAPE > 4 {
		t.Errorf("in-sample errors above the targets: %+v", e)
	}
	if x := res.Report.Excluded; x == nil || x.Cells != 1 {
		t.Errorf("excluded cells %+v, want the 16K prefill row", x)
	}
}

func ExampleFit() {
	prob, srv := smallProblem(nil)
	// Measurements made at a known mean acceptance length; the fit starts from the prior (2.45).
	truth := param.Priors()
	truth[param.AcceptTau] = 2.6
	srv, _ = sim.NewServer(prob.Deployment, truth)
	res, _ := llmbench.RunMatrix(srv, prob.Protocol, llmbench.Options{Seed: prob.Seed})
	prob.Measured = res.Matrix
	prob.Free = []param.ID{param.AcceptTau}
	w := DefaultWeights()
	w.Prior = 0 // maximum likelihood: no pull toward the prior
	fit, err := Fit(prob, &Settings{Starts: 1, Seed: 1, Weights: &w})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("accept_tau = %.2f; statuses %d/%d\n", fit.Params[param.AcceptTau], fit.Report.Train.StatusMatched, fit.Report.Train.StatusCells)
	// Output: accept_tau = 2.60; statuses 4/4
}

// TestFitIndependentOfWorkers: the same problem and seed give identical parameters whether the
// simulations run on one goroutine or several.
func TestFitIndependentOfWorkers(t *testing.T) {
	prob, srv := smallProblem(t)
	res, err := llmbench.RunMatrix(srv, prob.Protocol, llmbench.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	prob.Measured = res.Matrix
	prob.Free = []param.ID{param.MemBWEff, param.AcceptTau, param.FrontendMSPerReq}
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

// TestFitFindsAcceptanceSwitch makes "measurements" with acceptance that falls along the output
// from a known position and checks the fit finds the position (a scanned parameter) and the ratio
// from the priors, where the ratio is 1 and the first scan cannot see the position: the rescan at
// the optimum of the ratio settles it here. (On the seed, with 23 free parameters, the later
// starts' draws of the position from its grid found a better optimum, loss 0.669 -> 0.631 at the
// same weights; this small problem finds the same optimum with or without them.)
func TestFitFindsAcceptanceSwitch(t *testing.T) {
	prob, _ := smallProblem(t)
	def := param.AcceptSwitchTokens.Def()
	// A grid point (ScanPoints over the bounds, as Fit's scan places them), so the truth is
	// reachable exactly.
	grid := func(i int) float64 {
		x := (float64(i) + 0.5) / ScanPoints
		return fromU(&def, math.Log(x/(1-x)))
	}
	truth := param.Priors()
	truth[param.AcceptLateRatio] = 0.8
	truth[param.AcceptSwitchTokens] = grid(22)
	measureAt(t, prob, truth)
	prob.Free = []param.ID{param.AcceptLateRatio, param.AcceptSwitchTokens}
	w := DefaultWeights()
	w.Prior = 0
	fit, err := Fit(prob, &Settings{Starts: 3, Seed: 1, Weights: &w})
	if err != nil {
		t.Fatal(err)
	}
	if got := fit.Params[param.AcceptSwitchTokens]; got < grid(21) || got > grid(23) {
		t.Errorf("accept_switch_tokens = %.0f, want %.0f (grid neighbours %.0f..%.0f)", got, grid(22), grid(21), grid(23))
	}
	if got := fit.Params[param.AcceptLateRatio]; math.Abs(got-0.8) > 0.02 {
		t.Errorf("accept_late_ratio = %.3f, want 0.8", got)
	}
}

// TestAcceptanceFree: a fit moves only the acceptance parameters the deployment's acceptance reads
// (deploy.Deployment.Acceptance): all six for DFlash, the shape alone under a measured mean
// acceptance length, none for measured per-position rates or another method.
func TestAcceptanceFree(t *testing.T) {
	r, err := scenario.Default().Resolve(scenario.ResolveOptions{Uncalibrated: true})
	if err != nil {
		t.Fatal(err)
	}
	accept := func(d deploy.Deployment) []string {
		var out []string
		for _, id := range DefaultFree(&Problem{Deployment: &d}) {
			if g, _ := param.GroupOf(id); g == param.GroupAcceptance {
				out = append(out, id.Def().Name)
			}
		}
		return out
	}
	d := *r.Deployment
	if got := accept(d); len(got) != 6 {
		t.Errorf("dflash: acceptance parameters %v, want the six", got)
	}
	d.Engine.Speculative.MeanAcceptanceLength = 3
	if got := accept(d); !slices.Equal(got, []string{"accept_decay"}) {
		t.Errorf("dflash with a measured mean acceptance length: %v, want [accept_decay]", got)
	}
	d.Engine.Speculative.MeanAcceptanceLength = 0
	d.Engine.Speculative.Acceptance = make([]float64, d.Engine.SpecTokens())
	if got := accept(d); got != nil {
		t.Errorf("dflash with measured per-position rates: %v, want none", got)
	}
	d.Engine.Speculative.Acceptance = nil
	d.Engine.Speculative.Method = "mtp"
	if got := accept(d); got != nil {
		t.Errorf("mtp: %v, want none (its acceptance is the method's prior)", got)
	}
}

// TestScanKeepsValueWithoutEffect: a scanned parameter that does not move the loss (the hybrid
// block size, state_page_scale, on a model without recurrent state) keeps its starting value:
// every grid point ties with it. The scan used to take the grid's first point on a tie, so a
// parameter without effect left the fit at its lower bound.
func TestScanKeepsValueWithoutEffect(t *testing.T) {
	s := scenario.New()
	s.Model.Name, s.Hardware.GPU = "meta-llama/Llama-3.1-8B-Instruct", "H100-SXM"
	r, err := s.Resolve(scenario.ResolveOptions{Uncalibrated: true})
	if err != nil {
		t.Fatal(err)
	}
	proto := scenario.Default().Protocol
	proto.Contexts, proto.PrefillOnly, proto.Concurrency = []string{"8K"}, nil, []int{1, 4}
	prob := &Problem{Deployment: r.Deployment, Protocol: &proto, Base: r.Params, Seed: 3}
	truth := r.Params
	truth[param.MemBWEff] *= 0.9
	measureAt(t, prob, truth)
	prob.Free = []param.ID{param.MemBWEff, param.StatePageScale}
	w := DefaultWeights()
	w.Prior = 0
	fit, err := Fit(prob, &Settings{Starts: 2, Seed: 1, Weights: &w})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fit.Params[param.StatePageScale], r.Params[param.StatePageScale]; got != want {
		t.Errorf("state_page_scale = %g, want its starting value %g (it has no effect on a model without recurrent state)", got, want)
	}
	if got, want := fit.Params[param.MemBWEff], truth[param.MemBWEff]; math.Abs(got/want-1) > 0.02 {
		t.Errorf("mem_bw_eff = %.4f, want %.4f", got, want)
	}
}
