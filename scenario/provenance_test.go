package scenario

import (
	"testing"

	"github.com/servesim/servesim/model/param"
)

// TestProvenanceSummary: the seed is calibrated in every group it uses, and its intervals are
// the calibrated widths; the Workstation card has its gpu groups transferred; the seed's model
// on an H200 has Hopper priors at the gpu level (measured data: Vidur) and wider intervals;
// Llama on an H100 with the default vLLM rests on priors only, with the prior widths; the seed's
// model on an MI300X (CDNA 3, no measured data) is marked as resting on unsupported priors.
func TestProvenanceSummary(t *testing.T) {
	resolve := func(name string, s *Scenario, o ResolveOptions) *Resolved {
		t.Helper()
		r, err := s.Resolve(o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r
	}
	seed := resolve("seed", Default(), ResolveOptions{})
	if seed.Summary.Class != param.ClassCalibrated || seed.Summary.Marker() != "cal" {
		t.Errorf("seed: class %s (%s), want calibrated", seed.Summary.Class, seed.Summary.Line())
	}
	for _, g := range []param.Group{param.GroupCompute, param.GroupMemory, param.GroupInterconnect, param.GroupOverhead, param.GroupAcceptance, param.GroupModel} {
		if x, ok := seed.Summary.Group(g); !ok || x.Class != param.ClassCalibrated {
			t.Errorf("seed: group %s %+v (present %v), want calibrated", g, x, ok)
		}
	}
	w := param.DefaultWidths()
	if got, want := seed.Summary.Interval80(param.MetricTPOT, 10).Sigma, w[param.ClassCalibrated][param.MetricTPOT]; got != want {
		t.Errorf("seed: TPOT sigma %g, want the calibrated width %g", got, want)
	}

	ws := Default()
	ws.Hardware.GPU = "RTX-PRO-6000-Workstation"
	rw := resolve("workstation", ws, ResolveOptions{})
	if x, _ := rw.Summary.Group(param.GroupMemory); x.Class != param.ClassTransferred || rw.Summary.Class != param.ClassTransferred {
		t.Errorf("workstation: memory %s, overall %s; want transferred", x.Class, rw.Summary.Class)
	}

	h := Default()
	h.Hardware.GPU = "H200-SXM"
	rh := resolve("H200", h, ResolveOptions{})
	if x, _ := rh.Summary.Group(param.GroupCompute); x.Class != param.ClassPrior || rh.Summary.Unsupported || rh.Summary.GPUData == "" {
		t.Errorf("seed model on H200: compute %s, unsupported %v, gpu data %q; want Hopper priors backed by Vidur", x.Class, rh.Summary.Unsupported, rh.Summary.GPUData)
	}
	for _, m := range param.Metrics() {
		s, c := rh.Summary.Interval80(m, 1).Sigma, seed.Summary.Interval80(m, 1).Sigma
		if !(s > c) {
			t.Errorf("H200 %s sigma %g not wider than the seed's %g", m, s, c)
		}
	}

	l := New()
	l.Model.Name, l.Hardware.GPU = "meta-llama/Llama-3.1-8B-Instruct", "H100-SXM"
	rl := resolve("Llama on H100", l, ResolveOptions{})
	if rl.Summary.Class != param.ClassPrior || rl.Summary.Marker() != "prior" {
		t.Errorf("Llama on H100: %s (%s), want prior", rl.Summary.Class, rl.Summary.Line())
	}
	if _, ok := rl.Summary.Group(param.GroupAcceptance); ok {
		t.Errorf("Llama without speculative decoding has an acceptance group: %+v", rl.Summary.Groups)
	}
	iv := rl.Summary.Interval80(param.MetricTPOT, 20)
	if want := w[param.ClassPrior][param.MetricTPOT]; iv.Sigma != want || !(iv.Lo < 20 && iv.Hi > 20) || iv.Hi-iv.Lo <= seed.Summary.Interval80(param.MetricTPOT, 20).Hi-seed.Summary.Interval80(param.MetricTPOT, 20).Lo {
		t.Errorf("Llama on H100: TPOT interval %+v, want sigma %g and wider than the seed's", iv, want)
	}

	m := Default()
	m.Hardware.GPU = "MI300X"
	m.Hardware.Count = 8
	rm, err := m.Resolve(ResolveOptions{})
	if err == nil {
		if !rm.Summary.Unsupported || rm.Summary.Marker() != "prior!" {
			t.Errorf("seed model on MI300X: %+v, want priors only for an unsupported GPU family", rm.Summary)
		}
	}
	lm := New()
	lm.Model.Name, lm.Hardware.GPU = "meta-llama/Llama-3.1-8B-Instruct", "MI300X"
	rlm := resolve("Llama on MI300X", lm, ResolveOptions{})
	if !rlm.Summary.Unsupported || rlm.Summary.Why == "" {
		t.Errorf("Llama on MI300X: %+v, want priors only for an unsupported GPU family", rlm.Summary)
	}

	// --uncalibrated: the seed at priors (the Blackwell PCIe priors cite no kernel profile).
	ru := resolve("seed uncalibrated", Default(), ResolveOptions{Uncalibrated: true})
	if ru.Summary.Class != param.ClassPrior {
		t.Errorf("seed --uncalibrated: %s, want prior", ru.Summary.Class)
	}
}
