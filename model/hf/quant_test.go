package hf

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/arch"
)

// Llama-3.1-8B by hand: per layer q 4096x4096, k and v 4096x1024 each, o 4096x4096 = 41,943,040
// attention weights and 3 x 4096 x 14336 = 176,160,768 MLP weights; 32 layers hold 6,979,321,856
// linear weights (= 64 x 109,051,904 = 16,384 x 425,984).
const (
	llamaAttn   = 41943040
	llamaMLP    = 176160768
	llamaLinear = 32 * (llamaAttn + llamaMLP) // 6,979,321,856
)

// withQuant returns the built-in Llama-3.1-8B config with quantization_config q (JSON).
func withQuant(t *testing.T, q string) *arch.Arch {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(q), &v); err != nil {
		t.Fatal(err)
	}
	a, err := Parse(edit(t, builtinConfig(t, "meta-llama/Llama-3.1-8B-Instruct"), func(m map[string]any) { m["quantization_config"] = v }), "llama-q")
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return a
}

// ct builds a compressed-tensors config with one group targeting Linear.
func ct(weights, input string, extra string) string {
	in := "null"
	if input != "" {
		in = input
	}
	return `{"quant_method": "compressed-tensors", "format": "x", "ignore": ["lm_head"]` + extra +
		`, "config_groups": {"group_0": {"targets": ["Linear"], "weights": ` + weights + `, "input_activations": ` + in + `}}}`
}

