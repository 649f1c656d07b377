package hf_test

import (
	"fmt"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/hf"
)

func ExampleParse() {
	// The fields of meta-llama/Llama-3.1-8B's config.json that shape the model.
	cfg := []byte(`{
		"architectures": ["LlamaForCausalLM"],
		"model_type": "llama",
		"hidden_size": 4096,
		"intermediate_size": 14336,
		"num_attention_heads": 32,
		"num_hidden_layers": 32,
		"num_key_value_heads": 8,
		"vocab_size": 128256,
		"tie_word_embeddings": false,
		"torch_dtype": "bfloat16"
	}`)
	a, err := hf.Parse(cfg, "llama-3.1-8b")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, g := range a.Layers {
		fmt.Printf("%d x %s attention (%d heads, %d kv heads of %d) + %s MLP %d\n",
			g.Count, g.Attn.Kind, g.Attn.Heads, g.Attn.KVHeads, g.Attn.HeadDim, g.FFN.Kind, g.FFN.Intermediate)
	}
	fmt.Printf("%.2f B params\n", float64(a.Params().Total)/1e9)
	fmt.Printf("KV cache: %.0f bytes/token in bf16\n", a.KVBytesPerToken(1, arch.BF16))

	_, err = hf.Parse([]byte(`{"model_type": "bert"}`), "")
	fmt.Println(err)
	// Output:
	// 32 x gqa attention (32 heads, 8 kv heads of 128) + dense MLP 14336
	// 8.03 B params
	// KV cache: 131072 bytes/token in bf16
	// hf: config.json: unsupported model_type "bert": supported families are deepseek_v3, deepseek_v32, glm_moe_dsa, gpt_oss, kimi_k2, kimi_linear, llama, llama4, llama4_text, minimax_m2, mistral, mixtral, qwen2, qwen3, qwen3_moe, qwen3_next
}
