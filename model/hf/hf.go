package hf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/model/arch"
)

// Sanity limits on config values. They are far above any published model and keep every weight
// count of Arch.Params inside int64 and every loop over layers short, whatever the input.
const (
	maxLayers       = 1024
	maxHidden       = 1 << 16 // 65,536
	maxVocab        = 1 << 22 // 4,194,304
	maxHeads        = 1 << 12
	maxHeadDim      = 1 << 12
	maxIntermediate = 1 << 18 // 262,144
	maxExperts      = 1 << 12
	maxRank         = 1 << 16 // lora ranks
	maxWindow       = 1 << 30
)

// rawConfig is the union of the config.json fields the supported families use. Pointers tell an
// absent (or null) field from a zero.
type rawConfig struct {
	ModelType     string   `json:"model_type"`
	Architectures []string `json:"architectures"`
	NameOrPath    string   `json:"_name_or_path"`
	TorchDType    *string  `json:"torch_dtype"`
	DType         *string  `json:"dtype"`

	Hidden            *int  `json:"hidden_size"`
	Layers            *int  `json:"num_hidden_layers"`
	Vocab             *int  `json:"vocab_size"`
	Heads             *int  `json:"num_attention_heads"`
	KVHeads           *int  `json:"num_key_value_heads"`
	HeadDim           *int  `json:"head_dim"`
	Intermediate      *int  `json:"intermediate_size"`
	TieWordEmbeddings *bool `json:"tie_word_embeddings"`
	AttentionBias     *bool `json:"attention_bias"`
	MLPBias           *bool `json:"mlp_bias"`

	SlidingWindow    *int     `json:"sliding_window"`
	UseSlidingWindow *bool    `json:"use_sliding_window"`
	MaxWindowLayers  *int     `json:"max_window_layers"`
	LayerTypes       []string `json:"layer_types"`

	// MoE, under the names the families use.
	NumExperts         *int  `json:"num_experts"`
	NumLocalExperts    *int  `json:"num_local_experts"`
	NRoutedExperts     *int  `json:"n_routed_experts"`
	NumExpertsPerTok   *int  `json:"num_experts_per_tok"`
	NumExpertsPerToken *int  `json:"num_experts_per_token"`
	ExpertsPerToken    *int  `json:"experts_per_token"`
	MoEIntermediate    *int  `json:"moe_intermediate_size"`
	NSharedExperts     *int  `json:"n_shared_experts"`
	NumSharedExperts   *int  `json:"num_shared_experts"`
	SharedIntermediate *int  `json:"shared_expert_intermediate_size"`
	DecoderSparseStep  *int  `json:"decoder_sparse_step"`
	MLPOnlyLayers      []int `json:"mlp_only_layers"`
	FirstKDenseReplace *int  `json:"first_k_dense_replace"`
	MoELayerFreq       *int  `json:"moe_layer_freq"`

	// MLA and the DSA indexer.
	QLoraRank     *int `json:"q_lora_rank"`
	KVLoraRank    *int `json:"kv_lora_rank"`
	QKRopeHeadDim *int `json:"qk_rope_head_dim"`
	QKNopeHeadDim *int `json:"qk_nope_head_dim"`
	VHeadDim      *int `json:"v_head_dim"`
	IndexNHeads   *int `json:"index_n_heads"`
	IndexHeadDim  *int `json:"index_head_dim"`
	IndexTopK     *int `json:"index_topk"`

	// Gated DeltaNet (qwen3_next).
	LinearNumKeyHeads     *int `json:"linear_num_key_heads"`
	LinearNumValueHeads   *int `json:"linear_num_value_heads"`
	LinearKeyHeadDim      *int `json:"linear_key_head_dim"`
	LinearValueHeadDim    *int `json:"linear_value_head_dim"`
	LinearConvKernelDim   *int `json:"linear_conv_kernel_dim"`
	FullAttentionInterval *int `json:"full_attention_interval"`

	// Kimi Delta Attention (kimi_linear).
	LinearAttnConfig *rawLinearAttn `json:"linear_attn_config"`

	// Llama 4: chunked local attention, NoPE layers, interleaved MoE, the text and vision towers.
	AttentionChunkSize     *int            `json:"attention_chunk_size"`
	NoRopeLayers           []int           `json:"no_rope_layers"`
	InterleaveMoELayerStep *int            `json:"interleave_moe_layer_step"`
	MoELayers              []int           `json:"moe_layers"`
	IntermediateSizeMLP    *int            `json:"intermediate_size_mlp"`
	TextConfig             json.RawMessage `json:"text_config"`
	VisionConfig           *rawVision      `json:"vision_config"`

	// MiniMax-M2.
	UseQKNorm       *bool  `json:"use_qk_norm"`
	QKNormType      string `json:"qk_norm_type"`
	UseRoutingBias  *bool  `json:"use_routing_bias"`
	AttnTypeList    []int  `json:"attn_type_list"`
	SharedInterSize *int   `json:"shared_intermediate_size"`

	// Multi-token prediction layers, under the names the families use.
	NumNextnPredictLayers *int  `json:"num_nextn_predict_layers"`
	MTPNumHiddenLayers    *int  `json:"mtp_num_hidden_layers"`
	NumMTPModules         *int  `json:"num_mtp_modules"`
	UseMTP                *bool `json:"use_mtp"`

	// EAGLE-3 draft heads: the reduced vocabulary of their own lm_head.
	DraftVocabSize *int `json:"draft_vocab_size"`

	// Context length (vLLM's _get_and_verify_max_len reads these).
	MaxPositionEmbeddings *float64        `json:"max_position_embeddings"`
	NPositions            *float64        `json:"n_positions"`
	MaxSeqLen             *float64        `json:"max_seq_len"`
	SeqLength             *float64        `json:"seq_length"`
	ModelMaxLength        *float64        `json:"model_max_length"`
	MaxTargetPositions    *float64        `json:"max_target_positions"`
	MaxSequenceLength     *float64        `json:"max_sequence_length"`
	MaxSeqLength          *float64        `json:"max_seq_length"`
	SeqLen                *float64        `json:"seq_len"`
	RopeScaling           json.RawMessage `json:"rope_scaling"`
	RopeParameters        json.RawMessage `json:"rope_parameters"`

	QuantizationConfig json.RawMessage `json:"quantization_config"`
	CompressionConfig  json.RawMessage `json:"compression_config"`
}