// TestQuantFormats checks, per method, the format of attention and MLP weights, the method vLLM
// resolves, and the weight bytes in the quantized format against hand arithmetic.
func TestQuantFormats(t *testing.T) {
	fp8Tok := `{"num_bits": 8, "type": "float", "strategy": "token", "dynamic": true, "symmetric": true}`
	for _, tc := range []struct {
		name       string
		q          string
		attn, mlp  arch.DType
		method     string
		bytes      float64 // of the quantized format (attn's when both are quantized alike)
		compute    arch.DType
		kv         arch.DType
		noteSubstr string
	}{
		{"compressed-tensors FP8 dynamic (channel)", ct(`{"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": true}`, fp8Tok, ""),
			arch.FP8Channel, arch.FP8Channel, "compressed-tensors",
			// values + one fp32 scale per output row: MLP 2 x 14336 + 4096 rows, attention taken as
			// 41,943,040 / 4096 = 10,240 rows.
			32 * (llamaAttn + 10240*4 + llamaMLP + (2*14336+4096)*4), arch.FP8, "", ""},
		{"compressed-tensors FP8 per tensor, static", ct(`{"num_bits": 8, "type": "float", "strategy": "tensor"}`, `{"num_bits": 8, "type": "float", "strategy": "tensor"}`, ""),
			arch.FP8Tensor, arch.FP8Tensor, "compressed-tensors", llamaLinear, arch.FP8, "", ""},
		{"compressed-tensors FP8 block 128x128", ct(`{"num_bits": 8, "type": "float", "strategy": "block", "block_structure": [128, 128]}`, fp8Tok, ""),
			arch.FP8, arch.FP8, "compressed-tensors", llamaLinear * 1.0002, arch.FP8, "", ""},
		{"compressed-tensors FP8 weight-only (W8A16)", ct(`{"num_bits": 8, "type": "float", "strategy": "channel"}`, "", ""),
			"fp8-channel-a16", "fp8-channel-a16", "compressed-tensors", 32 * (llamaAttn + 10240*4 + llamaMLP + (2*14336+4096)*4), arch.BF16, "", ""},
		{"compressed-tensors INT8 W8A8", ct(`{"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": true}`, `{"num_bits": 8, "type": "int", "strategy": "token", "dynamic": true}`, ""),
			"int8-channel", "int8-channel", "compressed-tensors", 32 * (llamaAttn + 10240*4 + llamaMLP + (2*14336+4096)*4), arch.FP8, "", ""},
		// W4A16 group 128: 0.5 + 2/128 = 33/64 bytes per weight.
		{"compressed-tensors W4A16 g128", ct(`{"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": true}`, "", ""),
			"int4-g128", "int4-g128", "compressed-tensors", 3598712832, arch.BF16, "", ""},
		{"compressed-tensors W4A16 g32 asymmetric", ct(`{"num_bits": 4, "type": "int", "strategy": "group", "group_size": 32, "symmetric": false}`, "", ""),
			"uint4-g32", "uint4-g32", "compressed-tensors", llamaLinear * (0.5 + 2.5/32), arch.BF16, "", ""},
		// NVFP4: 0.5625 = 9/16 bytes per weight.
		{"compressed-tensors NVFP4", ct(`{"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}`, `{"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16, "dynamic": "local"}`, ""),
			arch.NVFP4, arch.NVFP4, "compressed-tensors", 3925868544, arch.NVFP4, "", ""},
		{"compressed-tensors with an fp8 KV cache and attention ignored",
			ct(`{"num_bits": 8, "type": "float", "strategy": "tensor"}`, fp8Tok, `, "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "tensor"}, "ignore": ["lm_head", "re:.*self_attn.*"]`),
			arch.BF16, arch.FP8Tensor, "compressed-tensors", 0, arch.FP8, arch.FP8, ""},
		{"fbgemm_fp8, attention not converted", `{"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0, "modules_to_not_convert": ["model.layers.0.self_attn", "model.layers.1.self_attn", "model.layers.*.self_attn", "lm_head"]}`,
			arch.BF16, arch.FP8Channel, "fbgemm_fp8", 32 * (llamaMLP + (2*14336+4096)*4), arch.FP8, "", ""},
		// bitsandbytes nf4 with double quantization: 0.5 + 1/64 + 4/(64 x 256) = 8452/16384.
		{"bitsandbytes nf4, double quant", `{"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true, "bnb_4bit_compute_dtype": "bfloat16"}`,
			"bnb-nf4-dq", "bnb-nf4-dq", "bitsandbytes", 3600416768, arch.BF16, "", "dequantize to bf16"},
		{"bitsandbytes fp4 (default type)", `{"quant_method": "bitsandbytes", "load_in_4bit": true}`,
			"bnb-fp4", "bnb-fp4", "bitsandbytes", llamaLinear * 0.5625, arch.BF16, "", ""},
		{"bitsandbytes 8-bit, attention skipped", `{"quant_method": "bitsandbytes", "load_in_8bit": true, "llm_int8_skip_modules": ["self_attn"]}`,
			arch.BF16, "bnb-int8", "bitsandbytes", 32 * (llamaMLP + (2*14336+4096)*4), arch.BF16, "", ""},
		// GPTQ stores 4-bit zeros beside the fp16 scales: 0.5 + 2.5/128 = 133/256 bytes per weight.
		{"gptq 4-bit g128", `{"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": true, "sym": true}`,
			"uint4-g128", "uint4-g128", "gptq_marlin", 3625975808, arch.BF16, "", "gptq_marlin"},
		// 8-bit per channel: an fp16 scale and an 8-bit zero per output row.
		{"gptq 8-bit per channel", `{"quant_method": "gptq", "bits": 8, "group_size": -1, "sym": true}`,
			"uint8-channel", "uint8-channel", "gptq_marlin", 32 * (llamaAttn + 10240*3 + llamaMLP + (2*14336+4096)*3), arch.BF16, "", ""},
		{"gptq asymmetric: no Marlin", `{"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": false}`,
			"uint4-g128", "uint4-g128", "gptq", 3625975808, arch.BF16, "", ""},
		{"awq with zero points", `{"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true, "version": "gemm"}`,
			"uint4-g128", "uint4-g128", "awq_marlin", 3625975808, arch.BF16, "", ""},
		{"awq without zero points, w_bit/q_group_size spelling", `{"quant_method": "awq", "w_bit": 4, "q_group_size": 64, "zero_point": false}`,
			"int4-g64", "int4-g64", "awq_marlin", llamaLinear * (0.5 + 2.0/64), arch.BF16, "", ""},
		{"modelopt FP8 inline with an FP8 KV cache", `{"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}`,
			arch.FP8Tensor, arch.FP8Tensor, "modelopt", llamaLinear, arch.FP8, arch.FP8, ""},
		{"modelopt NVFP4 inline", `{"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]}`,
			arch.NVFP4, arch.NVFP4, "modelopt_fp4", 3925868544, arch.NVFP4, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := withQuant(t, tc.q)
			for _, g := range a.Layers {
				if g.Attn.DType != tc.attn || g.FFN.DType != tc.mlp {
					t.Errorf("attention %s, MLP %s; want %s, %s", g.Attn.DType, g.FFN.DType, tc.attn, tc.mlp)
				}
			}
			if a.EmbedDType != arch.BF16 {
				t.Errorf("embeddings %s, want bf16", a.EmbedDType)
			}
			if a.Quantization != tc.method {
				t.Errorf("quantization method %q, want %q", a.Quantization, tc.method)
			}
			if a.KVCacheDType != tc.kv {
				t.Errorf("checkpoint KV dtype %q, want %q", a.KVCacheDType, tc.kv)
			}
			q := tc.attn
			if !q.IsQuantized() {
				q = tc.mlp
			}
			// Sums of products in float64: equal to the hand figure within rounding.
			if got := a.WeightBytesByDType()[q]; tc.bytes > 0 && math.Abs(got-tc.bytes) > 1e-12*tc.bytes {
				t.Errorf("%s bytes = %.0f, want %.0f", q, got, tc.bytes)
			}
			if got := q.ComputeClass(); got != tc.compute {
				t.Errorf("%s compute class %s, want %s", q, got, tc.compute)
			}
			if tc.noteSubstr != "" && !strings.Contains(strings.Join(a.Notes, "; "), tc.noteSubstr) {
				t.Errorf("notes %q do not mention %q", a.Notes, tc.noteSubstr)
			}
		})
	}
}

