package calibration

import (
	"bytes"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/workload"
)

// TestFitTargetsIdentifiable: a fit freeing more parameters than it has weighted targets says so
// and fixes the ones the data cannot tell apart at their starting values; every parameter it fits
// carries a standard error or a stated bound (the scanned state_page_scale had neither).
func TestFitTargetsIdentifiable(t *testing.T) {
	r, err := scenario.Default().Resolve(scenario.ResolveOptions{Uncalibrated: true})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.NewServer(r.Deployment, param.Priors())
	if err != nil {
		t.Fatal(err)
	}
	b := workload.VLLMBench{Dataset: "random", NumPrompts: 24, InputLen: 512, OutputLen: 48, MaxConcurrency: 8}
	s := &workload.Spec{Name: "x", Kind: workload.KindVLLMBench, VLLM: &b}
	m, err := workload.Run(srv, s, workload.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	targets := []Target{&VLLMBenchRun{Result: resultOf(m, "run.json"), Spec: s}}
	free := []param.ID{param.StatePageScale, param.MemBWEff, param.GEMMEffFP4, param.KernelFixedUS, param.StepOverheadUS,
		param.FrontendMSPerReq, param.FrontendUSPerTok, param.AttnDecodeEff, param.ElementwiseEff, param.AcceptTau}
	p := &TargetProblem{Deployment: r.Deployment, Targets: targets, Base: param.Priors(), Free: free, Seed: 3}
	res, err := FitTargets(p, &Settings{Starts: 1, Workers: 2, MaxIter: 3})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if rep.WeightedTargets == 0 || rep.WeightedTargets >= len(free) {
		t.Fatalf("weighted targets %d, want fewer than the %d free parameters", rep.WeightedTargets, len(free))
	}
	if rep.NParameters > rep.WeightedTargets || len(rep.Unidentifiable) != len(free)-rep.NParameters {
		t.Errorf("fitted %d parameters against %d targets, %d fixed as unidentifiable", rep.NParameters, rep.WeightedTargets, len(rep.Unidentifiable))
	}
	for _, n := range rep.Unidentifiable {
		pe := rep.Parameters[n]
		id, _ := param.ByName(n)
		if pe.Fitted || !pe.Unidentifiable || pe.Value != p.Base[id] {
			t.Errorf("%s: %+v, want it fixed at its starting value %v", n, pe, p.Base[id])
		}
	}
	if len(rep.Warnings) == 0 || !strings.Contains(rep.Warnings[0], "free parameters against") {
		t.Errorf("no warning on the parameters outnumbering the targets: %q", rep.Warnings)
	}
	var buf bytes.Buffer
	WriteTargetSummary(&buf, &rep)
	if !strings.Contains(buf.String(), "fixed: unidentifiable") || strings.Contains(buf.String(), "n/a") {
		t.Errorf("summary: want unidentifiable parameters marked and no n/a:\n%s", buf.String())
	}
	for n, pe := range rep.Parameters {
		if pe.Fitted && pe.StdErr < 0 && pe.BoundLo == 0 && pe.BoundHi == 0 {
			t.Errorf("%s fitted without a standard error or a stated bound: %+v", n, pe)
		}
	}

	// state_page_scale alone with a continuous one: the scanned parameter gets a stated bound that
	// holds its value.
	p.Free = []param.ID{param.StatePageScale, param.MemBWEff}
	res, err = FitTargets(p, &Settings{Starts: 1, Workers: 2, MaxIter: 3})
	if err != nil {
		t.Fatal(err)
	}
	sp := res.Report.Parameters["state_page_scale"]
	if !sp.Fitted || sp.StdErr >= 0 || !(sp.BoundLo <= sp.Value && sp.Value <= sp.BoundHi && sp.BoundLo < sp.BoundHi) {
		t.Errorf("state_page_scale: %+v, want a stated bound around its value", sp)
	}
	if got := sp.UncertaintyText(); !strings.HasPrefix(got, "in [") {
		t.Errorf("state_page_scale uncertainty %q, want a bound", got)
	}
}

// TestFarFromPrior: a fitted value far from its prior (the seed's frontend_ms_per_request near
// 52 ms against a 5 ms prior) is flagged with the term it enters; one near its prior, or a fixed
// one, is not.
func TestFarFromPrior(t *testing.T) {
	ps := map[string]ParamEstimate{
		"frontend_ms_per_request": {Value: 51.9, Prior: 5, Fitted: true},
		"mem_bw_eff":              {Value: 0.85, Prior: 0.8, Fitted: true},
		"step_overhead_us":        {Value: 4000, Prior: 400, Fitted: false},
		"attn_decode_eff":         {Value: 0.2, Prior: 0.85, Fitted: true},
	}
	got := FarFromPrior(ps)
	if len(got) != 2 {
		t.Fatalf("flags %q, want frontend_ms_per_request and attn_decode_eff", got)
	}
	if !strings.HasPrefix(got[1], "frontend_ms_per_request = 51.9 ms") || !strings.Contains(got[1], "10.4x its prior 5 ms") || !strings.Contains(got[1], "frontend term") {
		t.Errorf("flag %q", got[1])
	}
	if !strings.HasPrefix(got[0], "attn_decode_eff") {
		t.Errorf("flag %q", got[0])
	}
}
