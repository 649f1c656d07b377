package deploy

import (
	"testing"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/hardware"
)

func mlaModel() *arch.Arch {
	a := &arch.Arch{Name: "mla", Family: "deepseek_v3", Hidden: 7168, Vocab: 129280, MaxModelLen: 163840,
		Layers: []arch.LayerGroup{{Count: 4, Attn: arch.Attention{Kind: arch.AttnMLA, Heads: 128, QLoraRank: 1536, KVLoraRank: 512, QKRopeDim: 64, QKNopeDim: 128, VHeadDim: 128},
			FFN: arch.FFN{Kind: arch.FFNDense, Intermediate: 18432}}}}
	if err := a.Normalize(); err != nil {
		panic(err)
	}
	return a
}

// TestV0Defaults: the V0 engine's defaults by version, usage context and model (v0.go).
func TestV0Defaults(t *testing.T) {
	cat := hardware.BuiltinCatalog()
	h100, _ := cat.Find("H100-SXM")
	mi300, _ := cat.Find("MI300X")
	for _, c := range []struct {
		name            string
		args            EngineArgs
		model           *arch.Arch
		gpu             hardware.GPU
		chunked, prefix bool
		tokens, seqs    int
		capture         int
	}{
		// 0.6.3 API server, max_model_len 91680 > 32K: chunked prefill on with 512 tokens.
		{"0.6.3 server long", EngineArgs{Version: "0.6.3.post2.dev308+gb489fc3c", MaxModelLen: Ptr(91680)}, denseModel(131072), h100, true, false, 512, 256, 256},
		// The LLM class alike (create_engine_config has no usage context in 0.6.x).
		{"0.6.3 LLM class", EngineArgs{Version: "0.6.3", Usage: UsageLLMClass, MaxModelLen: Ptr(91680)}, denseModel(131072), h100, true, false, 512, 256, 256},
		// Chunked prefill off by flag: whole prompts, max(max_model_len, 2048).
		{"0.6.3 no chunking", EngineArgs{Version: "0.6.3", ChunkedPrefill: Ptr(false), MaxModelLen: Ptr(91680)}, denseModel(131072), h100, false, false, 91680, 256, 256},
		// max_model_len 4096: off; 2048 is the floor of the budget.
		{"0.7.3 short", EngineArgs{Version: "0.7.3", MaxModelLen: Ptr(1024)}, denseModel(4096), h100, false, false, 2048, 256, 256},
		// 0.7.x long context: chunked prefill's 2048.
		{"0.7.2 long", EngineArgs{Version: "0.7.2"}, denseModel(131072), h100, true, false, 2048, 256, 256},
		// MLA before 0.7.4: forced off even when asked for.
		{"MLA 0.7.3", EngineArgs{Version: "0.7.3.dev138", PrefixCaching: Ptr(true)}, mlaModel(), mi300, false, false, 163840, 256, 256},
		// MLA on CUDA from 0.7.4: the long-context rule applies; given flags are kept.
		{"MLA 0.7.4 CUDA", EngineArgs{Version: "0.7.4.dev181", PrefixCaching: Ptr(true), MaxNumSeqs: Ptr(64)}, mlaModel(), h100, true, true, 2048, 64, 64},
		// MLA on ROCm from 0.7.4: still forced off.
		{"MLA 0.7.4 ROCm", EngineArgs{Version: "0.7.4"}, mlaModel(), mi300, false, false, 163840, 256, 256},
	} {
		g := c.gpu
		e, _, err := Resolve(c.args, ModelGPU{Model: c.model, GPU: &g})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if e.ChunkedPrefill != c.chunked || e.PrefixCaching != c.prefix || e.MaxNumBatchedTokens != c.tokens || e.MaxNumSeqs != c.seqs ||
			e.MaxCaptureSize != c.capture || e.AsyncScheduling || e.GPUMemoryUtilization != 0.9 {
			t.Errorf("%s: chunked %v prefix %v tokens %d seqs %d capture %d async %v util %v; want %v %v %d %d %d false 0.9",
				c.name, e.ChunkedPrefill, e.PrefixCaching, e.MaxNumBatchedTokens, e.MaxNumSeqs, e.MaxCaptureSize, e.AsyncScheduling, e.GPUMemoryUtilization,
				c.chunked, c.prefix, c.tokens, c.seqs, c.capture)
		}
	}
	if !IsV0("0.7.4.dev181") || IsV0("0.8.0") || IsV0("") {
		t.Errorf("IsV0: 0.7.4.dev181 %v, 0.8.0 %v, default %v; want true, false, false", IsV0("0.7.4.dev181"), IsV0("0.8.0"), IsV0(""))
	}
}