// rawVision is the vision_config of a Llama 4 checkpoint (transformers Llama4VisionConfig).
type rawVision struct {
	Hidden             *int     `json:"hidden_size"`
	Intermediate       *int     `json:"intermediate_size"`
	Layers             *int     `json:"num_hidden_layers"`
	ImageSize          *int     `json:"image_size"`
	PatchSize          *int     `json:"patch_size"`
	NumChannels        *int     `json:"num_channels"`
	ProjectorInputDim  *int     `json:"projector_input_dim"`
	ProjectorOutputDim *int     `json:"projector_output_dim"`
	VisionOutputDim    *int     `json:"vision_output_dim"`
	PixelShuffleRatio  *float64 `json:"pixel_shuffle_ratio"`
}

type rawLinearAttn struct {
	KDALayers           []int `json:"kda_layers"`
	FullAttnLayers      []int `json:"full_attn_layers"`
	NumHeads            *int  `json:"num_heads"`
	HeadDim             *int  `json:"head_dim"`
	ShortConvKernelSize *int  `json:"short_conv_kernel_size"`
}

// Parse reads a Hugging Face config.json and returns the normalized architecture. name becomes
// Arch.Name; when empty, the config's _name_or_path or its model_type is used. The quantization
// of the weights is read from the config's quantization_config, if any.
func Parse(configJSON []byte, name string) (*arch.Arch, error) {
	return parse(configJSON, nil, name, "config.json", "hf_quant_config.json")
}

// ParseWithQuant is Parse with the contents of a ModelOpt hf_quant_config.json (nil when the
// checkpoint has none). When both are present, hf_quant_config.json decides the weight formats.
func ParseWithQuant(configJSON, hfQuantConfigJSON []byte, name string) (*arch.Arch, error) {
	return parse(configJSON, hfQuantConfigJSON, name, "config.json", "hf_quant_config.json")
}

// Load reads the config.json at path, and the hf_quant_config.json beside it if there is one. The
// model is named after the file's directory.
func Load(path string) (*arch.Arch, error) {
	cfg, err := fsutil.ReadFile(path, fsutil.MaxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("hf: %w", err)
	}
	qpath := filepath.Join(filepath.Dir(path), "hf_quant_config.json")
	q, err := fsutil.ReadFile(qpath, fsutil.MaxConfigBytes)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("hf: %w", err)
		}
		q = nil
	}
	name := filepath.Base(filepath.Dir(path))
	if abs, err := filepath.Abs(path); err == nil {
		name = filepath.Base(filepath.Dir(abs))
	}
	return parse(cfg, q, name, path, qpath)
}

