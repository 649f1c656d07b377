package hf

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/arch"
)

// The testdata/<model>/config.json files are written from the published Hugging Face configs
// (the fields that matter here, plus some that do not, to show they are ignored); glm-5 is the
// published zai-org/GLM-5-FP8 config, a copy of the built-in one (data/models). minimax-m2 is
// transcribed from the MiniMaxAI/MiniMax-M2 model card values, not a byte copy; eagle3-llama3.1-8b
// is an EAGLE-3 head config written after yuhuili/EAGLE3-LLaMA3.1-Instruct-8B's published fields
// (not a byte copy). The built-in
// configs are checked against the published figures in published_test.go.

// shape is one (attention kind, window, ffn kind) bucket and its layer count.
type shape struct {
	attn   arch.AttnKind
	window int
	ffn    arch.FFNKind
	count  int
}

func shapes(a *arch.Arch) []shape {
	m := map[shape]int{}
	for _, g := range a.Layers {
		m[shape{attn: g.Attn.Kind, window: g.Attn.Window, ffn: g.FFN.Kind}] += g.Count
	}
	var out []shape
	for s, n := range m {
		s.count = n
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.attn != b.attn {
			return a.attn < b.attn
		}
		if a.window != b.window {
			return a.window < b.window
		}
		return a.ffn < b.ffn
	})
	return out
}

