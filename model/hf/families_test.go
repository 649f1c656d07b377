package hf

import (
	"strings"
	"testing"

	"github.com/servesim/servesim/model/arch"
)

func builtin(t *testing.T, id string) *arch.Arch {
	t.Helper()
	a, _, err := Builtin(id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func builtinConfig(t *testing.T, id string) []byte {
	t.Helper()
	for _, e := range registry() {
		if e.prov.ID == id {
			b, err := registryFS.ReadFile("data/models/" + e.dir + "/config.json")
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("no built-in %s", id)
	return nil
}

// gqaShape is one layer bucket of a softmax-attention model.
type gqaShape struct {
	chunk, window int
	nope, sinks   bool
	ffn           arch.FFNKind
}

func gqaShapes(a *arch.Arch) map[gqaShape]int {
	m := map[gqaShape]int{}
	for _, g := range a.Layers {
		m[gqaShape{g.Attn.Chunk, g.Attn.Window, g.Attn.NoPE, g.Attn.Sinks, g.FFN.Kind}] += g.Count
	}
	return m
}

func sameShapes(t *testing.T, name string, got, want map[gqaShape]int) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: layers %v, want %v", name, got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: layers %v, want %v", name, got, want)
			return
		}
	}
}

// TestLlama4: Scout's 48 layers are all MoE (interleave_moe_layer_step 1) with a shared expert;
// every 4th layer is NoPE and global, the other 36 attend within 8,192-token chunks. The vision
// tower is counted as encoder weights.
func TestLlama4(t *testing.T) {
	a := builtin(t, "meta-llama/Llama-4-Scout-17B-16E-Instruct")
	sameShapes(t, "Scout", gqaShapes(a), map[gqaShape]int{
		{chunk: 8192, ffn: arch.FFNMoE}: 36,
		{nope: true, ffn: arch.FFNMoE}:  12,
	})
	for _, g := range a.Layers {
		f := g.FFN
		if f.Experts != 16 || f.TopK != 1 || f.ExpertIntermediate != 8192 || f.SharedExperts != 1 || f.SharedIntermediate != 8192 {
			t.Errorf("Scout MoE = %+v, want 16 experts top-1 of 8192 + 1 shared of 8192", f)
		}
		// q, k, v, o of 40 and 8 heads of 128 on 5,120; the L2 qk norm has no weights.
		if want := int64(5120*5120 + 2*5120*1024 + 5120*5120); g.Attn.ProjParams != want {
			t.Errorf("Scout attention params = %d, want %d", g.Attn.ProjParams, want)
		}
	}
	// Vision tower by hand: patch 3x14x14x1408; class 1408; positions (24x24+1)x1408; 2 LayerNorms
	// 4x1408; 34 layers x (q,k,v,o with biases 4x(1408^2+1408) + fc1/fc2 with biases
	// 2x1408x5632+5632+1408 + 2 LayerNorms 4x1408); pixel-shuffle MLP 5632x4096 + 4096x4096;
	// projector 4096x5120.
	enc := int64(3*14*14*1408 + 1408 + 577*1408 + 4*1408 +
		34*(4*(1408*1408+1408)+2*1408*5632+5632+1408+4*1408) + 5632*4096 + 4096*4096 + 4096*5120)
	if a.EncoderParams != enc || enc != 871932416 {
		t.Errorf("Scout encoder params = %d, want %d (871,932,416)", a.EncoderParams, enc)
	}
	if got := a.Params(); got.Active > got.Total-got.Encoder {
		t.Errorf("encoder counted as active")
	}
	if !strings.Contains(strings.Join(a.Notes, "; "), "vision tower") {
		t.Errorf("notes %q do not mention the vision tower", a.Notes)
	}
	// KV: every layer stores 8 KV heads of 128 (chunked layers only a chunk per request).
	if got := a.KVBytesPerToken(1, arch.BF16); got != 48*8*256*2 {
		t.Errorf("Scout KV bytes/token = %v, want %v", got, 48*8*256*2)
	}

	cfg := builtinConfig(t, "meta-llama/Llama-4-Scout-17B-16E-Instruct")
	text := func(f func(tc map[string]any)) []byte {
		return edit(t, cfg, func(m map[string]any) { f(m["text_config"].(map[string]any)) })
	}
	// Maverick's interleave: MoE on the odd layers (1, 3, ...), dense intermediate_size_mlp on the
	// even ones; the NoPE layers (3, 7, ...) are all odd.
	b, err := Parse(text(func(tc map[string]any) { tc["interleave_moe_layer_step"] = 2 }), "")
	if err != nil {
		t.Fatal(err)
	}
	sameShapes(t, "step 2", gqaShapes(b), map[gqaShape]int{
		{chunk: 8192, ffn: arch.FFNMoE}: 12, {chunk: 8192, ffn: arch.FFNDense}: 24,
		{nope: true, ffn: arch.FFNMoE}: 12,
	})
	for _, g := range b.Layers {
		if g.FFN.Kind == arch.FFNDense && g.FFN.Intermediate != 16384 {
			t.Errorf("dense layers %d wide, want intermediate_size_mlp 16384", g.FFN.Intermediate)
		}
	}
	// Explicit moe_layers and no_rope_layers.
	nope := make([]int, 48)
	for i := range nope {
		nope[i] = 1
	}
	nope[0] = 0
	b, err = Parse(text(func(tc map[string]any) { tc["moe_layers"] = []int{0, 47}; tc["no_rope_layers"] = nope }), "")
	if err != nil {
		t.Fatal(err)
	}
	sameShapes(t, "explicit", gqaShapes(b), map[gqaShape]int{
		{nope: true, ffn: arch.FFNMoE}: 1, {chunk: 8192, ffn: arch.FFNMoE}: 1, {chunk: 8192, ffn: arch.FFNDense}: 46,
	})
	// The text config alone (Llama4ForCausalLM, llama4_text) has the same decoder, no encoder.
	c, err := Parse(edit(t, cfg, func(m map[string]any) {
		tc := m["text_config"].(map[string]any)
		for k := range m {
			delete(m, k)
		}
		for k, v := range tc {
			m[k] = v
		}
	}), "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Family != "llama4_text" || c.EncoderParams != 0 || c.Params().Total != a.Params().Total-a.EncoderParams {
		t.Errorf("llama4_text: family %s, encoder %d, total %d; want the text decoder of Scout", c.Family, c.EncoderParams, c.Params().Total)
	}
	if _, err := Parse(edit(t, cfg, func(m map[string]any) { delete(m, "text_config") }), ""); err == nil || !strings.Contains(err.Error(), "text_config") {
		t.Errorf("llama4 without text_config: %v", err)
	}
	if _, err := Parse(text(func(tc map[string]any) { delete(tc, "hidden_size") }), ""); err == nil || !strings.Contains(err.Error(), "text_config.hidden_size") {
		t.Errorf("llama4 without text_config.hidden_size: %v, want the nested field named", err)
	}
}

