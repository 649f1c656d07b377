package validate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hf"
)

// Checkpoints the built-in registry does not hold, expressed from their base architecture. Each
// is the published shape of the base model, written as a config.json (a base config with the
// fields that differ), parsed by model/hf, then stored in the row's recorded weight dtype. They
// are transcriptions of published numbers, not copies of the checkpoints' config files; a row
// that uses one says so.

// llama31_70b is meta-llama/Llama-3.1-70B-Instruct's published config.json (the registry's).
const llama31_70b = `{"architectures":["LlamaForCausalLM"],"attention_bias":false,"hidden_act":"silu","hidden_size":8192,
"intermediate_size":28672,"max_position_embeddings":131072,"mlp_bias":false,"model_type":"llama","num_attention_heads":64,
"num_hidden_layers":80,"num_key_value_heads":8,"rms_norm_eps":1e-05,"rope_scaling":{"factor":8.0,"low_freq_factor":1.0,
"high_freq_factor":4.0,"original_max_position_embeddings":8192,"rope_type":"llama3"},"rope_theta":500000.0,
"tie_word_embeddings":false,"torch_dtype":"bfloat16","vocab_size":128256}`

// qwen3_30b is Qwen/Qwen3-30B-A3B's published config.json (the registry's), shape fields.
const qwen3_30b = `{"architectures":["Qwen3MoeForCausalLM"],"attention_bias":false,"decoder_sparse_step":1,"head_dim":128,
"hidden_act":"silu","hidden_size":2048,"intermediate_size":6144,"max_position_embeddings":40960,"max_window_layers":48,
"mlp_only_layers":[],"model_type":"qwen3_moe","moe_intermediate_size":768,"norm_topk_prob":true,"num_attention_heads":32,
"num_experts":128,"num_experts_per_tok":8,"num_hidden_layers":48,"num_key_value_heads":4,"rms_norm_eps":1e-06,
"rope_scaling":null,"rope_theta":1000000.0,"sliding_window":null,"tie_word_embeddings":false,"torch_dtype":"bfloat16",
"use_sliding_window":false,"vocab_size":151936}`

// transcription is an architecture written from a published shape.
type transcription struct {
	base  string         // a config.json (llama31_70b, qwen3_30b) or a built-in id
	patch map[string]any // fields that differ (for a built-in Llama 4: inside text_config)
	shape string         // the published shape, for the row's note
}

// transcriptions maps a base architecture name to its shape.
func transcriptions() map[string]transcription {
	return map[string]transcription{
		"Llama-3.1-405B": {base: llama31_70b, patch: map[string]any{"hidden_size": 16384, "num_hidden_layers": 126,
			"num_attention_heads": 128, "num_key_value_heads": 8, "intermediate_size": 53248, "vocab_size": 128256},
			shape: "Llama-3.1-405B: hidden 16384, 126 layers, 128 heads, 8 KV heads, intermediate 53248, vocab 128256, max_position_embeddings 131072 (llama3 RoPE)"},
		"Llama-3.3-70B": {base: llama31_70b, patch: map[string]any{},
			shape: "Llama-3.3-70B-Instruct has Llama-3.1-70B-Instruct's published shape: hidden 8192, 80 layers, 64 heads, 8 KV heads, intermediate 28672, vocab 128256"},
		"Qwen3-235B-A22B": {base: qwen3_30b, patch: map[string]any{"hidden_size": 4096, "num_hidden_layers": 94,
			"num_attention_heads": 64, "num_key_value_heads": 4, "moe_intermediate_size": 1536, "intermediate_size": 12288,
			"max_window_layers": 94},
			shape: "Qwen3-235B-A22B: hidden 4096, 94 layers, 64 heads, 4 KV heads, head_dim 128, 128 experts top-8 of width 1536, vocab 151936"},
		"Qwen3-30B-A3B": {base: "Qwen/Qwen3-30B-A3B", shape: "the built-in Qwen/Qwen3-30B-A3B config.json"},
		"DeepSeek-R1": {base: "deepseek-ai/DeepSeek-R1",
			shape: "DeepSeek-R1-0528 is a retrained DeepSeek-R1 with the same published shape: the built-in deepseek-ai/DeepSeek-R1 config.json"},
		"Llama-4-Scout-17B-16E": {base: "meta-llama/Llama-4-Scout-17B-16E-Instruct",
			shape: "the built-in meta-llama/Llama-4-Scout-17B-16E-Instruct config.json"},
		"Llama-4-Maverick-17B-128E": {base: "meta-llama/Llama-4-Scout-17B-16E-Instruct", patch: map[string]any{"num_local_experts": 128,
			"interleave_moe_layer_step": 2, "max_position_embeddings": 1048576},
			shape: "Llama-4-Maverick-17B-128E: Scout's text tower (hidden 5120, 48 layers, 40 heads, 8 KV heads, vocab 202048) with 128 routed experts (top-1, shared expert) on every second layer and dense MLPs of 16384 between (interleave_moe_layer_step 2)"},
	}
}