// family is one supported model_type.
type family struct {
	modelType string
	arches    []string // architectures[] entries that identify it when model_type is missing
	build     func(r *reader, c *rawConfig) []layer
}

// families lists the supported families, in lookup order.
func families() []family {
	return []family{
		{"llama", []string{"LlamaForCausalLM"}, buildDense},
		{"mistral", []string{"MistralForCausalLM"}, buildDense},
		{"qwen2", []string{"Qwen2ForCausalLM"}, buildDense},
		{"qwen3", []string{"Qwen3ForCausalLM"}, buildDense},
		{"mixtral", []string{"MixtralForCausalLM"}, buildMoEGQA},
		{"qwen3_moe", []string{"Qwen3MoeForCausalLM"}, buildMoEGQA},
		{"gpt_oss", []string{"GptOssForCausalLM"}, buildMoEGQA},
		{"minimax_m2", []string{"MiniMaxM2ForCausalLM"}, buildMoEGQA},
		{"llama4", []string{"Llama4ForConditionalGeneration"}, buildLlama4},
		{"llama4_text", []string{"Llama4ForCausalLM"}, buildLlama4},
		{"deepseek_v3", []string{"DeepseekV3ForCausalLM"}, buildMLA},
		{"kimi_k2", nil, buildMLA},
		{"deepseek_v32", []string{"DeepseekV32ForCausalLM"}, buildMLA},
		{"glm_moe_dsa", []string{"GlmMoeDsaForCausalLM"}, buildMLA},
		{"kimi_linear", []string{"KimiLinearForCausalLM"}, buildMLA},
		{"qwen3_next", []string{"Qwen3NextForCausalLM"}, buildQwen3Next},
	}
}

// Families lists the supported model_type values, sorted.
func Families() []string {
	fs := families()
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.modelType
	}
	sort.Strings(out)
	return out
}

func lookupFamily(c *rawConfig) (family, string, bool) {
	for _, f := range families() {
		if f.modelType == c.ModelType {
			return f, c.ModelType, true
		}
	}
	if c.ModelType == "" {
		for _, a := range c.Architectures {
			for _, f := range families() {
				for _, fa := range f.arches {
					if fa == a {
						return f, f.modelType, true
					}
				}
			}
		}
	}
	return family{}, "", false
}

// layer is the shape of one decoder layer before grouping, with the module names that quantization
// exclusion lists are matched against.
type layer struct {
	attn         arch.Attention
	ffn          arch.FFN
	path         string // "model.layers." or "language_model.model.layers."
	attnPrefix   string // "self_attn" or "linear_attn"
	densePrefix  string // "mlp" or "feed_forward"
	moePrefix    string // "mlp", "block_sparse_moe" or "feed_forward"
	sharedName   string // "shared_experts" or "shared_expert"
	fusedExperts bool   // routed experts stored as fused 3-D tensors, not one nn.Linear per expert
	extra        int64  // small weights (norms, biases, router bias), folded into ExtraParamsPerLayer
}

