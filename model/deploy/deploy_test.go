package deploy

import (
	"math"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
)

func seedDeployment(t testing.TB) *Deployment {
	t.Helper()
	a, err := arch.Builtin("glm-5.3-flash")
	if err != nil {
		t.Fatal(err)
	}
	dr, err := arch.Builtin("glm-5.3-flash-dflash2")
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.BuiltinCatalog().Find("rtx-pro-6000")
	if err != nil {
		t.Fatal(err)
	}
	e := DefaultEngineConfig()
	e.TensorParallel, e.ExpertParallel, e.MaxModelLen, e.GPUMemoryUtilization = 4, true, 1<<20, 0.92
	e.KVCacheDType, e.MaxNumSeqs = "fp8", 32
	e.Speculative = Speculative{Method: "dflash", NumTokens: 7}
	return &Deployment{Model: a, Drafter: dr, Hardware: hardware.Machine{GPU: g, Count: 4}, Engine: e}
}

func TestGLMParams(t *testing.T) {
	d := seedDeployment(t)
	c := d.Model.Params()
	// The built-in GLM-5.3-Flash: routed experts 42 x 288 x 25.2 M = about 304 B, total about
	// 313 B, active about 16 B per token.
	if got := float64(c.RoutedExperts) / 1e9; math.Abs(got-304.4) > 1 {
		t.Errorf("routed experts %.1f B, want about 304.4 B", got)
	}
	if got := float64(c.Total) / 1e9; math.Abs(got-313) > 3 {
		t.Errorf("total %.1f B, want about 313 B", got)
	}
	if got := float64(c.Active) / 1e9; got < 15 || got > 18 {
		t.Errorf("active %.1f B, want about 16 B", got)
	}
	// NVFP4 experts under EP 4: 304.4 B x 0.5625 / 4 = about 42.8 GB per GPU.
	w := d.WeightsPerGPU()
	if got := w.RoutedExperts / 1e9; math.Abs(got-42.8) > 0.5 {
		t.Errorf("routed experts per GPU %.2f GB, want about 42.8 GB", got)
	}
}

func TestKVSpecs(t *testing.T) {
	d := seedDeployment(t)
	p := param.Priors()
	specs := d.KVSpecs(&p)
	byName := map[string]arch.KVSpec{}
	for _, s := range specs {
		byName[s.Name] = s
	}
	// fp8_ds_mla: 512 latent + 16 scale + 128 rope bytes, plus a 132-byte indexer key per 4 tokens.
	if s := byName["sparse_mla"]; s.Layers != 11 || s.BytesPerToken != 656+33 {
		t.Errorf("sparse MLA spec %+v, want 11 layers x 689 B/token", s)
	}
	// KDA state per GPU: 16 heads x 128 x 128 x 4 B + conv 3 x 6,144 x 2 B.
	if s := byName["linear"]; s.Layers != 34 || s.StateBytes != 16*128*128*4+3*6144*2 {
		t.Errorf("linear spec %+v, want 34 layers x 1,085,440 B", s)
	}
	// Drafter GQA bf16: 8 KV heads / 4 ranks x 256 x 2 B, sliding 2,048.
	if s := byName["drafter_gqa"]; s.Layers != 5 || s.BytesPerToken != 1024 || s.Kind != arch.SpecSliding {
		t.Errorf("drafter spec %+v, want 5 sliding layers x 1,024 B/token", s)
	}
}

func TestDeploymentValidate(t *testing.T) {
	d := seedDeployment(t)
	if err := d.Validate(); err != nil {
		t.Fatalf("seed deployment: %v", err)
	}
	bad := *d
	bad.Engine.TensorParallel = 3
	bad.Hardware.Count = 3
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "does not divide") {
		t.Errorf("TP 3: err = %v, want a heads-divisibility error", err)
	}
	bad = *d
	bad.Hardware.Count = 8
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "hardware.count = 8") {
		t.Errorf("count mismatch: err = %v", err)
	}
	// NVFP4 without fp4 tensor cores: vLLM runs it weight-only (Marlin) on NVIDIA GPUs from
	// Ampere on, and refuses it on AMD GPUs.
	bad = *d
	h100, _ := hardware.BuiltinCatalog().Find("H100-SXM")
	bad.Hardware.GPU = h100
	if err := bad.Validate(); err != nil {
		t.Errorf("NVFP4 on H100: err = %v, want it accepted (weight-only Marlin)", err)
	}
	bad = *d
	mi, _ := hardware.BuiltinCatalog().Find("MI300X")
	bad.Hardware.GPU = mi
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "NVFP4") {
		t.Errorf("NVFP4 on MI300X: err = %v, want a format error", err)
	}
	// vLLM's SchedulerConfig refuses max_num_batched_tokens < max_num_seqs; equal is accepted.
	bad = *d
	bad.Engine.MaxNumBatchedTokens, bad.Engine.MaxNumSeqs = 16, 32
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "max_num_batched_tokens = 16 is below max_num_seqs = 32") {
		t.Errorf("16 batched tokens, 32 sequences: err = %v, want vLLM's refusal", err)
	}
	bad.Engine.MaxNumBatchedTokens = 32
	if err := bad.Validate(); err != nil {
		t.Errorf("32 batched tokens, 32 sequences: %v, want it accepted", err)
	}
}