func load(t *testing.T, dir string) *arch.Arch {
	t.Helper()
	a, err := Load(filepath.Join("testdata", dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

const B = 1e9

// TestPublishedParams checks Arch.Params against the published parameter counts. Params.Active
// counts the lm_head but not the embedding table (model/arch.go). Tolerances: 1 % where the
// published figure has three or more significant digits (it then differs from ours only by small
// weights we fold or omit); 3 % where it is a rounded headline (235 B, 22 B, 48 B, 40 B); for the
// one-digit "A3B" active figures, the range [3, 4) B. MTP layers are not part of the served model
// and are excluded (DeepSeek-V3 671 B = 685 B - 14 B MTP).
func TestPublishedParams(t *testing.T) {
	type bounds struct{ want, tol float64 } // tol relative; want < 0 means "in [-want, -want+1)"
	for _, tc := range []struct {
		dir           string
		total, active bounds // active.want == 0: dense, checked structurally
		shapes        []shape
	}{
		{"llama-3.1-8b", bounds{8.03 * B, 0.01}, bounds{}, []shape{{arch.AttnGQA, 0, arch.FFNDense, 32}}},
		{"llama-3.1-70b", bounds{70.6 * B, 0.01}, bounds{}, []shape{{arch.AttnGQA, 0, arch.FFNDense, 80}}},
		{"llama-3.2-1b", bounds{1.24 * B, 0.01}, bounds{}, []shape{{arch.AttnGQA, 0, arch.FFNDense, 16}}},
		{"mistral-7b-v0.1", bounds{7.24 * B, 0.01}, bounds{}, []shape{{arch.AttnGQA, 4096, arch.FFNDense, 32}}},
		{"qwen2.5-7b-instruct", bounds{7.61 * B, 0.01}, bounds{}, []shape{{arch.AttnGQA, 0, arch.FFNDense, 28}}},
		{"qwen3-32b", bounds{32.8 * B, 0.01}, bounds{}, []shape{{arch.AttnGQA, 0, arch.FFNDense, 64}}},
		{"qwen3-235b-a22b", bounds{235 * B, 0.03}, bounds{22 * B, 0.03}, []shape{{arch.AttnGQA, 0, arch.FFNMoE, 94}}},
		{"mixtral-8x7b-v0.1", bounds{46.7 * B, 0.01}, bounds{12.9 * B, 0.02}, []shape{{arch.AttnGQA, 0, arch.FFNMoE, 32}}},
		// OpenAI's model card: 116.83 B total, 5.13 B active. Ours is 0.8 % high on active because the
		// biases of all 128 experts (40 M) sit in ExtraParamsPerLayer, which counts as active.
		{"gpt-oss-120b", bounds{116.83 * B, 0.01}, bounds{5.13 * B, 0.015}, []shape{
			{arch.AttnGQA, 0, arch.FFNMoE, 18}, {arch.AttnGQA, 128, arch.FFNMoE, 18}}},
		{"deepseek-v3", bounds{671 * B, 0.01}, bounds{37 * B, 0.02}, []shape{
			{arch.AttnMLA, 0, arch.FFNDense, 3}, {arch.AttnMLA, 0, arch.FFNMoE, 58}}},
		// V3.2-Exp adds the lightning indexer (14 M a layer) to V3's 671 B.
		{"deepseek-v3.2-exp", bounds{671.9 * B, 0.01}, bounds{37 * B, 0.03}, []shape{
			{arch.AttnSparseMLA, 0, arch.FFNDense, 3}, {arch.AttnSparseMLA, 0, arch.FFNMoE, 58}}},
		{"kimi-k2-instruct", bounds{1.03e12, 0.02}, bounds{32 * B, 0.02}, []shape{
			{arch.AttnMLA, 0, arch.FFNDense, 1}, {arch.AttnMLA, 0, arch.FFNMoE, 60}}},
		{"glm-5", bounds{744 * B, 0.01}, bounds{40 * B, 0.03}, []shape{
			{arch.AttnSparseMLA, 0, arch.FFNDense, 3}, {arch.AttnSparseMLA, 0, arch.FFNMoE, 75}}},
		{"qwen3-next-80b-a3b-instruct", bounds{80 * B, 0.01}, bounds{-3 * B, 0}, []shape{
			{arch.AttnGQA, 0, arch.FFNMoE, 12}, {arch.AttnLinear, 0, arch.FFNMoE, 36}}},
		{"kimi-linear-48b-a3b-instruct", bounds{48 * B, 0.03}, bounds{-3 * B, 0}, []shape{
			{arch.AttnLinear, 0, arch.FFNDense, 1}, {arch.AttnLinear, 0, arch.FFNMoE, 19}, {arch.AttnMLA, 0, arch.FFNMoE, 7}}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			a := load(t, tc.dir)
			p := a.Params()
			check := func(what string, got int64, b bounds) {
				g := float64(got)
				if b.want < 0 {
					if lo := -b.want; g < lo || g >= lo+B {
						t.Errorf("%s params = %.3f B, want in [%.0f, %.0f) B", what, g/B, lo/B, lo/B+1)
					}
					return
				}
				if rel := math.Abs(g-b.want) / b.want; rel > b.tol {
					t.Errorf("%s params = %.3f B, want %.3f B within %.0f%% (off by %.2f%%)", what, g/B, b.want/B, 100*b.tol, 100*rel)
				}
			}
			check("total", p.Total, tc.total)
			if tc.active.want != 0 {
				check("active", p.Active, tc.active)
			} else if want := p.Total - p.Embedding - p.LMHead + int64(a.Vocab*a.Hidden); p.Active != want {
				// Dense: everything runs but the embedding lookup; the lm_head (tied or not) does.
				t.Errorf("dense active = %d, want total - embedding table (+ tied lm_head) = %d", p.Active, want)
			}
			got, want := shapes(a), tc.shapes
			sort.Slice(want, func(i, j int) bool { return shapesLess(want[i], want[j]) })
			if len(got) != len(want) {
				t.Fatalf("layer shapes = %v, want %v", got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("layer shapes = %v, want %v", got, want)
					break
				}
			}
		})
	}
}

func shapesLess(a, b shape) bool {
	if a.attn != b.attn {
		return a.attn < b.attn
	}
	if a.window != b.window {
		return a.window < b.window
	}
	return a.ffn < b.ffn
}

// TestKVBytesPerToken checks the per-token KV footprint on one GPU holding all layers; the
// expected values are worked out by hand in the comments.
func TestKVBytesPerToken(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		kv   arch.DType
		want float64
	}{
		{"llama-3.1-70b", arch.BF16, 80 * 8 * 256 * 2},               // 327,680
		{"llama-3.1-8b", arch.BF16, 32 * 8 * 256 * 2},                // 131,072
		{"llama-3.1-8b", arch.FP8, 32 * 8 * 256},                     // 65,536
		{"qwen3-235b-a22b", arch.BF16, 94 * 4 * 256 * 2},             // 192,512
		{"gpt-oss-120b", arch.BF16, 36 * 8 * 128 * 2},                // windowed layers count in full
		{"deepseek-v3", arch.BF16, 61 * 576 * 2},                     // 70,272
		{"deepseek-v3", arch.FP8, 61 * 576},                          // 35,136
		{"deepseek-v3.2-exp", arch.FP8, 61 * (656 + 132)},            // fp8_ds_mla + indexer key
		{"deepseek-v3.2-exp", arch.BF16, 61 * (576*2 + 132)},         // indexer keys stay fp8
		{"glm-5", arch.FP8, 78 * (656 + 132)},                        // 61,464
		{"qwen3-next-80b-a3b-instruct", arch.BF16, 12 * 2 * 512 * 2}, // GDN layers: 0
		{"kimi-linear-48b-a3b-instruct", arch.BF16, 7 * 576 * 2},     // KDA layers: 0
	} {
		if got := load(t, tc.dir).KVBytesPerToken(1, tc.kv); got != tc.want {
			t.Errorf("%s %s: KVBytesPerToken = %v, want %v", tc.dir, tc.kv, got, tc.want)
		}
	}

	// GLM-5.3-Flash as the built-in description (model/arch/data/models) has it: 11 NoPE sparse-MLA layers with a
	// 4:1-compressed indexer, 34 KDA layers. "11 x (656 + 132/4) = about 7.6 KB".
	glm := &arch.Arch{Name: "glm-5.3-flash-like", Hidden: 4096, Vocab: 154880, Layers: []arch.LayerGroup{
		{Count: 11, Attn: arch.Attention{Kind: arch.AttnSparseMLA, Heads: 64, QLoraRank: 1536, KVLoraRank: 512,
			QKNopeDim: 256, VHeadDim: 256, IndexHeads: 32, IndexHeadDim: 128, IndexTopK: 2048, IndexCompress: 4},
			FFN: arch.FFN{Kind: arch.FFNMoE, Experts: 288, TopK: 8, ExpertIntermediate: 2048}},
		{Count: 34, Attn: arch.Attention{Kind: arch.AttnLinear, StateHeads: 64, StateKeyDim: 128, StateValDim: 128},
			FFN: arch.FFN{Kind: arch.FFNDense, Intermediate: 12288}},
	}}
	if err := glm.Normalize(); err != nil {
		t.Fatal(err)
	}
	if got, want := glm.KVBytesPerToken(1, arch.FP8), 11*(656+132.0/4); got != want {
		t.Errorf("GLM-5.3-Flash-like fp8: KVBytesPerToken = %v, want %v", got, want)
	}
}

// TestLinearAttentionShapes checks the recurrent-state layout of the hybrid families.
func TestLinearAttentionShapes(t *testing.T) {
	for _, tc := range []struct {
		dir                         string
		heads, k, v, conv, channels int
		proj                        int64
	}{
		// GDN: 32 value heads of 128x128 state; conv over q, k (16 heads each) and v (32 heads);
		// in_proj_qkvz 2048x12288 + in_proj_ba 2048x64 + conv 8192x4 + 2x32 + 128 + out 4096x2048.
		{"qwen3-next-80b-a3b-instruct", 32, 128, 128, 4, 8192, 2048*12288 + 2048*64 + 8192*4 + 64 + 128 + 4096*2048},
		// KDA: 32 heads of 128; q, k, v 2304x4096 with convs, f/g low-rank 2x(2304x128 + 128x4096),
		// b_proj 2304x32, A_log 32, dt_bias 4096, o_norm 128, o_proj 4096x2304.
		{"kimi-linear-48b-a3b-instruct", 32, 128, 128, 4, 3 * 4096, 3*2304*4096 + 3*4096*4 + 2*(2304*128+128*4096) + 2304*32 + 32 + 4096 + 128 + 4096*2304},
	} {
		a := load(t, tc.dir)
		found := false
		for _, g := range a.Layers {
			at := g.Attn
			if at.Kind != arch.AttnLinear {
				continue
			}
			found = true
			got := []int{at.StateHeads, at.StateKeyDim, at.StateValDim, at.ConvKernel, at.ConvChannels}
			want := []int{tc.heads, tc.k, tc.v, tc.conv, tc.channels}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s: state (heads, key, value, conv, channels) = %v, want %v", tc.dir, got, want)
					break
				}
			}
			if at.ProjParams != tc.proj {
				t.Errorf("%s: linear ProjParams = %d, want %d", tc.dir, at.ProjParams, tc.proj)
			}
		}
		if !found {
			t.Errorf("%s: no linear layers", tc.dir)
		}
	}
}

