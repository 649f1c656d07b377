package scenario

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/model/priors"
)

// keyedFile is a file of sets as a multi-source fit writes it: the seed's GPU, an H100, the seed's
// engine series and model. Its values are far from every prior, so that a value applied cannot be
// mistaken for a prior.
func keyedFile(t *testing.T, extra ...ParamSet) (*ParamsFile, string) {
	t.Helper()
	f := &ParamsFile{Keyed: append([]ParamSet{
		{Level: "gpu", Key: "RTX-PRO-6000-Server", Generation: "blackwell-pcie", Params: map[string]float64{"mem_bw_eff": 0.91, "kernel_fixed_us": 2.5}},
		{Level: "gpu", Key: "H100-SXM", Params: map[string]float64{"mem_bw_eff": 0.66}},
		{Level: "engine", Key: "vllm 0.32.x (V1)", Params: map[string]float64{"step_overhead_us": 1234}},
		{Level: "model", Key: "glm-5.3-flash", Params: map[string]float64{"accept_tau": 2.7}},
	}, extra...)}
	var b bytes.Buffer
	f.Encode(&b)
	path := filepath.Join(t.TempDir(), "sets.toml")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return f, path
}

// TestParamSetsRoundTrip: a file of sets reads back as written (the values exactly: a fit's file
// must reproduce the fit).
func TestParamSetsRoundTrip(t *testing.T) {
	f, path := keyedFile(t)
	g, err := LoadParamsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Keyed, g.Keyed) {
		t.Errorf("read back %+v, wrote %+v", g.Keyed, f.Keyed)
	}
}

// TestParamSetsRejected: every malformed file is refused with the set and what was wanted.
func TestParamSetsRejected(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"mixed", "[calibration]\ngpu = \"H100-SXM\"\n[params]\nmem_bw_eff = 0.8\n[[set]]\nlevel = \"gpu\"\nkey = \"H100-SXM\"\n[set.params]\nmem_bw_eff = 0.8\n", "either one set keyed by [calibration]"},
		{"level", "[[set]]\nlevel = \"workload\"\nkey = \"x\"\n[set.params]\nsame_prompt = 1.0\n", "want gpu, engine or model"},
		{"key", "[[set]]\nlevel = \"gpu\"\nkey = \" \"\n[set.params]\nmem_bw_eff = 0.8\n", "key: want"},
		{"wrong level", "[[set]]\nlevel = \"gpu\"\nkey = \"H100-SXM\"\n[set.params]\naccept_tau = 3.0\n", "accept_tau is a model-level parameter, not gpu"},
		{"unknown", "[[set]]\nlevel = \"gpu\"\nkey = \"H100-SXM\"\n[set.params]\nmem_bw = 0.8\n", "unknown parameter \"mem_bw\""},
		{"bounds", "[[set]]\nlevel = \"gpu\"\nkey = \"H100-SXM\"\n[set.params]\nmem_bw_eff = 1.8\n", "mem_bw_eff"},
		{"twice", "[[set]]\nlevel = \"gpu\"\nkey = \"H100-SXM\"\n[set.params]\nmem_bw_eff = 0.8\n[[set]]\nlevel = \"gpu\"\nkey = \"h100-sxm\"\n[set.params]\nkernel_fixed_us = 5.0\n", "set 2 (level \"gpu\", key \"h100-sxm\"): a second set"},
		{"empty", "[[set]]\nlevel = \"model\"\nkey = \"m\"\n", "no params"},
		{"bogus generation", "[[set]]\nlevel = \"gpu\"\nkey = \"X1\"\ngeneration = \"bogus\"\n[set.params]\nmem_bw_eff = 0.8\n", "generation \"bogus\": want one of"},
		{"generation off gpu", "[[set]]\nlevel = \"model\"\nkey = \"m\"\ngeneration = \"hopper\"\n[set.params]\nact_passes = 1.0\n", "only a gpu set has a GPU generation"},
		{"calibration generation", "[calibration]\ngpu = \"X1\"\ngeneration = \"hoper\"\n[params]\nmem_bw_eff = 0.8\n", "[calibration] generation \"hoper\""},
	} {
		_, err := ParseParamsFile([]byte(c.text), "f.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "f.toml") {
			t.Errorf("%s: error %v, want one naming f.toml and %q", c.name, err, c.want)
		}
	}
}