// TestQuantGroupsAndClasses: compressed-tensors targets by name or regex win over class targets;
// class names in ignore lists drop whole parts.
func TestQuantGroupsAndClasses(t *testing.T) {
	a := withQuant(t, `{"quant_method": "compressed-tensors", "ignore": ["lm_head"], "config_groups": {
		"group_1": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}, "input_activations": {"num_bits": 8, "type": "float", "strategy": "token"}},
		"group_0": {"targets": ["re:.*mlp.*"], "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128}}}}`)
	for _, g := range a.Layers {
		if g.Attn.DType != arch.FP8Channel || g.FFN.DType != "int4-g128" {
			t.Errorf("attention %s, MLP %s; want fp8-channel (Linear), int4-g128 (regex)", g.Attn.DType, g.FFN.DType)
		}
	}
	a = withQuant(t, ct(`{"num_bits": 8, "type": "float", "strategy": "tensor"}`, "", `, "ignore": ["lm_head", "LlamaAttention"]`))
	for _, g := range a.Layers {
		if g.Attn.DType != arch.BF16 || g.FFN.DType != "fp8-tensor-a16" {
			t.Errorf("attention %s, MLP %s; want bf16 (class ignored), fp8-tensor-a16", g.Attn.DType, g.FFN.DType)
		}
	}
	// compression_config stands in for quantization_config.
	cfg := edit(t, builtinConfig(t, "meta-llama/Llama-3.1-8B-Instruct"), func(m map[string]any) {
		var v any
		_ = json.Unmarshal([]byte(ct(`{"num_bits": 8, "type": "float", "strategy": "tensor"}`, `{"num_bits": 8, "type": "float"}`, "")), &v)
		m["compression_config"] = v
	})
	if a, err := Parse(cfg, ""); err != nil || a.Layers[0].Attn.DType != arch.FP8Tensor {
		t.Errorf("compression_config: %v, %+v", err, a)
	}
	// Bad inputs name the field.
	for _, tc := range []struct{ q, want string }{
		{ct(`{"num_bits": 4, "type": "float", "strategy": "group", "group_size": 64}`, "", ""), "group_size 64"},
		{ct(`{"num_bits": 2, "type": "int", "strategy": "group", "group_size": 64}`, "", ""), "2-bit int"},
		{ct(`{"num_bits": 8, "type": "float", "strategy": "block", "block_structure": [0, 128]}`, "", ""), "block_structure"},
		{`{"quant_method": "compressed-tensors", "ignore": ["re:(?=x)"], "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "tensor"}}}}`, "regex"},
		{`{"quant_method": "gptq", "bits": 3}`, "bits = 3"},
		{`{"quant_method": "bitsandbytes"}`, "load_in_4bit"},
		{`{"quant_method": "fp8", "weight_block_size": [128]}`, "weight_block_size"},
		{`{"bits": 4}`, "quant_method"},
	} {
		var v any
		if err := json.Unmarshal([]byte(tc.q), &v); err != nil {
			t.Fatal(err)
		}
		_, err := Parse(edit(t, builtinConfig(t, "meta-llama/Llama-3.1-8B-Instruct"), func(m map[string]any) { m["quantization_config"] = v }), "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.q, err, tc.want)
		}
	}
}