// TestGatedAttention checks the family quirks of softmax-attention projections.
func TestGatedAttention(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want int64
	}{
		// Qwen3-Next: q_proj doubled for the output gate, q/k norms.
		{"qwen3-next-80b-a3b-instruct", 2048*16*256*2 + 2*2048*2*256 + 16*256*2048 + 2*256},
		// gpt-oss: q/k/v/o biases and 64 sinks.
		{"gpt-oss-120b", 2880*4096 + 2*2880*512 + 4096*2880 + 4096 + 2*512 + 2880 + 64},
		// Qwen2: q/k/v biases only.
		{"qwen2.5-7b-instruct", 3584*3584 + 2*3584*512 + 3584*3584 + 3584 + 2*512},
		// Qwen3: q/k norms.
		{"qwen3-32b", 5120*8192 + 2*5120*1024 + 8192*5120 + 2*128},
	} {
		for _, g := range load(t, tc.dir).Layers {
			if g.Attn.Kind == arch.AttnGQA && g.Attn.ProjParams != tc.want {
				t.Errorf("%s: gqa ProjParams = %d, want %d", tc.dir, g.Attn.ProjParams, tc.want)
			}
		}
	}
}

// TestDTypes checks the weight formats read from quantization configs.
func TestDTypes(t *testing.T) {
	type dt struct{ attn, mlp, experts arch.DType }
	check := func(name string, a *arch.Arch, want dt) {
		t.Helper()
		if a.EmbedDType != arch.BF16 {
			t.Errorf("%s: embed dtype = %s, want bf16", name, a.EmbedDType)
		}
		for _, g := range a.Layers {
			got := dt{g.Attn.DType, g.FFN.DType, g.FFN.ExpertDType}
			w := want
			if g.FFN.Kind == arch.FFNDense {
				w.experts = w.mlp
			}
			if got != w {
				t.Errorf("%s: %d x %s/%s dtypes (attn, mlp, experts) = %v, want %v", name, g.Count, g.Attn.Kind, g.FFN.Kind, got, w)
			}
		}
	}
	check("llama-3.1-8b", load(t, "llama-3.1-8b"), dt{arch.BF16, arch.BF16, arch.BF16})
	check("gpt-oss-120b (mxfp4)", load(t, "gpt-oss-120b"), dt{arch.BF16, arch.BF16, arch.MXFP4})
	check("deepseek-v3 (fp8)", load(t, "deepseek-v3"), dt{arch.FP8, arch.FP8, arch.FP8})
	// Load picks up the sibling hf_quant_config.json: NVFP4 with self_attn excluded.
	check("qwen3-235b-a22b-nvfp4 (Load)", load(t, "qwen3-235b-a22b-nvfp4"), dt{arch.BF16, arch.BF16, arch.NVFP4})

	cfg := readFile(t, "testdata/deepseek-v3/config.json")
	for _, tc := range []struct {
		name  string
		quant string
		want  dt
	}{
		{"nvfp4, nothing excluded", `{"quantization": {"quant_algo": "NVFP4", "exclude_modules": ["lm_head"]}}`,
			dt{arch.NVFP4, arch.NVFP4, arch.NVFP4}},
		{"nvfp4, attention excluded", `{"quantization": {"quant_algo": "NVFP4", "exclude_modules": ["lm_head", "model.layers.*.self_attn*"]}}`,
			dt{arch.BF16, arch.NVFP4, arch.NVFP4}},
		{"nvfp4, one projection excluded", `{"quantization": {"quant_algo": "NVFP4", "exclude_modules": ["*kv_b_proj"]}}`,
			dt{arch.BF16, arch.NVFP4, arch.NVFP4}},
		{"nvfp4, mlp and attention excluded", `{"quantization": {"quant_algo": "NVFP4", "exclude_modules": ["self_attn", "model.layers.*.mlp.shared_experts*", "*.mlp.gate_proj", "*.mlp.up_proj", "*.mlp.down_proj"]}}`,
			dt{arch.BF16, arch.BF16, arch.NVFP4}},
		{"fp8 (modelopt)", `{"quantization": {"quant_algo": "FP8"}}`, dt{arch.FP8Tensor, arch.FP8Tensor, arch.FP8Tensor}},
		{"kv-cache only", `{"quantization": {"quant_algo": null, "kv_cache_quant_algo": "FP8"}}`, dt{arch.BF16, arch.BF16, arch.BF16}},
	} {
		a, err := ParseWithQuant(cfg, []byte(tc.quant), "dsv3")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		check(tc.name, a, tc.want)
	}

	for _, tc := range []struct {
		name  string
		quant string
		want  dt
	}{
		{"inline modelopt nvfp4 with ignore", `{"quant_method": "modelopt", "quant_algo": "NVFP4", "ignore": ["lm_head", "model.layers.*.self_attn*"]}`,
			dt{arch.BF16, arch.NVFP4, arch.NVFP4}},
		{"fp8 with modules_to_not_convert", `{"quant_method": "fp8", "modules_to_not_convert": ["model.layers.*.self_attn", "lm_head"]}`,
			dt{arch.BF16, arch.FP8Tensor, arch.FP8Tensor}},
		{"fp8 ignoring small projections only", `{"quant_method": "fp8", "modules_to_not_convert": ["model.layers.0.self_attn.kv_a_layernorm", "mlp.gate"]}`,
			dt{arch.FP8Tensor, arch.FP8Tensor, arch.FP8Tensor}},
		{"fp8 block 128x128", `{"quant_method": "fp8", "weight_block_size": [128, 128]}`, dt{arch.FP8, arch.FP8, arch.FP8}},
		{"awq 4-bit", `{"quant_method": "awq", "bits": 4}`, dt{"uint4-g128", "uint4-g128", "uint4-g128"}},
		{"null", `null`, dt{arch.BF16, arch.BF16, arch.BF16}},
	} {
		a, err := Parse(edit(t, cfg, func(m map[string]any) {
			var q any
			if err := json.Unmarshal([]byte(tc.quant), &q); err != nil {
				t.Fatal(err)
			}
			m["quantization_config"] = q
		}), "dsv3")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		check(tc.name, a, tc.want)
	}

	// Mixed layers: excluding one layer's attention splits the group.
	a, err := ParseWithQuant(cfg, []byte(`{"quantization": {"quant_algo": "NVFP4", "exclude_modules": ["model.layers.60.self_attn*"]}}`), "dsv3")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range a.Layers {
		if g.Attn.DType == arch.BF16 {
			n += g.Count
		}
	}
	if n != 1 || a.NumLayers() != 61 {
		t.Errorf("layers with bf16 attention = %d of %d, want 1 of 61", n, a.NumLayers())
	}
}

