package arch

import "fmt"

// FFNKind is the MLP flavour of a layer.
type FFNKind string

const (
	FFNDense FFNKind = "dense"
	FFNMoE   FFNKind = "moe"
)

// Attention describes one layer's token mixer as the TOML model description spells it: the kind
// and the fields of every kind, those that do not apply to Kind being zero. Mixer reads it into
// the kind's own type (GQA, MLA, SparseMLA, Linear), which knows its weights, cache and cost.
type Attention struct {
	Kind     AttnKind `toml:"kind"`
	Heads    int      `toml:"heads"`                // query heads
	KVHeads  int      `toml:"kv_heads,omitempty"`   // GQA key/value heads
	HeadDim  int      `toml:"head_dim,omitempty"`   // GQA q/k head dim
	VHeadDim int      `toml:"v_head_dim,omitempty"` // value head dim (GQA: defaults to HeadDim; MLA: per-head v dim)
	// Window > 0 makes a GQA layer sliding-window: each token attends to the last Window tokens.
	Window int `toml:"window,omitempty"`
	// Chunk > 0 makes a GQA layer chunked-local (Llama 4): each token attends to the earlier tokens
	// of its own Chunk-aligned chunk.
	Chunk int `toml:"chunk,omitempty" json:",omitempty"`
	// NoPE marks a GQA layer without rotary position embedding (Llama 4's global layers).
	NoPE bool `toml:"nope,omitempty" json:",omitempty"`
	// Sinks marks a GQA layer with one learned attention-sink logit per head (gpt-oss).
	Sinks bool `toml:"sinks,omitempty" json:",omitempty"`

	// MLA.
	QLoraRank  int `toml:"q_lora_rank,omitempty"`
	KVLoraRank int `toml:"kv_lora_rank,omitempty"`
	QKRopeDim  int `toml:"qk_rope_head_dim,omitempty"`
	QKNopeDim  int `toml:"qk_nope_head_dim,omitempty"`

	// DSA lightning indexer (sparse MLA).
	IndexHeads    int `toml:"index_heads,omitempty"`
	IndexHeadDim  int `toml:"index_head_dim,omitempty"`
	IndexTopK     int `toml:"index_topk,omitempty"`
	IndexCompress int `toml:"index_compress,omitempty"` // tokens per stored indexer key (1 = none)

	// Linear attention / recurrent state.
	StateHeads   int   `toml:"state_heads,omitempty"`
	StateKeyDim  int   `toml:"state_key_dim,omitempty"`
	StateValDim  int   `toml:"state_value_dim,omitempty"`
	ConvKernel   int   `toml:"conv_kernel,omitempty"`
	ConvChannels int   `toml:"conv_channels,omitempty"` // channels with a short causal conv (q, k, v)
	StateDType   DType `toml:"state_dtype,omitempty"`

	// ProjParams is the number of weights in this layer's projections (q/k/v/o, lora, indexer,
	// gates). Computed by Arch.Normalize when zero.
	ProjParams int64 `toml:"proj_params,omitempty"`
	// DType of the projection weights.
	DType DType `toml:"dtype,omitempty"`
}

// FFN describes one layer's MLP.
type FFN struct {
	Kind FFNKind `toml:"kind"`
	// Dense MLP intermediate width (gate and up are each this wide; down maps it back).
	Intermediate int `toml:"intermediate,omitempty"`
	// MoE.
	Experts            int `toml:"experts,omitempty"`
	TopK               int `toml:"top_k,omitempty"`
	ExpertIntermediate int `toml:"expert_intermediate,omitempty"`
	SharedExperts      int `toml:"shared_experts,omitempty"`
	SharedIntermediate int `toml:"shared_intermediate,omitempty"`
	// GatedMLP is true for SwiGLU-style MLPs (gate + up + down); false for two-matrix MLPs.
	NotGated bool `toml:"not_gated,omitempty"`

	DType       DType `toml:"dtype,omitempty"`        // dense MLP / shared expert weights
	ExpertDType DType `toml:"expert_dtype,omitempty"` // routed expert weights
}