// TestGptOss: 36 layers alternating sliding window 128 and full attention, sinks on every layer,
// MXFP4 routed experts (the router, attention, embeddings and lm_head stay bf16).
func TestGptOss(t *testing.T) {
	a := builtin(t, "openai/gpt-oss-120b")
	sameShapes(t, "gpt-oss-120b", gqaShapes(a), map[gqaShape]int{
		{window: 128, sinks: true, ffn: arch.FFNMoE}: 18,
		{sinks: true, ffn: arch.FFNMoE}:              18,
	})
	for _, g := range a.Layers {
		if g.Attn.DType != arch.BF16 || g.FFN.ExpertDType != arch.MXFP4 || g.FFN.Experts != 128 || g.FFN.TopK != 4 {
			t.Errorf("gpt-oss layer: attention %s, experts %s %d top-%d; want bf16, mxfp4 128 top-4", g.Attn.DType, g.FFN.ExpertDType, g.FFN.Experts, g.FFN.TopK)
		}
	}
	if a.Quantization != "mxfp4" || a.MaxModelLen != 131072 {
		t.Errorf("gpt-oss: quantization %q, max_model_len %d; want mxfp4, 131072 (yarn 4096 x 32)", a.Quantization, a.MaxModelLen)
	}
	// The published checkpoint is 60.8 GiB (OpenAI's model card).
	var bytes float64
	for _, b := range a.WeightBytesByDType() {
		bytes += b
	}
	if gib := bytes / (1 << 30); gib < 60.8*0.99 || gib > 60.8*1.01 {
		t.Errorf("gpt-oss-120b weights %.2f GiB, want 60.8 GiB within 1 %%", gib)
	}
}

