package hardware

import (
	"testing"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/param"
)

// TestGenerationPriors: every generation gives a prior, with an interval around it inside the
// parameter's bounds and a source, for every gpu-level parameter over either fabric, once.
func TestGenerationPriors(t *testing.T) {
	for _, g := range Generations() {
		for _, fabric := range []LinkKind{LinkNVLink, LinkPCIe} {
			ps, err := GenerationPriors(Generation(g[0]), fabric)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[param.ID]bool{}
			for _, p := range ps {
				d := p.ID.Def()
				if d.Level != param.LevelGPU {
					t.Errorf("%s/%s: %s is %s-level, not gpu", g[0], fabric, d.Name, d.Level)
				}
				if seen[p.ID] {
					t.Errorf("%s/%s: %s given twice", g[0], fabric, d.Name)
				}
				seen[p.ID] = true
				if !(d.Lo <= p.Lo && p.Lo <= p.Value && p.Value <= p.Hi && p.Hi <= d.Hi) {
					t.Errorf("%s/%s: %s = %g in [%g, %g], bounds [%g, %g]", g[0], fabric, d.Name, p.Value, p.Lo, p.Hi, d.Lo, d.Hi)
				}
				if p.Source == "" {
					t.Errorf("%s/%s: %s has no source", g[0], fabric, d.Name)
				}
			}
			for _, d := range param.Defs() {
				if d.Level == param.LevelGPU && !seen[d.ID] {
					t.Errorf("%s/%s: no prior for %s", g[0], fabric, d.Name)
				}
			}
		}
	}
	if _, err := GenerationPriors("volta", LinkNVLink); err == nil {
		t.Errorf("unknown generation accepted")
	}
}

// TestCatalogGenerations: every built-in GPU names its generation; the fabric of a TP group
// beyond a bridged pair is PCIe.
func TestCatalogGenerations(t *testing.T) {
	c := BuiltinCatalog()
	for _, g := range c.GPUs {
		if g.Generation == "" {
			t.Errorf("%s: no generation", g.Name)
		}
		if ps, note := g.Priors(1); len(ps) == 0 || note != "" {
			t.Errorf("%s: no priors (%s)", g.Name, note)
		}
	}
	for _, x := range []struct {
		gpu   string
		ranks int
		want  LinkKind
		gbps  float64
	}{
		{"H100-SXM", 8, LinkNVLink, 450}, {"H100-NVL", 2, LinkNVLink, 300}, {"H100-NVL", 4, LinkPCIe, 64},
		{"A100-PCIe-80GB", 4, LinkPCIe, 32}, {"RTX-PRO-6000-Server", 4, LinkPCIe, 64}, {"L4", 2, LinkPCIe, 32},
	} {
		g, err := c.Find(x.gpu)
		if err != nil {
			t.Fatal(err)
		}
		f := g.CollectiveFabric(x.ranks)
		if f.Kind != x.want || f.BytesPerS != x.gbps*1e9 {
			t.Errorf("%s x %d: fabric %s at %g GB/s, want %s at %g", x.gpu, x.ranks, f.Kind, f.BytesPerS/1e9, x.want, x.gbps)
		}
	}
}

// TestWeightPaths: formats without tensor cores run weight-only where vLLM has kernels, and are
// refused where it has none.
func TestWeightPaths(t *testing.T) {
	c := BuiltinCatalog()
	for _, x := range []struct {
		gpu        string
		dt         arch.DType
		class      arch.DType
		weightOnly bool
		ok         bool
	}{
		{"B200", arch.NVFP4, arch.NVFP4, false, true},
		{"H100-SXM", arch.NVFP4, arch.BF16, true, true},
		{"H100-SXM", arch.MXFP4, arch.BF16, true, true},
		{"H100-SXM", arch.FP8, arch.FP8, false, true},
		{"A100-SXM-80GB", arch.FP8, arch.BF16, true, true},
		{"A100-SXM-80GB", arch.NVFP4, arch.BF16, true, true},
		{"L40S", arch.FP8, arch.FP8, false, true},
		{"MI300X", arch.MXFP4, arch.BF16, true, true},
		{"MI300X", arch.NVFP4, arch.BF16, true, false},
		{"MI355X", arch.MXFP4, arch.NVFP4, false, true},
		{"H100-SXM", arch.INT4, arch.BF16, true, true},
	} {
		g, _ := c.Find(x.gpu)
		class, wo := g.GEMMClass(x.dt)
		ok, why := g.SupportsWeights(x.dt)
		if class != x.class || wo != x.weightOnly || ok != x.ok {
			t.Errorf("%s on %s: class %s weight-only %v supported %v (%s); want %s %v %v", x.dt, x.gpu, class, wo, ok, why, x.class, x.weightOnly, x.ok)
		}
	}
}
