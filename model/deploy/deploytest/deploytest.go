// Package deploytest builds the deployments that the tests of several packages share: the seed
// deployment (Seed), a built-in Hugging Face model (BuiltinHF), a model on H200s (H200) and a
// small dense model (Dense). It is for tests only; a failure to build one stops the test.
//
// Tests of package deploy itself cannot import it (it imports deploy); they keep their own
// helpers.
package deploytest

import (
	"testing"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/hf"
)

// Seed is the seed deployment: the built-in GLM-5.3-Flash with its DFlash drafter (k 7) on four
// RTX PRO 6000, TP 4 with expert parallel, max_model_len 1M, gpu_memory_utilization 0.92, an fp8
// KV cache and 32 sequences.
func Seed(t testing.TB) *deploy.Deployment {
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
	e := deploy.DefaultEngineConfig()
	e.TensorParallel, e.ExpertParallel, e.MaxModelLen, e.GPUMemoryUtilization = 4, true, 1<<20, 0.92
	e.KVCacheDType, e.MaxNumSeqs = "fp8", 32
	e.Speculative = deploy.Speculative{Method: "dflash", NumTokens: 7}
	return &deploy.Deployment{Model: a, Drafter: dr, Hardware: hardware.Machine{GPU: g, Count: 4}, Engine: e}
}

// BuiltinHF is the built-in registry's model id (hf.Builtin).
func BuiltinHF(t testing.TB, id string) *arch.Arch {
	t.Helper()
	a, _, err := hf.Builtin(id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// H200 serves a with tensor parallel tp on tp H200s, max_model_len 32768, speculative decoding
// spec and vLLM's other defaults.
func H200(t testing.TB, a *arch.Arch, tp int, spec deploy.Speculative) *deploy.Deployment {
	t.Helper()
	g, err := hardware.BuiltinCatalog().Find("H200")
	if err != nil {
		t.Fatal(err)
	}
	e := deploy.DefaultEngineConfig()
	e.TensorParallel, e.MaxModelLen, e.Speculative = tp, 32768, spec
	return &deploy.Deployment{Model: a, Hardware: hardware.Machine{GPU: g, Count: tp}, Engine: e}
}

// Dense is a Llama-shaped dense GQA model (32 layers, hidden 4096, 32 heads over 8 KV heads)
// whose config gives max_model_len maxLen.
func Dense(maxLen int) *arch.Arch {
	a := &arch.Arch{Name: "m", Family: "llama", Hidden: 4096, Vocab: 32000, MaxModelLen: maxLen,
		Layers: []arch.LayerGroup{{Count: 32, Attn: arch.Attention{Kind: arch.AttnGQA, Heads: 32, KVHeads: 8, HeadDim: 128}, FFN: arch.FFN{Kind: arch.FFNDense, Intermediate: 14336}}}}
	if err := a.Normalize(); err != nil {
		panic(err)
	}
	return a
}