// TestMiniMaxM2 reads a config transcribed from the MiniMax-M2 model card: 62 softmax-attention
// MoE layers (256 experts, top-8, 1,536 wide), q/k RMSNorms over all heads, routing bias, three
// MTP modules, block fp8 with the router excluded.
func TestMiniMaxM2(t *testing.T) {
	a := load(t, "minimax-m2")
	sameShapes(t, "MiniMax-M2", gqaShapes(a), map[gqaShape]int{{ffn: arch.FFNMoE}: 62})
	g := a.Layers[0]
	if want := int64(3072*6144 + 2*3072*1024 + 6144*3072 + 6144 + 1024); g.Attn.ProjParams != want {
		t.Errorf("attention params = %d, want %d", g.Attn.ProjParams, want)
	}
	if g.Attn.DType != arch.FP8 || g.FFN.ExpertDType != arch.FP8 || a.Quantization != "fp8" || a.MTPLayers != 3 || a.MaxModelLen != 196608 {
		t.Errorf("dtypes %s/%s, quantization %q, MTP %d, max_model_len %d; want fp8/fp8, fp8, 3, 196608",
			g.Attn.DType, g.FFN.ExpertDType, a.Quantization, a.MTPLayers, a.MaxModelLen)
	}
	// MiniMax: 230 B total (10 B active); ours without the MTP modules.
	if p := a.Params(); float64(p.Total) < 230e9*0.99 || float64(p.Total) > 230e9*1.01 {
		t.Errorf("total %.2f B, want 230 B within 1 %%", float64(p.Total)/1e9)
	}
	if _, err := Parse(edit(t, readFile(t, "testdata/minimax-m2/config.json"), func(m map[string]any) {
		l := make([]int, 62)
		m["attn_type_list"] = l
	}), ""); err == nil || !strings.Contains(err.Error(), "lightning") {
		t.Errorf("MiniMax-01 lightning attention: %v", err)
	}
}

// TestMTPAndMaxModelLen checks the recorded MTP layers and the max_model_len vLLM derives.
func TestMTPAndMaxModelLen(t *testing.T) {
	for _, tc := range []struct {
		id          string
		maxLen, mtp int
	}{
		{"meta-llama/Llama-2-7b-hf", 4096, 0},
		{"codellama/CodeLlama-34b-Instruct-hf", 16384, 0},
		{"meta-llama/Llama-3.1-8B-Instruct", 131072, 0},            // llama3 RoPE: not multiplied
		{"meta-llama/Llama-4-Scout-17B-16E-Instruct", 10485760, 0}, // text_config's, llama3 RoPE
		{"mistralai/Mixtral-8x22B-v0.1", 65536, 0},                 //
		{"Qwen/Qwen3-30B-A3B", 40960, 0},                           //
		{"deepseek-ai/DeepSeek-R1", 163840, 1},                     // yarn: 4096 x 40
		{"zai-org/GLM-5-FP8", 202752, 1},                           // rope_parameters default
		{"openai/gpt-oss-120b", 131072, 0},                         // yarn: 4096 x 32
		{"Qwen/Qwen3-14B", 40960, 0},                               //
		{"mistralai/Mixtral-8x7B-v0.1", 32768, 0},                  //
		{"meta-llama/Llama-3.1-70B-Instruct", 131072, 0},           //
		{"meta-llama/Llama-2-70b-hf", 4096, 0},                     //
	} {
		a := builtin(t, tc.id)
		if a.MaxModelLen != tc.maxLen || a.MTPLayers != tc.mtp {
			t.Errorf("%s: max_model_len %d, MTP layers %d; want %d, %d", tc.id, a.MaxModelLen, a.MTPLayers, tc.maxLen, tc.mtp)
		}
	}
	llama := readFile(t, "testdata/llama-3.1-8b/config.json")
	for _, tc := range []struct {
		name string
		f    func(m map[string]any)
		want int
	}{
		{"linear factor 2", func(m map[string]any) {
			m["max_position_embeddings"] = 4096
			m["rope_scaling"] = map[string]any{"type": "linear", "factor": 2.0}
		}, 8192},
		{"dynamic", func(m map[string]any) {
			m["max_position_embeddings"] = 4096
			m["rope_scaling"] = map[string]any{"rope_type": "dynamic", "factor": 4}
		}, 16384},
		{"yarn in rope_parameters", func(m map[string]any) {
			m["max_position_embeddings"] = 32768
			delete(m, "rope_scaling")
			m["rope_parameters"] = map[string]any{"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 32768}
		}, 131072},
		{"smallest key", func(m map[string]any) { m["seq_length"] = 2000; delete(m, "rope_scaling") }, 2000},
		{"model_max_length wins", func(m map[string]any) { m["model_max_length"] = 500000; delete(m, "rope_scaling") }, 500000},
		{"no key", func(m map[string]any) { delete(m, "max_position_embeddings") }, 2048},
	} {
		a, err := Parse(edit(t, llama, tc.f), "")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if a.MaxModelLen != tc.want {
			t.Errorf("%s: max_model_len %d, want %d", tc.name, a.MaxModelLen, tc.want)
		}
	}
}
