package cost

import (
	"math"
	"testing"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/deploy/deploytest"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/model/priors"
)

// h200Deployment is a published checkpoint served with TP 8 on 8 H200 (no speculation: the MTP
// cost is asked for directly).
func h200Deployment(t testing.TB, id string) *deploy.Deployment {
	t.Helper()
	return deploytest.H200(t, deploytest.BuiltinHF(t, id), 8, deploy.Speculative{})
}

func priorsOf(d *deploy.Deployment) param.Values {
	p, _ := priors.Of(d)
	return p
}

// TestMTP: DeepSeek-R1's and GLM-5's MTP layer is one MoE layer with the model's attention; its
// first pass runs every scheduled token, the later ones one token per emitting request; the
// routed experts it touches are the MoE coverage of those tokens; k passes cost more than one and
// a model without MTP layers has no cost.
func TestMTP(t *testing.T) {
	for _, id := range []string{"deepseek-ai/DeepSeek-R1", "zai-org/GLM-5-FP8"} {
		d := h200Deployment(t, id)
		if d.Model.MTPLayers < 1 {
			t.Fatalf("%s: no MTP layers in the built-in config", id)
		}
		g, ok := d.Model.MTPLayer()
		if !ok || g.FFN.Kind != arch.FFNMoE || g.Attn.Kind == arch.AttnLinear || g.Count != 1 {
			t.Fatalf("%s: MTP layer %+v, want one MoE layer with full attention", id, g)
		}
		c := New(d, priorsOf(d))
		var s StepShape
		for i := 0; i < 16; i++ {
			s.Add(SeqWork{Start: 4000, Tokens: 2, Decode: true, Emits: true})
		}
		s.Add(SeqWork{Start: 0, Tokens: 1024, Emits: false})
		one, ok := c.MTP(&s, 1)
		if !ok || len(one.Passes) != 1 {
			t.Fatalf("%s: MTP(1) = %+v, %v", id, one, ok)
		}
		three, _ := c.MTP(&s, 3)
		if len(three.Passes) != 3 {
			t.Fatalf("%s: %d passes, want 3", id, len(three.Passes))
		}
		if p := three.Passes[0]; p.Rows != s.Tokens || p.Logits != 16 {
			t.Errorf("%s: first pass %d rows, %d logits; want %d, 16", id, p.Rows, p.Logits, s.Tokens)
		}
		for i, p := range three.Passes[1:] {
			if p.Rows != 16 {
				t.Errorf("%s: pass %d runs %d rows, want 16 (one per emitting request)", id, i+2, p.Rows)
			}
			if !(p.ExpertsRead > 0 && p.ExpertsRead < three.Passes[0].ExpertsRead) {
				t.Errorf("%s: pass %d reads %.1f experts, want fewer than the first pass's %.1f", id, i+2, p.ExpertsRead, three.Passes[0].ExpertsRead)
			}
			if p.Seconds <= 0 || p.Seconds >= three.Passes[0].Seconds {
				t.Errorf("%s: pass %d %.3f ms, want below the first pass's %.3f ms", id, i+2, p.Seconds*1e3, three.Passes[0].Seconds*1e3)
			}
		}
		// 16 tokens with top-8 of 256 experts (TP-sharded, one rank holds a share of all): the
		// busiest rank reads the experts the tokens touch, 256 (1 - (1 + 16 x 8 / (256 a))^-a).
		pr := priorsOf(d)
		alpha := pr.RoutingConcentration()
		f := d.Model.Layers[len(d.Model.Layers)-1].FFN
		want := float64(f.Experts) * -math.Expm1(-alpha*math.Log1p(16*float64(f.TopK)/(float64(f.Experts)*alpha)))
		if got := three.Passes[1].ExpertsRead; math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: second pass reads %.3f experts, want %.3f", id, got, want)
		}
		sum := 0.0
		for _, v := range three.Terms.Seconds {
			sum += v
		}
		if math.Abs(sum-three.Terms.GPUSeconds) > 1e-12 || three.Terms.GPUSeconds <= one.Terms.GPUSeconds {
			t.Errorf("%s: 3 passes %.3f ms (terms %.3f), 1 pass %.3f ms", id, three.Terms.GPUSeconds*1e3, sum*1e3, one.Terms.GPUSeconds*1e3)
		}
		// A pass reads at least the layer's routed experts it touches: weights bound at 16 rows.
		if three.Terms.Seconds[TermWeights] <= 0 {
			t.Errorf("%s: no weight-read time in the MTP passes", id)
		}
	}
	// No MTP layers: no cost.
	d := h200Deployment(t, "deepseek-ai/DeepSeek-R1")
	a := *d.Model
	a.MTPLayers = 0
	d.Model = &a
	c := New(d, priorsOf(d))
	var s StepShape
	s.Add(SeqWork{Start: 10, Tokens: 1, Decode: true, Emits: true})
	if got, ok := c.MTP(&s, 2); ok || len(got.Passes) != 0 || c.HasMTP() {
		t.Errorf("model without MTP layers: MTP = %+v, %v", got, ok)
	}
}

