package calibration

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/model/priors"
	"github.com/servesim/servesim/scenario"
)

// twoGPUs is the seed deployment on its own GPU (A) and the same deployment on an H100 (B).
func twoGPUs(t *testing.T) (*deploy.Deployment, *deploy.Deployment) {
	t.Helper()
	r, err := scenario.Default().Resolve(scenario.ResolveOptions{Uncalibrated: true})
	if err != nil {
		t.Fatal(err)
	}
	a := r.Deployment
	b := *a
	g, err := hardware.BuiltinCatalog().Find("H100-SXM")
	if err != nil {
		t.Fatal(err)
	}
	b.Hardware.GPU = g
	if a.Hardware.GPU.Name == b.Hardware.GPU.Name {
		t.Fatal("the two GPUs must differ")
	}
	return a, &b
}

// synthetic is a source of n jobs on d whose "measurement" is mem_bw_eff = truth: each job
// returns the value it ran with and its residual is the log error (a fast, exact stand-in for a
// simulation). With truth NaN the residual is constant: the data does not see the value.
func synthetic(name string, d *deploy.Deployment, n int, truth float64) *MultiSource {
	s := &MultiSource{Name: name, NResid: n}
	for i := 0; i < n; i++ {
		s.Jobs = append(s.Jobs, MultiJob{Label: name, Deployment: d, Cost: 1,
			Run: func(p param.Values) (any, error) { return p[param.MemBWEff], nil }})
	}
	s.Score = func(res []any, errs []error, r []float64) {
		for i := range r {
			if math.IsNaN(truth) {
				r[i] = 0.5
				continue
			}
			r[i] = math.Log(res[i].(float64) / truth)
		}
	}
	return s
}

func memBWOnly(*MultiJob) []param.ID { return []param.ID{param.MemBWEff} }