func TestModuleMatch(t *testing.T) {
	for _, tc := range []struct {
		pat, name string
		want      bool
	}{
		{"lm_head", "lm_head", true},
		{"lm_head", "model.layers.0.mlp.down_proj", false},
		{"self_attn", "model.layers.3.self_attn.q_proj", true},
		{"attn", "model.layers.3.self_attn.q_proj", false}, // whole module names only
		{"model.layers.*.self_attn", "model.layers.3.self_attn.q_proj", true},
		{"model.layers.*.self_attn*", "model.layers.3.self_attn.q_proj", true},
		{"*self_attn*", "model.layers.3.self_attn.q_proj", true},
		{"model.layers.3.self_attn", "model.layers.13.self_attn.q_proj", false},
		{"model.layers.1?.self_attn", "model.layers.13.self_attn.q_proj", true},
		{"mlp.gate", "model.layers.3.mlp.gate_proj", false},
		{"mlp.gate", "model.layers.3.mlp.gate", true},
		{"*.mlp.experts*", "model.layers.3.mlp.experts.0.down_proj", true},
		{"model.layers.0.mlp", "model.layers.0.mlp.down_proj", true},
		{"model.layers.0.mlp", "model.layers.0.mlp_norm", false},
		{"**", "x", true},
		{"*a*b*c", "xaxbxc", true},
		{"*a*b*c", "xaxbx", false},
	} {
		if got := moduleMatch(tc.pat, tc.name); got != tc.want {
			t.Errorf("moduleMatch(%q, %q) = %v, want %v", tc.pat, tc.name, got, tc.want)
		}
	}
}