// checkpointBase maps the corpus's checkpoints outside the registry to a transcribed base and the
// weight format stored.
func checkpointBase(id string) (base string, ok bool) {
	m := map[string]string{
		"meta-llama/llama-3.1-405b-fp8":                 "Llama-3.1-405B",
		"amd/llama-3.1-405b-instruct-fp8-kv":            "Llama-3.1-405B",
		"nvidia/llama-3.1-405b-instruct-fp4":            "Llama-3.1-405B",
		"nvidia/llama-3.3-70b-instruct-fp4":             "Llama-3.3-70B",
		"nvidia/qwen3-235b-a22b-fp4":                    "Qwen3-235B-A22B",
		"nvidia/qwen3-30b-a3b-fp4":                      "Qwen3-30B-A3B",
		"nvidia/llama-4-scout-17b-16e-instruct-fp4":     "Llama-4-Scout-17B-16E",
		"nvidia/llama-4-maverick-17b-128e-instruct-fp4": "Llama-4-Maverick-17B-128E",
		"deepseek-ai/deepseek-r1-0528":                  "DeepSeek-R1",
	}
	base, ok = m[strings.ToLower(id)]
	return base, ok
}

// weightFormat is the corpus's weight_dtype as a storage format ("" for 16-bit: keep the config's).
//
// Free text is read for what it says: the format named before any remark in parentheses
// ("nvfp4 (modelopt_mixed; routed experts W4A4)" is nvfp4).
func weightFormat(s string) (arch.DType, error) {
	if i := strings.IndexByte(s, '('); i > 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if f := strings.Fields(s); len(f) > 1 {
		s = f[0]
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "fp16", "bf16", "float16", "bfloat16", "auto":
		return "", nil
	case "fp8":
		return arch.FP8, nil
	case "nvfp4", "fp4", "w4a4":
		return arch.NVFP4, nil
	case "mxfp4":
		return arch.MXFP4, nil
	case "mxfp8", "fp8_e4m3", "w8a8-fp8":
		return arch.FP8, nil
	}
	return "", fmt.Errorf("weight_dtype %q: want fp16, bf16, fp8, mxfp8, nvfp4 or mxfp4", s)
}