// TestParamSetsApply: each set applies only where its key matches: the seed takes its GPU's,
// engine series' and model's values (calibrated); the Workstation card, the one GPU of its
// generation without a set, takes the Server's gpu values transferred; with a second set of that
// generation in the file no GPU's values are chosen for it (priors, and From says why); an H200
// takes none of the H100's (another generation would be Hopper too: with one Hopper set it is
// transferred); another model takes the priors at the model level.
func TestParamSetsApply(t *testing.T) {
	_, path := keyedFile(t)
	resolve := func(s *Scenario, file string) *Resolved {
		t.Helper()
		r, err := s.Resolve(ResolveOptions{ParamsFile: file})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	prior, _ := priors.Of(resolve(Default(), "").Deployment)

	seed := resolve(Default(), path)
	for name, want := range map[param.ID]float64{param.MemBWEff: 0.91, param.KernelFixedUS: 2.5, param.StepOverheadUS: 1234, param.AcceptTau: 2.7} {
		if got := seed.Params[name]; got != want {
			t.Errorf("seed: %s = %g, want the file's %g", name.Def().Name, got, want)
		}
		if o := seed.Provenance[name]; o.Kind != param.OriginFile || o.Match != param.OriginCalibrated {
			t.Errorf("seed: %s origin %+v, want calibrated from the file", name.Def().Name, o)
		}
	}
	if seed.Source != SourceCalibrated || !strings.Contains(seed.ParamsFrom, "gpu RTX-PRO-6000-Server (calibrated)") {
		t.Errorf("seed: source %s, from %q", seed.Source, seed.ParamsFrom)
	}
	if seed.Params[param.NCCLLatencyUS] != prior[param.NCCLLatencyUS] {
		t.Errorf("seed: nccl_latency_us %g, no set gives it: want the prior %g", seed.Params[param.NCCLLatencyUS], prior[param.NCCLLatencyUS])
	}

	ws := Default()
	ws.Hardware.GPU = "RTX-PRO-6000-Workstation"
	rw := resolve(ws, path)
	if rw.Params[param.MemBWEff] != 0.91 || rw.Provenance[param.MemBWEff].Match != param.OriginTransferred || rw.Source != SourceTransferred {
		t.Errorf("workstation: mem_bw_eff %g (%+v), source %s; want 0.91 transferred", rw.Params[param.MemBWEff], rw.Provenance[param.MemBWEff], rw.Source)
	}
	_, path2 := keyedFile(t, ParamSet{Level: "gpu", Key: "RTX-5090", Params: map[string]float64{"mem_bw_eff": 0.7}})
	rw2 := resolve(ws, path2)
	if rw2.Params[param.MemBWEff] != prior[param.MemBWEff] || !strings.Contains(rw2.ParamsFrom, "several GPUs") {
		t.Errorf("workstation with two Blackwell PCIe sets: mem_bw_eff %g (prior %g), from %q; want the prior and the reason",
			rw2.Params[param.MemBWEff], prior[param.MemBWEff], rw2.ParamsFrom)
	}

	l := New()
	l.Model.Name, l.Hardware.GPU = "meta-llama/Llama-3.1-8B-Instruct", "H200-SXM"
	rl := resolve(l, path)
	if rl.Params[param.MemBWEff] != 0.66 || rl.Provenance[param.MemBWEff].Match != param.OriginTransferred {
		t.Errorf("Llama on H200: mem_bw_eff %g (%+v), want the H100's 0.66 transferred", rl.Params[param.MemBWEff], rl.Provenance[param.MemBWEff])
	}
	lp, _ := priors.Of(rl.Deployment)
	if rl.Params[param.AcceptTau] != lp[param.AcceptTau] || rl.Params[param.StepOverheadUS] == 1234 && priors.Keys(rl.Deployment).Engine != "vllm 0.32.x (V1)" {
		t.Errorf("Llama on H200: accept_tau %g (prior %g), step_overhead_us %g under engine %q: another model's or series' value applied",
			rl.Params[param.AcceptTau], lp[param.AcceptTau], rl.Params[param.StepOverheadUS], priors.Keys(rl.Deployment).Engine)
	}
}

// TestStockSet: among one generation's GPU sets the stock card is chosen when the others are
// cards run off their stock settings (a memory-clock offset, a power cap); two stock cards: none.
func TestStockSet(t *testing.T) {
	ws := &ParamSet{Key: "RTX-PRO-6000-Workstation"}
	oc := &ParamSet{Key: "RTX-PRO-6000-Workstation+mem6000"}
	mq := &ParamSet{Key: "RTX-PRO-6000-Max-Q+mem6000"}
	if got := stockSet([]*ParamSet{oc, ws, mq}); got != ws {
		t.Errorf("stock set %v, want the Workstation's", got)
	}
	if got := stockSet([]*ParamSet{ws, {Key: "RTX-5090"}}); got != nil {
		t.Errorf("two stock cards: %v, want none", got)
	}
}

// TestParamSetsScale: choosing a deployment's parameters from a file of many sets costs what it
// costs from a file of few (the sets are indexed once, the catalog read once): the allocations of
// one choice do not grow with the sets, the "several GPUs" note names a few and counts the rest,
// and the policy's description (copied into every plan) stays short. A set keyed by a GPU's alias
// still applies to it, the later of two sets naming the same GPU wins.
func TestParamSetsScale(t *testing.T) {
	r, err := Default().Resolve(ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	policy := func(n int) *ParamsPolicy {
		t.Helper()
		path := filepath.Join(t.TempDir(), "sets.toml")
		if err := os.WriteFile(path, setsFile(n), 0o644); err != nil {
			t.Fatal(err)
		}
		pol, err := NewParamsPolicy(ResolveOptions{ParamsFile: path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return pol
	}
	h100 := *r.Deployment
	h100.Hardware.GPU.Name, h100.Hardware.GPU.Generation, h100.Hardware.GPU.Aliases = "H100-SXM", "hopper", nil
	allocs := map[int]float64{}
	for _, n := range []int{300, 30000} {
		pol := policy(n)
		allocs[n] = testing.AllocsPerRun(20, func() {
			if _, err := pol.Choose(&h100); err != nil {
				t.Fatal(err)
			}
		})
		c, _ := pol.Choose(&h100)
		if n == 30000 && (!strings.Contains(c.From, "several GPUs") || !strings.Contains(c.From, "more)") || len(c.From) > 1000) {
			t.Errorf("%d sets: From %d bytes %.300q; want the several-GPUs note, a few names and a count", n, len(c.From), c.From)
		}
		if d := pol.Describe(); len(d) > 200 {
			t.Errorf("%d sets: description %d bytes, want a digest", n, len(d))
		}
	}
	if allocs[30000] > allocs[300]+10 { // a few for longer numbers in the note
		t.Errorf("allocations per choice: %v with 300 sets, %v with 30,000: want no growth with the sets", allocs[300], allocs[30000])
	}

	_, path := keyedFile(t,
		ParamSet{Level: "gpu", Key: " h100 ", Params: map[string]float64{"mem_bw_eff": 0.7}},
		ParamSet{Level: "gpu", Key: "H100 SXM", Params: map[string]float64{"mem_bw_eff": 0.75}})
	l := New()
	l.Model.Name, l.Hardware.GPU = "meta-llama/Llama-3.1-8B-Instruct", "H100-SXM"
	rl, err := l.Resolve(ResolveOptions{ParamsFile: path})
	if err != nil {
		t.Fatal(err)
	}
	if got := rl.Params[param.MemBWEff]; got != 0.75 || rl.Provenance[param.MemBWEff].Match != param.OriginCalibrated {
		t.Errorf("H100 with sets for H100-SXM, its aliases h100 and H100 SXM: mem_bw_eff %g (%+v), want the last set's 0.75 calibrated", got, rl.Provenance[param.MemBWEff])
	}
}
