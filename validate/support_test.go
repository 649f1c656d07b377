package validate

import (
	"slices"
	"testing"

	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/priors"
	"github.com/servesim/servesim/scenario"
)

// TestMeasuredSupportIsTheCorpus: the shipped record of what measured runs cover on each GPU
// generation (hardware.Generation.MeasuredSupport, which widens the intervals of a deployment
// outside it) is exactly what the shipped corpus's absolute-scored rows and the embedded seed
// run: a row added to the corpus, or a family dropped from it, must show in the record, and the
// record names nothing the data does not measure.
func TestMeasuredSupportIsTheCorpus(t *testing.T) {
	rows, err := ReadCorpus()
	if err != nil {
		t.Fatal(err)
	}
	got := map[hardware.Generation]hardware.Support{}
	for _, c := range Map(rows, nil) {
		if !c.Expressed() || c.Scoring != Absolute {
			continue
		}
		d, err := c.deployment()
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		g := d.Hardware.GPU.Generation
		got[g] = got[g].Add(priors.Runs(d))
	}
	r, err := scenario.Default().Resolve(scenario.ResolveOptions{Uncalibrated: true})
	if err != nil {
		t.Fatal(err)
	}
	seed := r.Deployment
	got[seed.Hardware.GPU.Generation] = got[seed.Hardware.GPU.Generation].Add(priors.Runs(seed))
	for _, gl := range hardware.Generations() {
		g := hardware.Generation(gl[0])
		want := g.MeasuredSupport()
		have := got[g]
		for _, l := range []struct {
			what       string
			have, want []string
		}{{"families", have.Families, want.Families}, {"attention kinds", have.Kinds, want.Kinds}, {"weight formats", have.Formats, want.Formats}} {
			w := slices.Clone(l.want)
			slices.Sort(w)
			if !slices.Equal(l.have, w) {
				t.Errorf("%s: measured runs cover %s %q, the shipped record says %q", g.Label(), l.what, l.have, w)
			}
		}
	}
}