func parse(cfgJSON, quantJSON []byte, name, file, quantFile string) (*arch.Arch, error) {
	var c rawConfig
	if err := decode(cfgJSON, &c); err != nil {
		return nil, fmt.Errorf("hf: %s: %w", file, err)
	}
	fam, mt, ok := lookupFamily(&c)
	if !ok {
		what := fmt.Sprintf("model_type %q", c.ModelType)
		if c.ModelType == "" {
			what = fmt.Sprintf("no model_type (architectures %q)", c.Architectures)
		}
		return nil, fmt.Errorf("hf: %s: unsupported %s: supported families are %s", file, what, strings.Join(Families(), ", "))
	}
	r := &reader{file: file, family: mt}
	top := c // the top level, kept when the decoder's fields are nested in text_config
	var notes []string
	if tcRaw := bytes.TrimSpace(c.TextConfig); mt == "llama4" && len(tcRaw) > 0 && !bytes.Equal(tcRaw, []byte("null")) {
		// A multimodal checkpoint (Llama 4): the decoder is text_config; the top level keeps the
		// quantization and, possibly, the dtype.
		var tc rawConfig
		if err := decode(c.TextConfig, &tc); err != nil {
			return nil, fmt.Errorf("hf: %s: text_config: %w", file, err)
		}
		if tc.TorchDType == nil && tc.DType == nil {
			tc.TorchDType, tc.DType = c.TorchDType, c.DType
		}
		tc.ModelType, tc.NameOrPath = c.ModelType, c.NameOrPath
		r.prefix = "text_config."
		c = tc
	} else if mt == "llama4" {
		return nil, fmt.Errorf("hf: %s: model_type %q: missing required field %q", file, mt, "text_config")
	}
	base := arch.BF16
	for _, f := range []struct {
		key string
		v   *string
	}{{"torch_dtype", c.TorchDType}, {"dtype", c.DType}} {
		if f.v == nil {
			continue
		}
		d, err := arch.ParseDType(*f.v)
		if err != nil || (d != arch.BF16 && d != arch.FP16 && d != arch.FP32) {
			return nil, fmt.Errorf("hf: %s: %s%s = %q: want bfloat16, float16 or float32", file, r.prefix, f.key, *f.v)
		}
		base = d
		break
	}
	hidden := r.req("hidden_size", c.Hidden, maxHidden)
	vocab := r.req("vocab_size", c.Vocab, maxVocab)
	n := r.req("num_hidden_layers", c.Layers, maxLayers)
	if r.err != nil {
		return nil, r.err
	}
	layers := fam.build(r, &c)
	if r.err != nil {
		return nil, r.err
	}
	if len(layers) != n {
		// A builder bug, not an input problem.
		panic(fmt.Sprintf("hf: %s builder made %d layers for num_hidden_layers = %d", mt, len(layers), n))
	}
	var encoder int64
	if mt == "llama4" && top.VisionConfig != nil {
		encoder = llama4VisionParams(r, top.VisionConfig, hidden)
		if r.err != nil {
			return nil, r.err
		}
		notes = append(notes, fmt.Sprintf("vision tower and projector (%.2f B weights) loaded and counted in memory; image inputs are not simulated", float64(encoder)/1e9))
	}

	q, err := parseQuant(&top, quantJSON, file, quantFile, mt)
	if err != nil {
		return nil, err
	}
	if q.ex, err = compileExcludes(q.exclude, n, q.file, q.obj); err != nil {
		return nil, err
	}
	for i := range q.groups {
		g := &q.groups[i]
		if g.ex, err = compileExcludes(g.targets, n, q.file, q.obj+".config_groups."+g.name+".targets"); err != nil {
			return nil, err
		}
	}
	for i := range layers {
		q.apply(i, &layers[i], base)
	}
	notes = append(notes, q.notes...)

	if name == "" {
		name = c.NameOrPath
	}
	if name == "" {
		name = mt
	}
	a := &arch.Arch{
		Name:          name,
		Family:        mt,
		Hidden:        hidden,
		Vocab:         vocab,
		TiedEmbed:     c.TieWordEmbeddings != nil && *c.TieWordEmbeddings,
		EmbedDType:    base,
		EncoderParams: encoder,
		Quantization:  q.method,
		KVCacheDType:  q.kvCache,
		MTPLayers:     mtpLayers(r, &c),
	}
	if r.err != nil {
		return nil, r.err
	}
	a.Notes = notes
	// Final norm plus the per-layer small weights, spread evenly over the layers (rounded).
	extra := int64(hidden)
	type shape struct {
		attn arch.Attention
		ffn  arch.FFN
	}
	index := map[shape]int{}
	for _, l := range layers {
		extra += l.extra
		key := shape{l.attn, l.ffn}
		if j, ok := index[key]; ok {
			a.Layers[j].Count++
			continue
		}
		index[key] = len(a.Layers)
		a.Layers = append(a.Layers, arch.LayerGroup{Count: 1, Attn: l.attn, FFN: l.ffn})
	}
	a.ExtraParamsPerLayer = (extra + int64(n)/2) / int64(n)
	if a.MaxModelLen, _, a.MaxModelLenRule, err = MaxModelLen(cfgJSON); err != nil {
		return nil, fmt.Errorf("hf: %s: %w", file, err)
	}
	if err := a.Normalize(); err != nil {
		return nil, fmt.Errorf("hf: %s: %w", file, err)
	}
	if head := eagleHeadKind(c.Architectures); head != "" {
		if err := EagleHead(a, head, r.opt("draft_vocab_size", c.DraftVocabSize, 0, 1, maxVocab)); err != nil {
			return nil, fmt.Errorf("hf: %s: %w", file, err)
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	return a, nil
}

// eagleHeadKind reads an EAGLE draft head from a config's architectures: "eagle3" for
// LlamaForCausalLMEagle3 (and other *Eagle3* classes), "eagle" for EAGLE-1 heads
// (EagleLlamaForCausalLM, LlamaForCausalLMEagle), "" otherwise.
func eagleHeadKind(archs []string) string {
	for _, a := range archs {
		l := strings.ToLower(a)
		switch {
		case strings.Contains(l, "eagle3"):
			return "eagle3"
		case strings.Contains(l, "eagle"):
			return "eagle"
		}
	}
	return ""
}

// EagleHead turns a small llama-like model a, read from a draft head's config.json, into the
// EAGLE head vLLM runs (vllm/model_executor/models/llama_eagle.py, llama_eagle3.py): it shares
// the target's embedding table; an EAGLE-1 head also its lm_head, and fuses [embedding; target
// hidden] with fc (2 hidden -> hidden); an EAGLE-3 head fuses three of the target's hidden states
// with fc (3 hidden -> hidden), its first layer's q/k/v projections read [embedding; hidden] (2
// hidden wide), and it has its own lm_head over draftVocab tokens (draft_vocab_size; 0: the full
// vocabulary). fc is replicated on every rank (counted in the small per-layer weights). kind is
// "eagle" or "eagle3".
func EagleHead(a *arch.Arch, kind string, draftVocab int) error {
	h := int64(a.Hidden)
	layers := int64(a.NumLayers())
	var fc int64
	switch kind {
	case "eagle":
		fc = 2 * h * h
	case "eagle3":
		fc = 3 * h * h
		if draftVocab == 0 {
			draftVocab = a.Vocab
		}
		a.DraftVocab = draftVocab
		g := &a.Layers[0]
		if g.Attn.Kind != arch.AttnGQA {
			return fmt.Errorf("EAGLE-3 head: layers[0] has %s attention: want a llama-like (GQA) layer", g.Attn.Kind)
		}
		first := *g
		first.Count = 1
		at := &first.Attn
		// q and k/v read 2 hidden: the projections gain hidden x (q + k + v).
		at.ProjParams += h * int64(at.Heads*at.HeadDim+at.KVHeads*(at.HeadDim+at.VHeadDim))
		if g.Count > 1 {
			g.Count--
			a.Layers = append([]arch.LayerGroup{first}, a.Layers...)
		} else {
			*g = first
		}
	default:
		return fmt.Errorf("EAGLE head %q: want eagle or eagle3", kind)
	}
	a.Family = kind
	a.SharesTargetEmbeddings = true
	a.TiedEmbed = false
	a.ExtraParamsPerLayer += (fc + layers/2) / layers
	a.Notes = append(a.Notes, fmt.Sprintf("%s draft head: embedding shared with the target; fc %d x %d replicated on every rank", kind, fc/h, h))
	return nil
}

// decode unmarshals JSON, naming the offending field of a type mismatch.
func decode(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("field %q: got a JSON %s, want %s", te.Field, te.Value, te.Type)
		}
		return err
	}
	return nil
}

// reader checks config fields, keeping the first error.
type reader struct {
	file, family string
	prefix       string // "text_config." when the decoder's fields are nested there
	err          error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("hf: %s: model_type %q: %s", r.file, r.family, fmt.Sprintf(format, args...))
	}
}

// req returns a required positive field.
func (r *reader) req(field string, p *int, max int) int {
	if p == nil {
		r.fail("missing required field %q", r.prefix+field)
		return 1
	}
	return r.check(field, *p, 1, max)
}

// opt returns an optional field, def when absent; min is 0 or 1.
func (r *reader) opt(field string, p *int, def, min, max int) int {
	if p == nil {
		return def
	}
	return r.check(field, *p, min, max)
}

func (r *reader) check(field string, v, min, max int) int {
	if v < min || v > max {
		r.fail("%s%s = %d: want %d..%d", r.prefix, field, v, min, max)
		return min
	}
	return v
}

// first returns the first non-nil pointer of ps, with the field name it came from.
func first(names []string, ps ...*int) (string, *int) {
	for i, p := range ps {
		if p != nil {
			return names[i], p
		}
	}
	return strings.Join(names, " or "), nil
}

func flag(p *bool) bool { return p != nil && *p }