// LayerGroup is Count consecutive-or-not decoder layers with the same shape.
type LayerGroup struct {
	Count int       `toml:"count"`
	Attn  Attention `toml:"attention"`
	FFN   FFN       `toml:"ffn"`
}

// Arch is a decoder-only transformer, possibly hybrid and mixture-of-experts.
type Arch struct {
	Name       string       `toml:"name"`
	Family     string       `toml:"family"` // HF model_type, e.g. "glm_moe_dsa", "llama"
	Hidden     int          `toml:"hidden"`
	Vocab      int          `toml:"vocab"`
	TiedEmbed  bool         `toml:"tied_embeddings,omitempty"`
	EmbedDType DType        `toml:"embed_dtype,omitempty"`
	Layers     []LayerGroup `toml:"layers"`
	// ExtraParamsPerLayer covers small per-layer weights not in the projections or MLP (norms,
	// router, hyper-connection mixers), stored in bf16 and replicated on every rank.
	ExtraParamsPerLayer int64 `toml:"extra_params_per_layer,omitempty"`
	// SharesTargetEmbeddings marks a draft model that reuses the target model's embedding table and
	// lm_head (EAGLE, DFlash): they are neither stored nor counted twice.
	SharesTargetEmbeddings bool `toml:"shares_target_embeddings,omitempty"`
	// DraftVocab > 0 gives a draft model that shares the target's embedding table its own lm_head
	// over a reduced vocabulary of this many tokens (EAGLE-3's draft_vocab_size, with a d2t map
	// back to the target's).
	DraftVocab int `toml:"draft_vocab,omitempty" json:",omitempty"`
	// EncoderParams counts the weights of a modality encoder the checkpoint carries (a vision tower
	// and its projector): vLLM loads them (in EmbedDType, split over TP), but text requests do not
	// run them, so they count in memory and in the total, not in the active parameters or the step.
	EncoderParams int64 `toml:"encoder_params,omitempty" json:",omitempty"`

	// Checkpoint facts that do not change the layers (model/hf fills them from config.json).

	// Quantization is the quantization method vLLM resolves from the checkpoint ("fp8",
	// "compressed-tensors", "modelopt_fp4", "gptq_marlin", ...; "" for none).
	Quantization string `toml:"quantization,omitempty" json:",omitempty"`
	// KVCacheDType is the KV-cache format the checkpoint prescribes (ModelOpt kv_cache_quant_algo,
	// compressed-tensors kv_cache_scheme), which vLLM's kv_cache_dtype "auto" takes; "" for none.
	KVCacheDType DType `toml:"kv_cache_dtype,omitempty" json:",omitempty"`
	// MaxModelLen is the max_model_len vLLM derives from the config (0: not known); MaxModelLenRule
	// says how ("max_position_embeddings 131072; rope_scaling rope_type llama3 is not scaled").
	MaxModelLen     int    `toml:"max_model_len,omitempty" json:",omitempty"`
	MaxModelLenRule string `toml:"-" json:"-"`
	// MTPLayers is the number of multi-token-prediction layers the checkpoint carries
	// (num_nextn_predict_layers): not part of the served model, loaded only by the mtp drafter.
	MTPLayers int `toml:"mtp_layers,omitempty" json:",omitempty"`
	// Notes says what the description leaves out or approximates, for people.
	Notes []string `toml:"notes,omitempty" json:",omitempty"`
}

// NumLayers is the number of decoder layers.
func (a *Arch) NumLayers() int {
	n := 0
	for _, g := range a.Layers {
		n += g.Count
	}
	return n
}