// TestPublishedQuantized checks the quantized built-ins: block fp8 DeepSeek-R1 and GLM-5 (MLA
// projections, MLPs and experts fp8 at 1 + 4/16384, rounded to 1.0002; routers, norms, embeddings
// and lm_head bf16), MXFP4 gpt-oss (experts only), and an NVFP4 Qwen3-30B-A3B with attention
// excluded.
func TestPublishedQuantized(t *testing.T) {
	for _, id := range []string{"deepseek-ai/DeepSeek-R1", "zai-org/GLM-5-FP8"} {
		a := builtin(t, id)
		var fp8Params int64
		for _, w := range a.WeightSets() {
			if w.DType == arch.FP8 {
				fp8Params += w.Total()
			} else if w.DType != arch.BF16 {
				t.Errorf("%s: %v in %s", id, w.Part, w.DType)
			}
			if (w.Part == arch.PartRouter || w.Part == arch.PartEmbedding || w.Part == arch.PartLMHead) && w.DType != arch.BF16 {
				t.Errorf("%s: %v in %s, want bf16", id, w.Part, w.DType)
			}
		}
		if got, want := a.WeightBytesByDType()[arch.FP8], float64(fp8Params)*1.0002; got < want*(1-1e-12) || got > want*(1+1e-12) {
			t.Errorf("%s: fp8 bytes %.0f, want %.0f", id, got, want)
		}
		if a.Quantization != "fp8" {
			t.Errorf("%s: quantization %q", id, a.Quantization)
		}
	}
	// gpt-oss: 36 x 128 experts x 3 x 2880 x 2880 weights in MXFP4 (0.53125 bytes).
	if got, want := builtin(t, "openai/gpt-oss-120b").WeightBytesByDType()[arch.MXFP4], 36*128*3*2880*2880*0.53125; got != want {
		t.Errorf("gpt-oss mxfp4 bytes = %.0f, want %.0f", got, want)
	}
	// Qwen3-30B-A3B as a ModelOpt NVFP4 checkpoint (hf_quant_config.json), attention excluded:
	// experts 48 x 128 x 3 x 2048 x 768 weights at 0.5625 bytes.
	a, err := ParseWithQuant(builtinConfig(t, "Qwen/Qwen3-30B-A3B"),
		[]byte(`{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16, "exclude_modules": ["lm_head", "model.layers.*.self_attn*", "*.mlp.gate"]}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := a.WeightBytesByDType()[arch.NVFP4], 48*128*3*2048*768*0.5625; got != want {
		t.Errorf("Qwen3-30B-A3B nvfp4 bytes = %.0f, want %.0f", got, want)
	}
	if a.Quantization != "modelopt_fp4" || a.KVCacheDType != arch.FP8 || a.Layers[0].Attn.DType != arch.BF16 {
		t.Errorf("NVFP4 Qwen3: method %q, kv %q, attention %s; want modelopt_fp4, fp8, bf16", a.Quantization, a.KVCacheDType, a.Layers[0].Attn.DType)
	}
	// Llama 4's quantization_config sits beside text_config; its vision tower stays bf16.
	cfg := edit(t, builtinConfig(t, "meta-llama/Llama-4-Scout-17B-16E-Instruct"), func(m map[string]any) {
		var v any
		_ = json.Unmarshal([]byte(`{"quant_method": "compressed-tensors", "ignore": ["re:.*lm_head", "re:.*self_attn", "re:.*router", "re:.*vision_model.*", "re:.*multi_modal_projector.*"],
			"config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}, "input_activations": {"num_bits": 8, "type": "float", "strategy": "token"}}}}`), &v)
		m["quantization_config"] = v
	})
	l4, err := Parse(cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range l4.Layers {
		if g.Attn.DType != arch.BF16 || g.FFN.DType != arch.FP8Channel || g.FFN.ExpertDType != arch.FP8Channel {
			t.Errorf("Llama 4 FP8: attention %s, shared %s, experts %s; want bf16, fp8-channel, fp8-channel", g.Attn.DType, g.FFN.DType, g.FFN.ExpertDType)
		}
	}
	// bitsandbytes leaves fused expert tensors (gpt-oss, Llama 4) 16-bit.
	l4b, err := Parse(edit(t, builtinConfig(t, "meta-llama/Llama-4-Scout-17B-16E-Instruct"), func(m map[string]any) {
		m["quantization_config"] = map[string]any{"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf4"}
	}), "")
	if err != nil {
		t.Fatal(err)
	}
	if g := l4b.Layers[0]; g.FFN.ExpertDType != arch.BF16 || g.FFN.DType != "bnb-nf4" || g.Attn.DType != "bnb-nf4" {
		t.Errorf("Llama 4 bnb: attention %s, shared %s, experts %s; want bnb-nf4, bnb-nf4, bf16", g.Attn.DType, g.FFN.DType, g.FFN.ExpertDType)
	}
}
