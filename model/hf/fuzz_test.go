package hf

import (
	"path/filepath"
	"testing"

	"github.com/servesim/servesim/model/arch"
)

func addSeeds(f *testing.F, add func(b []byte)) {
	paths, err := filepath.Glob("testdata/*/config.json")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed configs: %v", err)
	}
	builtins, err := filepath.Glob("data/models/*/config.json")
	if err != nil || len(builtins) == 0 {
		f.Fatalf("no built-in configs: %v", err)
	}
	for _, p := range append(paths, builtins...) {
		add(readFile(f, p))
	}
	add([]byte(`{}`))
	add([]byte(`{"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 1, "vocab_size": 4, "num_attention_heads": 2, "intermediate_size": 4}`))
}

// checkArch asserts what every successfully parsed config satisfies.
func checkArch(t *testing.T, a *arch.Arch) {
	if a.NumLayers() < 1 || a.NumLayers() > maxLayers {
		t.Fatalf("NumLayers = %d", a.NumLayers())
	}
	p := a.Params()
	if p.Total <= 0 || p.Active <= 0 || p.Active > p.Total {
		t.Fatalf("params %+v: want 0 < active <= total", p)
	}
	for _, d := range []arch.DType{arch.BF16, arch.FP8} {
		if kv := a.KVBytesPerToken(1, d); kv < 0 {
			t.Fatalf("KVBytesPerToken(%s) = %v", d, kv)
		}
	}
	// Every dtype must be one BytesPerParam knows (it panics otherwise).
	_ = a.EmbedDType.BytesPerParam()
	for _, g := range a.Layers {
		_ = g.Attn.DType.BytesPerParam() + g.FFN.DType.BytesPerParam() + g.FFN.ExpertDType.BytesPerParam()
	}
}

func FuzzParse(f *testing.F) {
	addSeeds(f, func(b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, cfg []byte) {
		a, err := Parse(cfg, "fuzz")
		if err != nil {
			return
		}
		checkArch(t, a)
	})
}

func FuzzParseWithQuant(f *testing.F) {
	quants := [][]byte{
		nil,
		[]byte(`{"quantization": {"quant_algo": "NVFP4", "exclude_modules": ["lm_head", "model.layers.*.self_attn*"]}}`),
		[]byte(`{"quantization": {"quant_algo": "FP8", "exclude_modules": ["*a*b*c*d*e*f*g*"]}}`),
		[]byte(`{"quantization": {"quant_algo": "FP8", "exclude_modules": ["re:.*(a|b)+c", "LlamaAttention"]}}`),
	}
	addSeeds(f, func(b []byte) {
		for _, q := range quants {
			f.Add(b, q)
		}
	})
	f.Fuzz(func(t *testing.T, cfg, quant []byte) {
		a, err := ParseWithQuant(cfg, quant, "fuzz")
		if err != nil {
			return
		}
		checkArch(t, a)
	})
}