// Normalize fills computed defaults (projection counts, dtypes) and checks the shape. It returns an
// error naming the first inconsistent field.
func (a *Arch) Normalize() error {
	if a.Hidden <= 0 {
		return fmt.Errorf("model %q: hidden = %d: must be positive", a.Name, a.Hidden)
	}
	if a.Vocab <= 0 {
		return fmt.Errorf("model %q: vocab = %d: must be positive", a.Name, a.Vocab)
	}
	if len(a.Layers) == 0 {
		return fmt.Errorf("model %q: no layers", a.Name)
	}
	if a.EmbedDType == "" {
		a.EmbedDType = BF16
	}
	if err := a.EmbedDType.Valid(); err != nil {
		return fmt.Errorf("model %q: embed_dtype: %w", a.Name, err)
	}
	if a.KVCacheDType != "" && a.KVCacheDType != BF16 && a.KVCacheDType != FP16 && a.KVCacheDType != FP8 {
		return fmt.Errorf("model %q: kv_cache_dtype = %q: want bf16, fp16 or fp8", a.Name, a.KVCacheDType)
	}
	if a.EncoderParams < 0 || a.MaxModelLen < 0 || a.MTPLayers < 0 || a.DraftVocab < 0 {
		return fmt.Errorf("model %q: encoder_params, max_model_len, mtp_layers and draft_vocab must be >= 0", a.Name)
	}
	for i := range a.Layers {
		g := &a.Layers[i]
		where := fmt.Sprintf("model %q: layers[%d]", a.Name, i)
		if g.Count <= 0 {
			return fmt.Errorf("%s.count = %d: must be positive", where, g.Count)
		}
		at := &g.Attn
		k, ok := lookupKind(at.Kind)
		if !ok {
			return fmt.Errorf("%s.attention.kind = %q: want %s", where, at.Kind, kindList())
		}
		if err := k.check(at); err != nil {
			return fmt.Errorf("%s.attention: %w", where, err)
		}
		if at.DType == "" {
			at.DType = BF16
		}
		if err := at.DType.Valid(); err != nil {
			return fmt.Errorf("%s.attention.dtype: %w", where, err)
		}
		if at.ProjParams == 0 {
			at.ProjParams = k.build(at).ProjParams(a.Hidden)
		}
		f := &g.FFN
		switch f.Kind {
		case FFNDense:
			if f.Intermediate <= 0 {
				return fmt.Errorf("%s.ffn: dense needs intermediate > 0", where)
			}
		case FFNMoE:
			if f.Experts <= 0 || f.TopK <= 0 || f.TopK > f.Experts || f.ExpertIntermediate <= 0 {
				return fmt.Errorf("%s.ffn: moe needs experts > 0, 0 < top_k <= experts and expert_intermediate > 0 (got %d, %d, %d)", where, f.Experts, f.TopK, f.ExpertIntermediate)
			}
			if f.SharedExperts > 0 && f.SharedIntermediate == 0 {
				f.SharedIntermediate = f.ExpertIntermediate
			}
		default:
			return fmt.Errorf("%s.ffn.kind = %q: want dense or moe", where, f.Kind)
		}
		if f.DType == "" {
			f.DType = BF16
		}
		if f.ExpertDType == "" {
			f.ExpertDType = f.DType
		}
		for _, d := range []struct {
			key string
			v   DType
		}{{"dtype", f.DType}, {"expert_dtype", f.ExpertDType}} {
			if err := d.v.Valid(); err != nil {
				return fmt.Errorf("%s.ffn.%s: %w", where, d.key, err)
			}
		}
	}
	return nil
}

// HasKind reports whether any layer has attention kind k.
func (a *Arch) HasKind(k AttnKind) bool {
	for _, g := range a.Layers {
		if g.Attn.Kind == k {
			return true
		}
	}
	return false
}

// IsMoE reports whether any layer routes to experts.
func (a *Arch) IsMoE() bool {
	for _, g := range a.Layers {
		if g.FFN.Kind == FFNMoE {
			return true
		}
	}
	return false
}

// WeightDTypes lists the distinct weight storage formats of the model.
func (a *Arch) WeightDTypes() []DType {
	seen := map[DType]bool{}
	var out []DType
	add := func(d DType) {
		if d != "" && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	add(a.EmbedDType)
	for _, g := range a.Layers {
		add(g.Attn.DType)
		add(g.FFN.DType)
		if g.FFN.Kind == FFNMoE {
			add(g.FFN.ExpertDType)
		}
	}
	return out
}