func TestMemoryFitError(t *testing.T) {
	d := seedDeployment(t)
	d.Engine.GPUMemoryUtilization = 0.4
	p := param.Priors()
	m := d.Memory(&p)
	msg := m.FitError()
	if m.AvailableKV > 0 || !strings.Contains(msg, "GiB per GPU") {
		t.Errorf("at 40 %% utilisation: available %.1f GiB, message %q: want a does-not-fit message", m.AvailableKV/(1<<30), msg)
	}
}

// TestWeightsOneGPU checks that the per-GPU split of the weights keeps every byte: on one GPU it is
// the one-copy size of every weight set.
func TestWeightsOneGPU(t *testing.T) {
	d := seedDeployment(t)
	d.Engine.TensorParallel, d.Engine.ExpertParallel, d.Hardware.Count = 1, false, 1
	d.Drafter = nil
	var want float64
	for _, w := range d.Model.WeightSets() {
		want += w.Bytes()
	}
	// Summed in another order: equal within a few ulps.
	if got := d.WeightsPerGPU().Total(); math.Abs(got-want) > 1e-12*want {
		t.Errorf("weights on one GPU %v B, want %v B", got, want)
	}
}

// TestSparsePrefillKernel: FlashMLA's read-once sparse prefill on Hopper and Blackwell datacenter
// GPUs, the per-query gather on the seed's RTX PRO 6000 (sm120) and on MI300X; a named backend
// decides over the GPU.
func TestSparsePrefillKernel(t *testing.T) {
	d := seedDeployment(t)
	cat := hardware.BuiltinCatalog()
	for _, c := range []struct {
		gpu, backend string
		want         bool
	}{
		{"H200-SXM", "", true}, {"H100-SXM", "", true}, {"B200", "", true},
		{"rtx-pro-6000", "", false}, {"MI300X", "", false},
		{"H200-SXM", "FLASHINFER_MLA_SPARSE_SM120", false}, {"rtx-pro-6000", "FLASHMLA_SPARSE", true},
	} {
		g, err := cat.Find(c.gpu)
		if err != nil {
			t.Fatal(err)
		}
		x := *d
		x.Hardware.GPU, x.Engine.AttentionBackend = g, c.backend
		if got, why := x.SparsePrefillKernel(); got != c.want || why == "" {
			t.Errorf("%s backend %q: read once %v (%s), want %v", c.gpu, c.backend, got, why, c.want)
		}
	}
}

// TestKVCacheMemoryBytes: --kv-cache-memory-bytes sets the KV cache per GPU whatever
// gpu_memory_utilization says (vLLM skips the profile's budget), and a size that with the weights
// and reserves exceeds the device is refused with the numbers.
func TestKVCacheMemoryBytes(t *testing.T) {
	p := param.Priors()
	d := seedDeployment(t)
	base := d.Memory(&p)
	for _, util := range []float64{0.5, 0.92} {
		d := seedDeployment(t)
		d.Engine.GPUMemoryUtilization = util
		d.Engine.KVCacheMemoryBytes = 4 << 30
		m := d.Memory(&p)
		if m.AvailableKV != 4<<30 || m.FitError() != "" {
			t.Errorf("util %.2f: KV cache %.3g B (%q), want 4 GiB", util, m.AvailableKV, m.FitError())
		}
	}
	d.Engine.KVCacheMemoryBytes = int(base.TotalBytes - base.NonKV() + (1 << 30))
	m := d.Memory(&p)
	if msg := m.FitError(); !strings.Contains(msg, "kv_cache_memory_bytes") || !strings.Contains(msg, "more than the GPU's") {
		t.Errorf("a cache 1 GiB above what fits: %q, want the out-of-memory refusal", msg)
	}
	d.Engine.KVCacheMemoryBytes = -1
	if err := d.Engine.Validate(); err == nil {
		t.Errorf("kv_cache_memory_bytes -1 accepted")
	}
	// The flag resolves into the configuration, and a configuration's flags give it back.
	e, _, err := Resolve(EngineArgs{KVCacheMemoryBytes: Ptr(1 << 32), MaxModelLen: Ptr(8192)}, ModelGPU{Model: d.Model, GPU: &d.Hardware.GPU})
	if err != nil || e.KVCacheMemoryBytes != 1<<32 {
		t.Fatalf("Resolve: %v, kv_cache_memory_bytes %d", err, e.KVCacheMemoryBytes)
	}
	if a := ArgsOf(e); a.KVCacheMemoryBytes == nil || *a.KVCacheMemoryBytes != 1<<32 {
		t.Errorf("ArgsOf lost kv_cache_memory_bytes")
	}
}
