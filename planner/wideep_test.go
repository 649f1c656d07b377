package planner

import (
	"strings"
	"testing"

	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/vllmcmd"
	"github.com/servesim/servesim/workload"
)

// TestWideEPOffered: DeepSeek-R1 on 8 x H200 with data-parallel attention and expert parallel
// loads, as capacity and simulate build it: the experts are spread over TP x DP GPUs, so the
// weights fit (each TP4 replica holding every expert would need about 157 GiB per GPU). Its
// launch command is one server with --data-parallel-size, and imports back to the row's engine.
func TestWideEPOffered(t *testing.T) {
	r := seedResolved(t)
	ms, err := ModelsFor(r.Deployment, "deepseek-ai/DeepSeek-R1", "")
	if err != nil {
		t.Fatal(err)
	}
	w := &workload.Spec{Name: "fixed", Kind: workload.KindClosed, Closed: workload.Closed{Requests: 64, Concurrency: 32},
		Lengths: workload.Lengths{InputTokens: 2000, OutputTokens: 500}, SLO: workload.SLO{TPOTms: 50}}
	q := ScenarioQuestion(r, ms, w, gpus(t, "H200"), Space{Counts: []int{8}, TP: []int{4, 8}, MaxNumSeqs: []int{64},
		MaxNumBatchedTokens: []int{8192}, KVCacheDTypes: []string{"fp8"}, SpecTokens: []int{0}, GPUMemoryUtilization: []float64{0.9}})
	q.Engine.Version = ""
	p := mustRun(t, q, Options{Exhaustive: true})
	var wide *Result
	for i := range p.Results {
		res := &p.Results[i]
		c := &res.Config
		if c.TP == 4 && c.DP == 2 && c.EP {
			wide = res
		}
		if c.TP == 4 && c.DP == 2 && !c.EP && res.Status != "pruned" {
			t.Errorf("8 x H200 TP4 DP2 without EP (two replicas, each with every expert) loads: %s", res.Reason)
		}
	}
	if wide == nil {
		t.Fatal("no TP4 DP2 EP row")
	}
	if wide.Status == "pruned" || wide.Perf == nil {
		t.Fatalf("TP4 DP2 EP pruned: %s: %s", wide.Stage, wide.Reason)
	}
	if got := wide.Config.Label(); got != "8 x H200-SXM TP4 DP2 EP8" {
		t.Errorf("label %q, want the expert-parallel size over both ranks", got)
	}
	l, err := p.Launch(wide)
	if err != nil {
		t.Fatal(err)
	}
	if l.Replicas != 1 || !strings.Contains(l.Serve, "--data-parallel-size 2") || !strings.Contains(l.Serve, "--enable-expert-parallel") {
		t.Errorf("launch %q with %d replicas: want one server with --data-parallel-size 2 --enable-expert-parallel", l.Serve, l.Replicas)
	}
	want, _, _, err := p.RowEngine(wide)
	if err != nil {
		t.Fatal(err)
	}
	words, err := vllmcmd.Split(l.Serve)
	if err != nil {
		t.Fatal(err)
	}
	s := scenario.New()
	if _, err := s.ApplyVLLM(words); err != nil {
		t.Fatal(err)
	}
	s.Hardware.GPU, s.Engine.Version = "H200", want.Version
	b, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !b.Deployment.Engine.Equal(&want) || b.Deployment.Hardware.Count != 8 || b.Deployment.Engine.EPSize() != 8 {
		t.Errorf("%s imports as %d GPUs, EP size %d, want 8 and the row's engine", l.Serve, b.Deployment.Hardware.Count, b.Deployment.Engine.EPSize())
	}
}
