package deploy

import (
	"strings"
	"testing"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/hardware"
)

func TestParseVersion(t *testing.T) {
	for _, c := range []struct {
		s    string
		want Version
	}{
		{"0.28.0", Version{0, 28, 0}}, {"v0.11.1", Version{0, 11, 1}}, {"0.32.1rc1.dev96+g8c60cf07b", Version{0, 32, 1}},
		{"0.9", Version{0, 9, 0}}, {"1.0.0.post1", Version{1, 0, 0}},
	} {
		got, err := ParseVersion(c.s)
		if err != nil || got != c.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", c.s, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "latest", "0", "x.1.2"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q): no error", bad)
		}
	}
	if !(Version{0, 28, 0}).AtLeast(Version{0, 27, 9}) || (Version{0, 13, 5}).AtLeast(Version{0, 14, 0}) {
		t.Error("AtLeast")
	}
}

// TestBatchDefaults: get_batch_defaults' tiers for the API server.
func TestBatchDefaults(t *testing.T) {
	v28, v27 := Version{0, 28, 0}, Version{0, 27, 0}
	for _, c := range []struct {
		gpu          hardware.GPU
		v            Version
		tokens, seqs int
	}{
		{hardware.GPU{Name: "B200", MemoryGiB: 179}, v28, 16384, 1024},
		{hardware.GPU{Name: "B200", MemoryGiB: 179}, v27, 8192, 1024},
		{hardware.GPU{Name: "H100-SXM", MemoryGiB: 79.6}, v28, 8192, 1024},
		{hardware.GPU{Name: "A100-80GB", MemoryGiB: 79.2}, v28, 2048, 256},
		{hardware.GPU{Name: "x", Aliases: []string{"NVIDIA A100-SXM4-80GB"}, MemoryGiB: 79.2}, v28, 2048, 256},
		{hardware.GPU{Name: "L40S", MemoryGiB: 45}, v28, 2048, 256},
	} {
		tok, seqs, _ := batchDefaults(&c.gpu, c.v, false)
		if tok != c.tokens || seqs != c.seqs {
			t.Errorf("%s %.0f GiB v%s: %d / %d, want %d / %d", c.gpu.Name, c.gpu.MemoryGiB, c.v, tok, seqs, c.tokens, c.seqs)
		}
	}
	// The LLM class (offline): 16384 / 1024 from 70 GiB, 8192 / 256 below or on an A100.
	for _, c := range []struct {
		gpu          hardware.GPU
		tokens, seqs int
	}{
		{hardware.GPU{Name: "H100-SXM", MemoryGiB: 79.6}, 16384, 1024},
		{hardware.GPU{Name: "A100-80GB", MemoryGiB: 79.2}, 8192, 256},
	} {
		tok, seqs, _ := batchDefaults(&c.gpu, v28, true)
		if tok != c.tokens || seqs != c.seqs {
			t.Errorf("LLM class %s: %d / %d, want %d / %d", c.gpu.Name, tok, seqs, c.tokens, c.seqs)
		}
	}
}

func denseModel(maxLen int) *arch.Arch {
	a := &arch.Arch{Name: "m", Family: "llama", Hidden: 4096, Vocab: 32000, MaxModelLen: maxLen,
		Layers: []arch.LayerGroup{{Count: 32, Attn: arch.Attention{Kind: arch.AttnGQA, Heads: 32, KVHeads: 8, HeadDim: 128}, FFN: arch.FFN{Kind: arch.FFNDense, Intermediate: 14336}}}}
	if err := a.Normalize(); err != nil {
		panic(err)
	}
	return a
}

// TestResolveAdjustments: the adjustments vLLM makes only to values the user left unset.
func TestResolveAdjustments(t *testing.T) {
	h100 := hardware.GPU{Name: "H100-SXM", MemoryGiB: 79.6}
	tgt := ModelGPU{Model: denseModel(4096), GPU: &h100}
	// No chunked prefill: the token budget rises to max_model_len; the capture size follows
	// min(seqs x 2, 512, tokens).
	e, _, err := Resolve(EngineArgs{ChunkedPrefill: Ptr(false), MaxModelLen: Ptr(16384), AllowLongMaxModelLen: true}, tgt)
	if err != nil || e.MaxNumBatchedTokens != 16384 {
		t.Errorf("no chunked prefill: %d tokens, %v; want 16384", e.MaxNumBatchedTokens, err)
	}
	// A short max_model_len caps the tokens at seqs x len, and seqs at the tokens.
	e, _, err = Resolve(EngineArgs{MaxModelLen: Ptr(4), MaxNumSeqs: Ptr(8)}, tgt)
	if err != nil || e.MaxNumBatchedTokens != 32 || e.MaxNumSeqs != 8 || e.MaxCaptureSize != 16 {
		t.Errorf("tiny: %+v, %v", e, err)
	}
	e, _, err = Resolve(EngineArgs{MaxModelLen: Ptr(2), MaxNumBatchedTokens: Ptr(64)}, tgt)
	if err != nil || e.MaxNumSeqs != 64 {
		t.Errorf("seqs capped at the given tokens: %d, %v", e.MaxNumSeqs, err)
	}
	// Given values are kept, even when vLLM would choose otherwise.
	e, _, err = Resolve(EngineArgs{MaxNumBatchedTokens: Ptr(100000), MaxNumSeqs: Ptr(3)}, tgt)
	if err != nil || e.MaxNumBatchedTokens != 100000 || e.MaxNumSeqs != 3 {
		t.Errorf("given values: %+v, %v", e, err)
	}
	for _, c := range []struct {
		a    EngineArgs
		want string
	}{
		{EngineArgs{Speculative: &Speculative{Method: "mtp"}}, "method mtp without a model needs num_speculative_tokens"},
		{EngineArgs{Speculative: &Speculative{Method: "mtp", Model: "m"}}, "which model \"m\" does not have"},
		{EngineArgs{Speculative: &Speculative{Method: "eagle", Model: "d"}}, "give num_speculative_tokens"},
		{EngineArgs{MaxModelLen: Ptr(8192)}, "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"},
		{EngineArgs{Version: "next"}, `engine.version = "next"`},
	} {
		if _, _, err := Resolve(c.a, tgt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Resolve(%+v): err = %v, want %q", c.a, err, c.want)
		}
	}
	if _, _, err := Resolve(EngineArgs{}, ModelGPU{Model: denseModel(0), GPU: &h100}); err == nil || !strings.Contains(err.Error(), "give --max-model-len") {
		t.Errorf("unknown length: err = %v", err)
	}
}

// TestMinimize: the shortest flags that give the same engine; given values that differ stay.
func TestMinimize(t *testing.T) {
	h100 := hardware.GPU{Name: "H100-SXM", MemoryGiB: 79.6}
	tgt := ModelGPU{Model: denseModel(131072), GPU: &h100}
	full, _, err := Resolve(EngineArgs{MaxNumSeqs: Ptr(64)}, tgt)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Minimize(ArgsOf(full), tgt)
	if err != nil {
		t.Fatal(err)
	}
	if m.MaxNumSeqs == nil || *m.MaxNumSeqs != 64 || m.TensorParallel != nil || m.MaxModelLen != nil || m.MaxCaptureSize != nil || m.GPUMemoryUtilization != nil || m.Speculative != nil {
		t.Errorf("Minimize kept %+v", m)
	}
	back, _, err := Resolve(m, tgt)
	if err != nil || !back.Equal(&full) {
		t.Errorf("the minimized flags resolve to %+v, %v; want %+v", back, err, full)
	}
}