// TestFitMultiPerGPU: the GPU with data gets its value (near the truth, pulled a little toward
// its prior); the GPU whose data does not see the parameter, and a GPU with no data at all, keep
// their generation's prior exactly.
func TestFitMultiPerGPU(t *testing.T) {
	a, b := twoGPUs(t)
	priorA, _ := priors.Of(a)
	priorB, _ := priors.Of(b)
	truth := 0.9
	if math.Abs(priorA[param.MemBWEff]-truth) < 0.05 {
		truth = 0.65
	}
	p := &MultiProblem{Sources: []*MultiSource{synthetic("a", a, 20, truth), synthetic("b", b, 3, math.NaN())}, Free: memBWOnly}
	res, err := FitMulti(p, &Settings{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 2 {
		t.Fatalf("entries %+v: want one per GPU", res.Entries)
	}
	va, _ := res.ParamsFor(a)
	vb, _ := res.ParamsFor(b)
	if got := va[param.MemBWEff]; math.Abs(got-truth) > 0.02 {
		t.Errorf("GPU %s: mem_bw_eff %.4f, want near the data's %.2f (prior %.3f)", a.Hardware.GPU.Name, got, truth, priorA[param.MemBWEff])
	}
	// Shrinkage: strictly between the data and the prior.
	if got := va[param.MemBWEff]; (got-truth)*(got-priorA[param.MemBWEff]) >= 0 {
		t.Errorf("GPU %s: %.5f not between the data %.2f and the prior %.3f", a.Hardware.GPU.Name, got, truth, priorA[param.MemBWEff])
	}
	if got := vb[param.MemBWEff]; got != priorB[param.MemBWEff] {
		t.Errorf("GPU %s (data blind to the value): mem_bw_eff %v, want its prior %v", b.Hardware.GPU.Name, got, priorB[param.MemBWEff])
	}
	for _, e := range res.Entries {
		if e.Key == b.Hardware.GPU.Name && e.Seen {
			t.Errorf("entry %s marked seen", e.Name())
		}
	}
	// A GPU without any data: no entry, its priors.
	res2, err := FitMulti(&MultiProblem{Sources: []*MultiSource{synthetic("a", a, 20, truth)}, Free: memBWOnly}, &Settings{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	vb2, from := res2.ParamsFor(b)
	if vb2 != priorB {
		t.Errorf("GPU without data: parameters differ from its priors (%s)", from)
	}
}

// TestFitMultiDeterministic: the same problem gives identical results, whatever the workers.
func TestFitMultiDeterministic(t *testing.T) {
	a, b := twoGPUs(t)
	mk := func() *MultiProblem {
		return &MultiProblem{Sources: []*MultiSource{synthetic("a", a, 5, 0.7), synthetic("b", b, 4, 0.93)}, Free: memBWOnly}
	}
	r1, err := FitMulti(mk(), &Settings{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := FitMulti(mk(), &Settings{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r1.Entries, r2.Entries) || r1.Loss != r2.Loss || r1.Evaluations != r2.Evaluations {
		t.Errorf("different results:\n%+v\n%+v", r1.Entries, r2.Entries)
	}
}

// TestParamsForTransfers: a GPU without entries takes those of the stock card it is run off,
// else of the one stock card of its generation in the fit (as --params applies a file's sets);
// another generation's entries never.
func TestParamsForTransfers(t *testing.T) {
	seed, h100 := twoGPUs(t)
	cat := hardware.BuiltinCatalog()
	ws, err := cat.Find("RTX-PRO-6000-Workstation")
	if err != nil {
		t.Fatal(err)
	}
	oc, err := ws.WithMemoryOffset(6000)
	if err != nil {
		t.Fatal(err)
	}
	res := &MultiResult{Entries: []EntryEstimate{
		{Entry: Entry{ID: param.MemBWEff, Key: ws.Name, Jobs: 3, AbsJobs: 3}, Value: 0.91},
		{Entry: Entry{ID: param.MemBWEff, Key: oc.Name, Jobs: 1, AbsJobs: 1}, Value: 0.7},
	}}
	// The seed's Server card: the Workstation's (the +mem6000 card is run off its stock settings).
	if p, from := res.ParamsFor(seed); p[param.MemBWEff] != 0.91 || !strings.Contains(from, "transferred from "+ws.Name) {
		t.Errorf("server: mem_bw_eff %g (%s), want the Workstation's 0.91", p[param.MemBWEff], from)
	}
	// A Workstation run at +6000 with no entries of its own would take its stock card's.
	d := *seed
	d.Hardware.GPU = oc
	res.Entries = res.Entries[:1]
	if p, _ := res.ParamsFor(&d); p[param.MemBWEff] != 0.91 {
		t.Errorf("+6000 card: mem_bw_eff %g, want its stock card's 0.91", p[param.MemBWEff])
	}
	// The seed's card with values of its own seen only through another engine's ratios: the
	// Workstation's absolute fit is transferred; without it, its own values stay.
	res.Entries = append(res.Entries, EntryEstimate{Entry: Entry{ID: param.MemBWEff, Key: seed.Hardware.GPU.Name, Jobs: 5}, Value: 0.6})
	if p, _ := res.ParamsFor(seed); p[param.MemBWEff] != 0.91 {
		t.Errorf("server with ratio-only values: mem_bw_eff %g, want the Workstation's 0.91", p[param.MemBWEff])
	}
	if p, _ := (&MultiResult{Entries: res.Entries[1:]}).ParamsFor(seed); p[param.MemBWEff] != 0.6 {
		t.Errorf("server with ratio-only values and no transfer: mem_bw_eff %g, want its own 0.6", p[param.MemBWEff])
	}
	// Hopper takes nothing from Blackwell PCIe.
	prior, _ := priors.Of(h100)
	if p, _ := res.ParamsFor(h100); p[param.MemBWEff] != prior[param.MemBWEff] {
		t.Errorf("H100: mem_bw_eff %g, want its prior %g", p[param.MemBWEff], prior[param.MemBWEff])
	}
}

// ProvenanceFor classes a fit's values as a parameter file of it would: the memory group of a
// GPU with its own fitted mem_bw_eff is calibrated, of a GPU that takes another card's transferred,
// and of a GPU the fit never saw a prior.
func TestProvenanceForClasses(t *testing.T) {
	seed, h100 := twoGPUs(t)
	ws, err := hardware.BuiltinCatalog().Find("RTX-PRO-6000-Workstation")
	if err != nil {
		t.Fatal(err)
	}
	res := &MultiResult{Entries: []EntryEstimate{{Entry: Entry{ID: param.MemBWEff, Key: ws.Name, Jobs: 3, AbsJobs: 3}, Value: 0.91}}}
	class := func(d *deploy.Deployment) param.Class {
		s := res.ProvenanceFor(d)
		g, ok := s.Group(param.GroupMemory)
		if !ok {
			t.Fatalf("%s: no memory group", d.Hardware.GPU.Name)
		}
		return g.Class
	}
	own := *seed
	own.Hardware.GPU = ws
	if c := class(&own); c != param.ClassCalibrated {
		t.Errorf("Workstation: %s, want calibrated", c)
	}
	if c := class(seed); c != param.ClassTransferred {
		t.Errorf("Server (takes the Workstation's): %s, want transferred", c)
	}
	if c := class(h100); c != param.ClassPrior {
		t.Errorf("H100: %s, want prior", c)
	}
}

// TestFitSupport: a fit records what its absolute-scored runs cover per GPU generation, and the
// provenance of its values (ProvenanceFor) calls unseen what that data does not: fitted on the
// seed's card, the seed's model there is seen and on an H100 unseen; fitted with the H100 runs
// scored only as ratios, the H100 adds nothing; fitted on the H100 alone (the seed's family held
// out), the seed's model on its own card is unseen too.
func TestFitSupport(t *testing.T) {
	seed, h100 := twoGPUs(t)
	ratio := synthetic("b", h100, 3, 0.8)
	for i := range ratio.Jobs {
		ratio.Jobs[i].RatioOnly = true
	}
	res, err := FitMulti(&MultiProblem{Sources: []*MultiSource{synthetic("a", seed, 5, 0.8), ratio}, Free: memBWOnly}, &Settings{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	gen := seed.Hardware.GPU.Generation
	if sup := res.Support[gen]; !slices.Equal(sup.Families, []string{seed.Model.Family}) {
		t.Errorf("support on %s: %+v, want the seed's family %s", gen, sup, seed.Model.Family)
	}
	if _, ok := res.Support[h100.Hardware.GPU.Generation]; ok {
		t.Errorf("ratio-only runs on the H100 recorded as support: %+v", res.Support)
	}
	if u := res.ProvenanceFor(seed).Unseen; len(u) != 0 {
		t.Errorf("the seed under a fit on it: unseen %q, want none", u)
	}
	u := res.ProvenanceFor(h100).Unseen
	if len(u) < 3 || !strings.HasPrefix(u[0], "model family "+seed.Model.Family+" on Hopper") {
		t.Errorf("the seed's model on an H100 no absolute run covers: unseen %q, want its family, attention kinds and weights", u)
	}
	held, err := FitMulti(&MultiProblem{Sources: []*MultiSource{synthetic("b", h100, 3, 0.8)}, Free: memBWOnly}, &Settings{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if u := held.ProvenanceFor(seed).Unseen; len(u) == 0 {
		t.Error("the seed's family held out of the fit: its card's predictions not marked unseen")
	}
}
