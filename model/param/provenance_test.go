package param

import (
	"math"
	"testing"
)

// Every class and metric has a named width within its bounds, with a unit, a meaning and a
// source; calibrated < transferred < prior for each metric.
func TestWidthsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range Widths() {
		if w.Value < w.Lo || w.Value > w.Hi || w.Unit == "" || w.Meaning == "" || w.Source == "" || seen[w.Name] {
			t.Errorf("width %+v: out of bounds, undocumented or duplicated", w)
		}
		seen[w.Name] = true
	}
	d := DefaultWidths()
	for _, m := range Metrics() {
		c, x, p := d[ClassCalibrated][m], d[ClassTransferred][m], d[ClassPrior][m]
		if !(c > 0 && c < x && x < p) {
			t.Errorf("%s: widths calibrated %g, transferred %g, prior %g: want increasing", m, c, x, p)
		}
	}
}

// The interval widens with every group that moves from calibrated to prior, and is the class's
// width when every group is of one class.
func TestSigmaWidensWithPriors(t *testing.T) {
	var prov Provenance
	for i := range prov {
		prov[i] = Origin{Kind: OriginCalibrated}
	}
	prov[SamePrompt] = Origin{Kind: OriginWorkload}
	u := Uses{Collectives: true, Speculative: true, MoE: true}
	d := DefaultWidths()
	last := 0.0
	steps := []ID{MemBWEff, NCCLBWEff, StepOverheadUS, AcceptTau}
	for i := 0; i <= len(steps); i++ {
		if i > 0 {
			// Move the whole group of steps[i-1] to priors.
			g, _ := GroupOf(steps[i-1])
			for _, def := range Defs() {
				if x, ok := GroupOf(def.ID); ok && x == g {
					prov[def.ID] = Origin{Kind: OriginPrior}
				}
			}
		}
		s := Summarize(&prov, u)
		sg := d.Sigma(&s, MetricTPOT)
		if i == 0 && (s.Class != ClassCalibrated || math.Abs(sg-d[ClassCalibrated][MetricTPOT]) > 1e-12) {
			t.Errorf("all calibrated: class %s sigma %g", s.Class, sg)
		}
		if i > 0 && !(sg > last) {
			t.Errorf("step %d: sigma %g not wider than %g", i, sg, last)
		}
		last = sg
	}
	for i := range prov {
		if prov[i].Kind != OriginWorkload {
			prov[i] = Origin{Kind: OriginPrior}
		}
	}
	s := Summarize(&prov, u)
	if s.Class != ClassPrior || math.Abs(d.Sigma(&s, MetricTTFT)-d[ClassPrior][MetricTTFT]) > 1e-12 {
		t.Errorf("all priors: class %s, TTFT sigma %g", s.Class, d.Sigma(&s, MetricTTFT))
	}
	iv := s.Interval80(MetricTPOT, 10)
	if math.Abs(iv.Lo*iv.Hi-100) > 1e-9 || !iv.Contains(10) || iv.Contains(iv.Hi*1.01) {
		t.Errorf("interval %+v: want symmetric in log around 10", iv)
	}
	// A file's value counts by how its key matches; one fitted elsewhere is a prior.
	if c, _ := (Origin{Kind: OriginFile, Match: OriginTransferred}).ClassOf(); c != ClassTransferred {
		t.Errorf("file matched by generation: %s", c)
	}
	if c, _ := (Origin{Kind: OriginFile}).ClassOf(); c != ClassPrior {
		t.Errorf("file fitted elsewhere: %s", c)
	}
}

// Groups a deployment does not use are left out: no interconnect on one GPU, no acceptance
// without speculative decoding.
func TestSummaryUses(t *testing.T) {
	var prov Provenance
	s := Summarize(&prov, Uses{})
	for _, g := range s.Groups {
		if g.Group == GroupInterconnect || g.Group == GroupAcceptance {
			t.Errorf("unused group %s in %+v", g.Group, s.Groups)
		}
	}
	if len(s.Groups) == 0 || s.Line() == "" || s.Marker() != "prior" {
		t.Errorf("summary %+v line %q marker %q", s, s.Line(), s.Marker())
	}
}

// A prediction resting on priors for a GPU family no measured data supports is less sure than
// one on a measured family's priors: its width adds sigma_unsupported_gpu in quadrature, for
// every metric.
func TestUnsupportedGPUWidens(t *testing.T) {
	d := DefaultWidths()
	s := Summary{Class: ClassPrior, Groups: []GroupProvenance{{Group: GroupCompute, Class: ClassPrior}, {Group: GroupMemory, Class: ClassPrior}, {Group: GroupOverhead, Class: ClassPrior}}}
	u := s
	u.Unsupported = true
	for _, m := range Metrics() {
		base, wide := d.Sigma(&s, m), d.Sigma(&u, m)
		if want := math.Hypot(base, d[ClassUnsupportedGPU][m]); wide <= base || math.Abs(wide-want) > 1e-12 {
			t.Errorf("%s: sigma %g for an unsupported family, %g supported: want %g", m, wide, base, want)
		}
	}
}