// resolveModel finds the row's checkpoint: the built-in registry by Hugging Face id, else a
// transcribed base architecture in the recorded weight format. from says which, for the row.
func resolveModel(id, weightDType string) (a *arch.Arch, from string, err error) {
	wf, err := weightFormat(weightDType)
	if err != nil {
		return nil, "", err
	}
	if same, ok := communityModels()[strings.ToLower(id)]; ok {
		b, prov, err := hf.Builtin(same)
		if err != nil {
			return nil, "", err
		}
		return b, fmt.Sprintf("built-in %s: %s is a community quantization of the same model (weight_dtype %q), described by the built-in NVFP4 checkpoint's layout", prov.ID, id, weightDType), nil
	}
	if b, prov, err := hf.Builtin(id); err == nil {
		from = "built-in " + prov.ID
		if wf != "" && deploy.CheckpointQuantization(b) == "" {
			// A 16-bit config with quantized weights recorded: store them as recorded.
			b = deploy.WithWeights(b, wf)
			from += fmt.Sprintf(", weights stored as %s (recorded weight_dtype)", wf)
		}
		return b, from, nil
	}
	baseName, ok := checkpointBase(id)
	if !ok {
		return nil, "", fmt.Errorf("model %q is not in the built-in registry and its exact published shape is not transcribed (`servesim model list`)", id)
	}
	t := transcriptions()[baseName]
	var cfg []byte
	if strings.HasPrefix(t.base, "{") {
		cfg, err = patchJSON([]byte(t.base), t.patch, false)
	} else {
		cfg, err = builtinConfig(t.base, t.patch)
	}
	if err != nil {
		return nil, "", err
	}
	a, err = hf.Parse(cfg, id)
	if err != nil {
		return nil, "", fmt.Errorf("model %q: transcribed %s: %w", id, baseName, err)
	}
	if q, recipe, ok := checkpointQuant(id, t.patch); ok && wf != "" {
		// The checkpoint's own quantization recipe: parsed as its quantization_config.
		patch := map[string]any{"quantization_config": q}
		if cfg, err = patchJSON(cfg, patch, false); err != nil {
			return nil, "", err
		}
		if a, err = hf.Parse(cfg, id); err != nil {
			return nil, "", fmt.Errorf("model %q: transcribed %s with its quantization: %w", id, baseName, err)
		}
		return a, fmt.Sprintf("architecture transcribed, not a config copy: %s; weights as the checkpoint stores them: %s", t.shape, recipe), nil
	}
	if wf != "" {
		a = deploy.WithWeights(a, wf)
	}
	from = fmt.Sprintf("architecture transcribed, not a config copy: %s; weights %s as recorded", t.shape, strings.ToLower(weightDType))
	return a, from, nil
}

// checkpointQuant is the quantization_config of a transcribed checkpoint whose published recipe
// keeps some layers in 16 bits, with the recipe in words. patch is the base's transcription patch
// (its layer count).
//
// meta-llama/Llama-3.1-405B-FP8 (FBGEMM row-wise fp8): "We apply FP8 quantization to most
// parameters and activations in the feedforward network layers of the model, but we do not apply it
// to parameters in the self-attention layers. Additionally, we do not perform quantization in the
// first and last Transformer layers" (Llama Team, "The Llama 3 Herd of Models", arXiv:2407.21783,
// section 6.2). The attention projections (a sixth of the weights) and two layers' MLPs stay bf16:
// about 487 GB of weights where all-fp8 would be about 410 GB, 61 GB per GPU at TP 8, which sets
// the KV cache left on an 80 GB H100.
func checkpointQuant(id string, patch map[string]any) (q map[string]any, recipe string, ok bool) {
	if strings.ToLower(id) != "meta-llama/llama-3.1-405b-fp8" {
		return nil, "", false
	}
	layers, _ := patch["num_hidden_layers"].(int)
	if layers < 2 {
		return nil, "", false
	}
	var keep []any
	for l := 0; l < layers; l++ {
		for _, m := range []string{"q_proj", "k_proj", "v_proj", "o_proj"} {
			keep = append(keep, fmt.Sprintf("model.layers.%d.self_attn.%s", l, m))
		}
		if l == 0 || l == layers-1 {
			for _, m := range []string{"gate_proj", "up_proj", "down_proj"} {
				keep = append(keep, fmt.Sprintf("model.layers.%d.mlp.%s", l, m))
			}
		}
	}
	keep = append(keep, "lm_head")
	return map[string]any{"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0, "modules_to_not_convert": keep},
		"fbgemm_fp8 row-wise fp8 MLPs; self-attention and the first and last layers' MLPs bf16 (Llama 3 paper, section 6.2)", true
}

// builtinConfig is a built-in model's config.json with patch applied (Llama 4: to text_config).
func builtinConfig(id string, patch map[string]any) ([]byte, error) {
	raw, err := hf.BuiltinConfig(id)
	if err != nil {
		return nil, err
	}
	return patchJSON(raw, patch, strings.Contains(strings.ToLower(id), "llama-4"))
}

func patchJSON(raw []byte, patch map[string]any, text bool) ([]byte, error) {
	if len(patch) == 0 {
		return raw, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	dst := m
	if text {
		tc, ok := m["text_config"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("config has no text_config")
		}
		dst = tc
	}
	for k, v := range patch {
		dst[k] = v
	}
	return json.Marshal(m)
}