// TestWeightOnly: NVFP4 weights on a GPU without fp4 tensor cores read 4-bit bytes and compute
// at the bf16 rate times dequant_eff (vLLM's Marlin path); natively they run at the fp4 rate.
func TestWeightOnly(t *testing.T) {
	cat := hardware.BuiltinCatalog()
	h100, _ := cat.Find("H100-SXM")
	b200, _ := cat.Find("B200")
	p := param.Priors()
	k := NewKernels(&h100, &p)
	if class, wo := h100.GEMMClass(arch.NVFP4); class != arch.BF16 || !wo {
		t.Errorf("NVFP4 on H100: class %s, weight-only %v; want bf16, true", class, wo)
	}
	want := h100.BF16TFLOPS * 1e12 * p[param.GEMMEffBF16] * p[param.DequantEff]
	if got := k.GEMMRate(arch.NVFP4); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("NVFP4 rate on H100 %.4g, want %.4g", got, want)
	}
	if class, wo := h100.GEMMClass(arch.FP8); class != arch.FP8 || wo {
		t.Errorf("fp8 on H100: class %s, weight-only %v; want native fp8", class, wo)
	}
	a100, _ := cat.Find("A100-SXM-80GB")
	if class, wo := a100.GEMMClass(arch.FP8); class != arch.BF16 || !wo {
		t.Errorf("fp8 on A100: class %s, weight-only %v; want bf16 weight-only (Marlin)", class, wo)
	}
	if ok, why := a100.SupportsWeights(arch.FP8); !ok {
		t.Errorf("fp8 on A100 refused: %s", why)
	}
	kb := NewKernels(&b200, &p)
	if got, want := kb.GEMMRate(arch.NVFP4), b200.FP4TFLOPS*1e12*p[param.GEMMEffFP4]; math.Abs(got/want-1) > 1e-12 {
		t.Errorf("NVFP4 rate on B200 %.4g, want the fp4 rate %.4g", got, want)
	}
	// Memory-bound at one row: a weight-only NVFP4 GEMM reads a quarter of the bf16 bytes (plus
	// scales).
	n := 4096.0 * 14336
	bf, fp4 := k.GEMMSeconds(1, n, arch.BF16), k.GEMMSeconds(1, n, arch.NVFP4)
	fixed := k.KernelFixedSeconds()
	if r := (fp4 - fixed) / (bf - fixed); math.Abs(r-0.5625/2) > 1e-9 {
		t.Errorf("one-row NVFP4 / bf16 GEMM time %.4f, want the byte ratio %.4f", r, 0.5625/2)
	}
}

// TestAllReduceChoice: vLLM's custom all-reduce below 8 MiB where enabled, NCCL above and where
// it is not (more than two PCIe-only GPUs).
func TestAllReduceChoice(t *testing.T) {
	cat := hardware.BuiltinCatalog()
	h100, _ := cat.Find("H100-SXM")
	pro, _ := cat.Find("RTX-PRO-6000-Server")
	e := deploy.DefaultEngineConfig()
	e.TensorParallel = 8
	d := &deploy.Deployment{Hardware: hardware.Machine{GPU: h100, Count: 8}, Engine: e}
	if on, why := d.CustomAllReduce(); !on {
		t.Errorf("8 x H100 SXM: custom all-reduce off (%s)", why)
	}
	e.TensorParallel = 4
	d = &deploy.Deployment{Hardware: hardware.Machine{GPU: pro, Count: 4}, Engine: e}
	if on, _ := d.CustomAllReduce(); on {
		t.Errorf("4 PCIe-only GPUs: custom all-reduce on, want NCCL")
	}
	e.TensorParallel = 2
	d = &deploy.Deployment{Hardware: hardware.Machine{GPU: pro, Count: 2}, Engine: e}
	if on, _ := d.CustomAllReduce(); !on {
		t.Errorf("2 PCIe GPUs: custom all-reduce off, want on")
	}
	e.DisableCustomAllReduce = true
	d = &deploy.Deployment{Hardware: hardware.Machine{GPU: pro, Count: 2}, Engine: e}
	if on, _ := d.CustomAllReduce(); on {
		t.Errorf("--disable-custom-all-reduce: still on")
	}
	p := param.Priors()
	k := NewKernels(&h100, &p)
	small, big := 64.0*1024, 16.0*1024*1024
	if got, want := k.AllReduceSeconds(8, small, true), k.CustomAllReduceSeconds(8, small); got != want {
		t.Errorf("64 KiB with custom: %g, want the custom kernel's %g", got, want)
	}
	if got, want := k.AllReduceSeconds(8, big, true), k.NCCLAllReduceSeconds(8, big); got != want {
		t.Errorf("16 MiB: %g, want NCCL's %g (above the custom buffer)", got, want)
	}
	// NCCL's fixed time: nccl_small_latency_us below NCCLSmallMaxBytes, nccl_latency_us from it;
	// the payload term is the same line.
	p[param.NCCLSmallLatencyUS], p[param.NCCLLatencyUS] = 20, 50
	k = NewKernels(&pro, &p)
	payload := func(b float64) float64 {
		return b * 2 * 3 / 4 / (pro.CollectiveFabric(4).BytesPerS * p[param.NCCLBWEff])
	}
	for _, c := range []struct{ bytes, lat float64 }{{64 << 10, 20}, {NCCLSmallMaxBytes - 1, 20}, {NCCLSmallMaxBytes, 50}, {4 << 20, 50}} {
		if got, want := k.NCCLAllReduceSeconds(4, c.bytes), c.lat*1e-6+payload(c.bytes); math.Abs(got/want-1) > 1e-12 {
			t.Errorf("NCCL all-reduce of %.0f bytes over 4 PCIe GPUs: %g s, want %g (fixed %g us)", c.bytes, got, want, c.lat)
		}
	}
}