// TestVariants checks defaults and alternative spellings against the published configs.
func TestVariants(t *testing.T) {
	same := func(name string, a, b *arch.Arch) {
		t.Helper()
		if pa, pb := a.Params(), b.Params(); pa != pb {
			t.Errorf("%s: params %+v, want %+v", name, pa, pb)
		}
		sa, sb := shapes(a), shapes(b)
		if len(sa) != len(sb) {
			t.Errorf("%s: shapes %v, want %v", name, sa, sb)
			return
		}
		for i := range sa {
			if sa[i] != sb[i] {
				t.Errorf("%s: shapes %v, want %v", name, sa, sb)
				return
			}
		}
	}
	parse := func(b []byte) *arch.Arch {
		t.Helper()
		a, err := Parse(b, "")
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	oss := readFile(t, "testdata/gpt-oss-120b/config.json")
	same("gpt-oss without layer_types", parse(edit(t, oss, func(m map[string]any) { delete(m, "layer_types") })), parse(oss))
	same("gpt-oss without model_type", parse(edit(t, oss, func(m map[string]any) { delete(m, "model_type") })), parse(oss))

	next := readFile(t, "testdata/qwen3-next-80b-a3b-instruct/config.json")
	withTypes := edit(t, next, func(m map[string]any) {
		var lt []string
		for i := 0; i < 48; i++ {
			if (i+1)%4 == 0 {
				lt = append(lt, fullAttention)
			} else {
				lt = append(lt, linearAttention)
			}
		}
		m["layer_types"] = lt
		delete(m, "full_attention_interval")
	})
	same("qwen3_next with layer_types", parse(withTypes), parse(next))

	llama := readFile(t, "testdata/llama-3.1-8b/config.json")
	same("llama with explicit head_dim and kv heads", parse(edit(t, llama, func(m map[string]any) { m["head_dim"] = 128 })), parse(llama))

	q := readFile(t, "testdata/qwen3-235b-a22b/config.json")
	a := parse(edit(t, q, func(m map[string]any) { m["mlp_only_layers"] = []int{0, 1}; m["decoder_sparse_step"] = 1 }))
	if got := shapes(a); len(got) != 2 || got[0].count != 2 || got[0].ffn != arch.FFNDense {
		t.Errorf("qwen3_moe with mlp_only_layers [0, 1]: shapes %v, want 2 dense + 92 moe", got)
	}
	a = parse(edit(t, q, func(m map[string]any) { m["decoder_sparse_step"] = 2 }))
	if got := shapes(a); len(got) != 2 || got[0].count != 47 || got[1].count != 47 {
		t.Errorf("qwen3_moe with decoder_sparse_step 2: shapes %v, want 47 dense + 47 moe", got)
	}
	a = parse(edit(t, q, func(m map[string]any) {
		m["use_sliding_window"] = true
		m["sliding_window"] = 4096
		m["max_window_layers"] = 90
	}))
	if got := shapes(a); len(got) != 2 || got[0].count != 90 || got[1].window != 4096 || got[1].count != 4 {
		t.Errorf("qwen3_moe sliding from layer 90: shapes %v, want 90 full + 4 windowed", got)
	}

	if a := parse(readFile(t, "testdata/llama-3.2-1b/config.json")); !a.TiedEmbed {
		t.Errorf("llama-3.2-1b: TiedEmbed = false, want true")
	}
	if a := parse(llama); a.Name != "llama" || a.Family != "llama" {
		t.Errorf("unnamed llama: Name, Family = %q, %q; want llama, llama", a.Name, a.Family)
	}
	if a := load(t, "llama-3.1-8b"); a.Name != "llama-3.1-8b" {
		t.Errorf("Load: Name = %q, want the directory name", a.Name)
	}
}

func TestErrors(t *testing.T) {
	llama := readFile(t, "testdata/llama-3.1-8b/config.json")
	kimi := readFile(t, "testdata/kimi-linear-48b-a3b-instruct/config.json")
	dsv3 := readFile(t, "testdata/deepseek-v3/config.json")
	for _, tc := range []struct {
		name  string
		cfg   []byte
		quant []byte
		want  []string // substrings of the error
	}{
		{"unknown family", []byte(`{"model_type": "bert"}`), nil,
			[]string{"config.json", `"bert"`, "llama", "qwen3_next", "kimi_linear", "glm_moe_dsa"}},
		{"not an object", []byte(`[1, 2]`), nil, []string{"config.json"}},
		{"not json", []byte(`{"model_type": `), nil, []string{"config.json"}},
		{"missing hidden_size", edit(t, llama, func(m map[string]any) { delete(m, "hidden_size") }), nil,
			[]string{"config.json", `"hidden_size"`, "llama"}},
		{"missing intermediate_size", edit(t, llama, func(m map[string]any) { delete(m, "intermediate_size") }), nil,
			[]string{`"intermediate_size"`}},
		{"wrong type", edit(t, llama, func(m map[string]any) { m["num_hidden_layers"] = "32" }), nil,
			[]string{"config.json", "num_hidden_layers"}},
		{"negative", edit(t, llama, func(m map[string]any) { m["num_attention_heads"] = -1 }), nil,
			[]string{"num_attention_heads = -1"}},
		{"kv heads", edit(t, llama, func(m map[string]any) { m["num_key_value_heads"] = 5 }), nil,
			[]string{"num_key_value_heads = 5"}},
		{"layer_types length", edit(t, llama, func(m map[string]any) { m["layer_types"] = []string{"full_attention"} }), nil,
			[]string{"layer_types has 1 entries"}},
		{"layer_types value", edit(t, llama, func(m map[string]any) {
			lt := make([]string, 32)
			for i := range lt {
				lt[i] = "chunked_attention"
			}
			m["layer_types"] = lt
		}), nil, []string{`layer_types[0] = "chunked_attention"`}},
		{"sliding without window", edit(t, llama, func(m map[string]any) {
			lt := make([]string, 32)
			for i := range lt {
				lt[i] = slidingAttention
			}
			m["layer_types"] = lt
		}), nil, []string{"sliding_window is missing"}},
		{"kimi without linear_attn_config", edit(t, kimi, func(m map[string]any) { delete(m, "linear_attn_config") }), nil,
			[]string{`"linear_attn_config"`}},
		{"kda layer out of range", edit(t, kimi, func(m map[string]any) {
			m["linear_attn_config"].(map[string]any)["kda_layers"] = []int{0}
		}), nil, []string{"kda_layers has 0"}},
		{"top-k above experts", edit(t, dsv3, func(m map[string]any) { m["num_experts_per_tok"] = 300 }), nil,
			[]string{"num_experts_per_tok = 300 exceeds n_routed_experts = 256"}},
		{"missing kv_lora_rank", edit(t, dsv3, func(m map[string]any) { delete(m, "kv_lora_rank") }), nil,
			[]string{`"kv_lora_rank"`, "deepseek_v3"}},
		{"sparse without indexer", edit(t, dsv3, func(m map[string]any) { m["model_type"] = "deepseek_v32" }), nil,
			[]string{`"index_n_heads"`}},
		{"unsupported quant", edit(t, dsv3, func(m map[string]any) {
			m["quantization_config"] = map[string]any{"quant_method": "hqq"}
		}), nil, []string{"quant_method", "hqq", "mxfp4", "compressed-tensors", "bitsandbytes"}},
		{"bad torch_dtype", edit(t, llama, func(m map[string]any) { m["torch_dtype"] = "int8" }), nil,
			[]string{"torch_dtype"}},
		{"hf_quant_config without quantization", llama, []byte(`{"producer": {}}`),
			[]string{"hf_quant_config.json", `"quantization"`}},
		{"hf_quant_config algo", llama, []byte(`{"quantization": {"quant_algo": "W4A8_AWQ"}}`),
			[]string{"hf_quant_config.json", "W4A8_AWQ"}},
	} {
		_, err := ParseWithQuant(tc.cfg, tc.quant, "x")
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", tc.name, err, w)
			}
		}
	}

	// Load names the file.
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, edit(t, llama, func(m map[string]any) { delete(m, "vocab_size") }), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "vocab_size") {
		t.Errorf("Load: error %v, want one naming %s and vocab_size", err, path)
	}
	if _, err := Load(filepath.Join(dir, "absent.json")); err == nil {
		t.Errorf("Load of a missing file: no error")
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edit returns cfg with f applied to its decoded top-level object.
func edit(t testing.TB, cfg []byte, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(cfg, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLongExclusionLists: per-layer exclusion names are cheap whatever their number; a long list
// of layer-independent globs is refused rather than matched slowly.
func TestLongExclusionLists(t *testing.T) {
	cfg := readFile(t, "testdata/deepseek-v3/config.json")
	var perLayer []string
	for i := 0; i < 61; i++ {
		for _, s := range []string{"self_attn.kv_a_proj_with_mqa", "mlp.gate", "mlp.shared_experts.down_proj"} {
			perLayer = append(perLayer, fmt.Sprintf("model.layers.%d.%s", i, s))
		}
	}
	a, err := Parse(edit(t, cfg, func(m map[string]any) {
		m["quantization_config"] = map[string]any{"quant_method": "fp8", "ignore": perLayer}
	}), "x")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range a.Layers {
		// kv_a excluded in every layer: attention stays bf16; shared experts too; routed experts fp8.
		if g.Attn.DType != arch.BF16 || g.FFN.ExpertDType != arch.FP8Tensor || (g.FFN.Kind == arch.FFNMoE && g.FFN.DType != arch.BF16) {
			t.Errorf("%d x %s: dtypes %s, %s, %s; want bf16 attention, bf16 shared, fp8 experts", g.Count, g.FFN.Kind, g.Attn.DType, g.FFN.DType, g.FFN.ExpertDType)
		}
	}

	var globs []string
	for i := 0; i < 1000; i++ {
		globs = append(globs, fmt.Sprintf("*self_attn*%d*", i))
	}
	_, err = Parse(edit(t, cfg, func(m map[string]any) {
		m["quantization_config"] = map[string]any{"quant_method": "fp8", "ignore": globs}
	}), "x")
	if err == nil || !strings.Contains(err.Error(), "exclusion list too long") {
		t.Errorf("1,000 layer-independent globs: error %v, want \"exclusion list too long\"", err)
	}
}
