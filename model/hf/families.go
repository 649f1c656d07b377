package hf

import "github.com/servesim/servesim/model/arch"

// Layer-type names of the layer_types list (transformers' spelling).
const (
	fullAttention    = "full_attention"
	slidingAttention = "sliding_attention"
	linearAttention  = "linear_attention"
)

// gqaOpts are the family quirks of a softmax-attention layer's weights.
type gqaOpts struct {
	qkvBias bool // biases on q, k and v
	oBias   bool // bias on o
	qkNorm  bool // RMSNorm over head_dim on q and k (Qwen3)
	qkNormL bool // RMSNorm over the whole q and k projections (MiniMax-M2 qk_norm_type per_layer)
	sinks   bool // one learned sink logit per head (gpt-oss)
	outGate bool // q_proj also produces a per-channel output gate, doubling its width (Qwen3-Next)
}

func gqaOptsFor(c *rawConfig, family string) gqaOpts {
	bias := flag(c.AttentionBias)
	switch family {
	case "qwen2":
		return gqaOpts{qkvBias: true}
	case "qwen3", "qwen3_moe":
		return gqaOpts{qkvBias: bias, oBias: bias, qkNorm: true}
	case "qwen3_next":
		return gqaOpts{qkvBias: bias, oBias: bias, qkNorm: true, outGate: true}
	case "gpt_oss":
		return gqaOpts{qkvBias: bias, oBias: bias, sinks: true}
	case "minimax_m2":
		// q_norm and k_norm over all heads' dims at once ("per_layer"), or per head.
		o := gqaOpts{qkvBias: bias, oBias: bias}
		if c.UseQKNorm == nil || *c.UseQKNorm {
			o.qkNormL = c.QKNormType == "" || c.QKNormType == "per_layer"
			o.qkNorm = !o.qkNormL
		}
		return o
	}
	// llama4's qk norm (use_qk_norm) is an L2 norm without weights.
	return gqaOpts{qkvBias: bias, oBias: bias}
}

// gqaAttention reads a softmax-attention layer and counts its projection weights.
func gqaAttention(r *reader, c *rawConfig, o gqaOpts) arch.Attention {
	hidden := *c.Hidden
	heads := r.req("num_attention_heads", c.Heads, maxHeads)
	kv := r.opt("num_key_value_heads", c.KVHeads, heads, 1, maxHeads)
	var hd int
	if c.HeadDim != nil {
		hd = r.check("head_dim", *c.HeadDim, 1, maxHeadDim)
	} else {
		if hidden%heads != 0 {
			r.fail("no head_dim, and hidden_size = %d is not a multiple of num_attention_heads = %d", hidden, heads)
		}
		hd = max(hidden/heads, 1)
	}
	if heads%kv != 0 {
		r.fail("num_attention_heads = %d is not a multiple of num_key_value_heads = %d", heads, kv)
	}
	h, q, k := int64(hidden), int64(heads*hd), int64(kv*hd)
	qOut := q
	if o.outGate {
		qOut = 2 * q
	}
	p := h*qOut + 2*h*k + q*h
	if o.qkvBias {
		p += qOut + 2*k
	}
	if o.oBias {
		p += h
	}
	if o.qkNorm {
		p += 2 * int64(hd)
	}
	if o.qkNormL {
		p += q + k
	}
	if o.sinks {
		p += int64(heads)
	}
	return arch.Attention{Kind: arch.AttnGQA, Heads: heads, KVHeads: kv, HeadDim: hd, VHeadDim: hd, ProjParams: p, Sinks: o.sinks}
}

// layerTypes returns layer_types, checked, or def(i) for each layer when the config has none.
func layerTypes(r *reader, c *rawConfig, n int, allowed []string, def func(i int) string) []string {
	out := make([]string, n)
	if len(c.LayerTypes) == 0 {
		for i := range out {
			out[i] = def(i)
		}
		return out
	}
	if len(c.LayerTypes) != n {
		r.fail("layer_types has %d entries, num_hidden_layers = %d", len(c.LayerTypes), n)
		for i := range out {
			out[i] = allowed[0]
		}
		return out
	}
	for i, t := range c.LayerTypes {
		ok := false
		for _, a := range allowed {
			ok = ok || t == a
		}
		if !ok {
			r.fail("layer_types[%d] = %q: want one of %q", i, t, allowed)
			t = allowed[0]
		}
		out[i] = t
	}
	return out
}

// windows returns the sliding window of each layer (0 = full attention), from layer_types or the
// family's default pattern.
func windows(r *reader, c *rawConfig, n int) []int {
	var def func(i int) string
	full := func(int) string { return fullAttention }
	switch r.family {
	case "mistral", "mixtral":
		// All layers slide when sliding_window is set (Mistral-7B-v0.1), none when it is null.
		def = full
		if c.SlidingWindow != nil && *c.SlidingWindow > 0 {
			def = func(int) string { return slidingAttention }
		}
	case "qwen2", "qwen3", "qwen3_moe":
		// transformers: layers from max_window_layers on slide, only with use_sliding_window.
		def = full
		if flag(c.UseSlidingWindow) && c.SlidingWindow != nil {
			mwl := r.opt("max_window_layers", c.MaxWindowLayers, 28, 0, maxLayers)
			def = func(i int) string {
				if i >= mwl {
					return slidingAttention
				}
				return fullAttention
			}
		}
	case "gpt_oss":
		// transformers' GptOssConfig default: even layers slide, odd layers attend fully.
		def = func(i int) string {
			if i%2 == 0 {
				return slidingAttention
			}
			return fullAttention
		}
	default:
		def = full
	}
	types := layerTypes(r, c, n, []string{fullAttention, slidingAttention}, def)
	out := make([]int, n)
	for i, t := range types {
		if t != slidingAttention {
			continue
		}
		w := 0
		switch {
		case c.SlidingWindow != nil:
			w = r.check("sliding_window", *c.SlidingWindow, 1, maxWindow)
		case r.family == "gpt_oss":
			w = 128 // GptOssConfig default
		default:
			r.fail("layer %d is sliding_attention but sliding_window is missing", i)
		}
		out[i] = w
	}
	return out
}

// buildDense: llama, mistral, qwen2, qwen3.
func buildDense(r *reader, c *rawConfig) []layer {
	n, hidden := *c.Layers, int64(*c.Hidden)
	inter := r.req("intermediate_size", c.Intermediate, maxIntermediate)
	at := gqaAttention(r, c, gqaOptsFor(c, r.family))
	win := windows(r, c, n)
	extra := 2 * hidden // input and post-attention norms
	if flag(c.MLPBias) {
		extra += 2*int64(inter) + hidden
	}
	out := make([]layer, n)
	for i := range out {
		a := at
		a.Window = win[i]
		out[i] = layer{attn: a, ffn: arch.FFN{Kind: arch.FFNDense, Intermediate: inter}, extra: extra}
		out[i].setNames("self_attn", "mlp", "")
	}
	return out
}

// moeShape is the routed part of an MoE layer.
type moeShape struct {
	experts, topK, inter int
}

func readMoE(r *reader, c *rawConfig, interField string, interP *int) moeShape {
	ef, ep := first([]string{"num_experts", "num_local_experts", "n_routed_experts"}, c.NumExperts, c.NumLocalExperts, c.NRoutedExperts)
	tf, tp := first([]string{"num_experts_per_tok", "experts_per_token", "num_experts_per_token"}, c.NumExpertsPerTok, c.ExpertsPerToken, c.NumExpertsPerToken)
	m := moeShape{
		experts: r.req(ef, ep, maxExperts),
		topK:    r.req(tf, tp, maxExperts),
		inter:   r.req(interField, interP, maxIntermediate),
	}
	if m.topK > m.experts {
		r.fail("%s = %d exceeds %s = %d", tf, m.topK, ef, m.experts)
		m.topK = m.experts
	}
	return m
}

// isMoEQwen is the Qwen MoE layer rule (transformers Qwen3MoeDecoderLayer).
func isMoEQwen(r *reader, c *rawConfig, i int) bool {
	step := r.opt("decoder_sparse_step", c.DecoderSparseStep, 1, 1, maxLayers)
	for _, j := range c.MLPOnlyLayers {
		if j == i {
			return false
		}
	}
	return (i+1)%step == 0
}

// buildMoEGQA: mixtral, qwen3_moe, gpt_oss, minimax_m2.
func buildMoEGQA(r *reader, c *rawConfig) []layer {
	n, hidden := *c.Layers, int64(*c.Hidden)
	at := gqaAttention(r, c, gqaOptsFor(c, r.family))
	win := windows(r, c, n)
	var m moeShape
	moePrefix := "mlp"
	switch r.family {
	case "qwen3_moe":
		m = readMoE(r, c, "moe_intermediate_size", c.MoEIntermediate)
	case "mixtral", "minimax_m2":
		m = readMoE(r, c, "intermediate_size", c.Intermediate)
		moePrefix = "block_sparse_moe"
	default: // gpt_oss: intermediate_size is the expert width.
		m = readMoE(r, c, "intermediate_size", c.Intermediate)
	}
	moe := arch.FFN{Kind: arch.FFNMoE, Experts: m.experts, TopK: m.topK, ExpertIntermediate: m.inter}
	moeExtra := 2 * hidden
	switch r.family {
	case "gpt_oss":
		// Router bias, and the biases of every expert's gate_up (2 x inter) and down (hidden).
		moeExtra += int64(m.experts) + int64(m.experts)*(2*int64(m.inter)+hidden)
	case "minimax_m2":
		// MiniMax-M2 (modeling_minimax_m2.py): softmax attention on every layer, sigmoid routing
		// with a per-expert score-correction bias, and, when shared_intermediate_size > 0, a shared
		// expert.
		for i, t := range c.AttnTypeList {
			if t != 1 {
				r.fail("attn_type_list[%d] = %d: only softmax attention (1) is supported (0 is MiniMax-01's lightning attention)", i, t)
				break
			}
		}
		if len(c.AttnTypeList) > 0 && len(c.AttnTypeList) != n {
			r.fail("attn_type_list has %d entries, num_hidden_layers = %d", len(c.AttnTypeList), n)
		}
		if c.UseRoutingBias == nil || *c.UseRoutingBias {
			moeExtra += int64(m.experts)
		}
		if si := r.opt("shared_intermediate_size", c.SharedInterSize, 0, 0, maxIntermediate); si > 0 {
			moe.SharedExperts, moe.SharedIntermediate = 1, si
		}
	}
	out := make([]layer, n)
	for i := range out {
		a := at
		a.Window = win[i]
		out[i] = layer{attn: a, ffn: moe, extra: moeExtra}
		if r.family == "qwen3_moe" && !isMoEQwen(r, c, i) {
			inter := r.req("intermediate_size", c.Intermediate, maxIntermediate)
			out[i].ffn = arch.FFN{Kind: arch.FFNDense, Intermediate: inter}
			out[i].extra = 2 * hidden
		}
		out[i].setNames("self_attn", moePrefix, "shared_expert")
		out[i].fusedExperts = r.family == "gpt_oss"
	}
	return out
}

// buildLlama4: Llama 4 text decoder (transformers Llama4TextDecoderLayer, vLLM llama4.py). Layers
// in moe_layers (default every interleave_moe_layer_step-th, counted from step - 1) route each
// token to top-k of the experts and always through a shared expert, both intermediate_size wide;
// the other layers have a dense MLP of intermediate_size_mlp. no_rope_layers[i] = 0 marks a NoPE
// layer (default: every 4th); the RoPE layers attend within attention_chunk_size chunks, the NoPE
// ones globally. The qk norm is an L2 norm without weights.
func buildLlama4(r *reader, c *rawConfig) []layer {
	n, hidden := *c.Layers, int64(*c.Hidden)
	at := gqaAttention(r, c, gqaOptsFor(c, r.family))
	chunk := r.opt("attention_chunk_size", c.AttentionChunkSize, 0, 1, maxWindow)
	m := readMoE(r, c, "intermediate_size", c.Intermediate)
	moe := arch.FFN{Kind: arch.FFNMoE, Experts: m.experts, TopK: m.topK, ExpertIntermediate: m.inter,
		SharedExperts: 1, SharedIntermediate: m.inter}

	isMoE := make([]bool, n)
	if len(c.MoELayers) > 0 {
		for _, l := range c.MoELayers {
			if l < 0 || l >= n {
				r.fail("moe_layers has %d: want 0..%d", l, n-1)
				continue
			}
			isMoE[l] = true
		}
	} else {
		step := r.opt("interleave_moe_layer_step", c.InterleaveMoELayerStep, 1, 1, maxLayers)
		for i := step - 1; i < n; i += step {
			isMoE[i] = true
		}
	}
	rope := make([]bool, n)
	if len(c.NoRopeLayers) > 0 {
		// transformers: an empty list means the default.
		if len(c.NoRopeLayers) != n {
			r.fail("no_rope_layers has %d entries, num_hidden_layers = %d", len(c.NoRopeLayers), n)
		}
		for i := range rope {
			rope[i] = i < len(c.NoRopeLayers) && c.NoRopeLayers[i] != 0
		}
	} else {
		for i := range rope {
			rope[i] = (i+1)%4 != 0
		}
	}
	out := make([]layer, n)
	for i := range out {
		l := layer{attn: at, extra: 2 * hidden}
		if rope[i] {
			l.attn.Chunk = chunk
		} else {
			l.attn.NoPE = true
		}
		if isMoE[i] {
			l.ffn = moe
		} else {
			inter := r.req("intermediate_size_mlp", c.IntermediateSizeMLP, maxIntermediate)
			l.ffn = arch.FFN{Kind: arch.FFNDense, Intermediate: inter}
		}
		l.setNames("self_attn", "feed_forward", "shared_expert")
		l.densePrefix = "feed_forward"
		if r.family == "llama4" {
			l.path = "language_model.model.layers."
		}
		l.fusedExperts = true
		out[i] = l
	}
	return out
}

// llama4VisionParams counts the weights of a Llama 4 vision tower and its projector
// (transformers Llama4VisionModel and Llama4MultiModalProjector): the unfolded-patch projection,
// class and positional embeddings, pre and post LayerNorms, each encoder layer's q/k/v/o with
// biases, fc1/fc2 with biases and two LayerNorms, the pixel-shuffle MLP (fc1 from intermediate_size
// to projector_input_dim, fc2 projector_output_dim square, no biases) and the projector to the text
// hidden size.
func llama4VisionParams(r *reader, v *rawVision, textHidden int) int64 {
	saved := r.prefix
	r.prefix = "" // the vision fields sit at the top level, beside text_config
	defer func() { r.prefix = saved }()
	h := int64(r.req("vision_config.hidden_size", v.Hidden, maxHidden))
	inter := int64(r.req("vision_config.intermediate_size", v.Intermediate, maxIntermediate))
	layers := int64(r.req("vision_config.num_hidden_layers", v.Layers, maxLayers))
	img := int64(r.req("vision_config.image_size", v.ImageSize, 1<<16))
	patch := int64(r.req("vision_config.patch_size", v.PatchSize, 1<<10))
	ch := int64(r.opt("vision_config.num_channels", v.NumChannels, 3, 1, 64))
	pin := int64(r.req("vision_config.projector_input_dim", v.ProjectorInputDim, maxIntermediate))
	pout := int64(r.req("vision_config.projector_output_dim", v.ProjectorOutputDim, maxIntermediate))
	vout := int64(r.req("vision_config.vision_output_dim", v.VisionOutputDim, maxIntermediate))
	if r.err != nil {
		return 0
	}
	side := img / patch
	p := ch * patch * patch * h // patch embedding (no bias)
	p += h + (side*side+1)*h    // class and positional embeddings
	p += 2 * 2 * h              // layernorm_pre, layernorm_post
	perLayer := 4*(h*h+h) + (h*inter + inter) + (inter*h + h) + 2*2*h
	p += layers * perLayer        // encoder layers
	p += inter*pin + pout*pout    // pixel-shuffle MLP
	p += vout * int64(textHidden) // multi_modal_projector.linear_1
	return p
}

// mlaAttention reads an MLA layer (DeepSeek-V3 shape; sparse adds the DSA lightning indexer) and
// counts its weights: q (direct, or q_a + q_a_layernorm + q_b), kv_a_proj_with_mqa +
// kv_a_layernorm, kv_b, o, and for the indexer wq_b, wk, k_norm (LayerNorm) and weights_proj.
func mlaAttention(r *reader, c *rawConfig, sparse bool) arch.Attention {
	h := int64(*c.Hidden)
	a := arch.Attention{
		Kind:       arch.AttnMLA,
		Heads:      r.req("num_attention_heads", c.Heads, maxHeads),
		QLoraRank:  r.opt("q_lora_rank", c.QLoraRank, 0, 0, maxRank),
		KVLoraRank: r.req("kv_lora_rank", c.KVLoraRank, maxRank),
		QKRopeDim:  r.req0("qk_rope_head_dim", c.QKRopeHeadDim, maxHeadDim),
		QKNopeDim:  r.req0("qk_nope_head_dim", c.QKNopeHeadDim, maxHeadDim),
		VHeadDim:   r.req("v_head_dim", c.VHeadDim, maxHeadDim),
	}
	if a.QKRopeDim+a.QKNopeDim == 0 {
		r.fail("qk_rope_head_dim + qk_nope_head_dim = 0")
	}
	heads, qk := int64(a.Heads), int64(a.QKNopeDim+a.QKRopeDim)
	qLora, kvLora := int64(a.QLoraRank), int64(a.KVLoraRank)
	var p int64
	if qLora > 0 {
		p += h*qLora + qLora + qLora*heads*qk
	} else {
		p += h * heads * qk
	}
	p += h*(kvLora+int64(a.QKRopeDim)) + kvLora
	p += kvLora * heads * int64(a.QKNopeDim+a.VHeadDim)
	p += heads * int64(a.VHeadDim) * h
	if sparse {
		a.Kind = arch.AttnSparseMLA
		a.IndexHeads = r.req("index_n_heads", c.IndexNHeads, maxHeads)
		a.IndexHeadDim = r.req("index_head_dim", c.IndexHeadDim, maxHeadDim)
		a.IndexTopK = r.req("index_topk", c.IndexTopK, 1<<30)
		a.IndexCompress = 1
		ih, id := int64(a.IndexHeads), int64(a.IndexHeadDim)
		qsrc := qLora
		if qsrc == 0 {
			qsrc = h
		}
		p += qsrc*ih*id + h*id + 2*id + h*ih
	}
	a.ProjParams = p
	return a
}

// kdaAttention reads a Kimi Delta Attention layer from linear_attn_config and counts its weights
// (modeling_kimi.py KimiDeltaAttention): q, k, v (hidden -> heads x head_dim) with short causal
// convolutions, the low-rank decay (f_a, f_b) and output-gate (g_a, g_b) projections, b_proj
// (beta), A_log, dt_bias, the gated output norm and o_proj.
func kdaAttention(r *reader, la *rawLinearAttn, h int64) arch.Attention {
	heads := r.req("linear_attn_config.num_heads", la.NumHeads, maxHeads)
	dim := r.req("linear_attn_config.head_dim", la.HeadDim, maxHeadDim)
	conv := r.opt("linear_attn_config.short_conv_kernel_size", la.ShortConvKernelSize, 4, 1, 64)
	proj, d := int64(heads*dim), int64(dim)
	p := 3*h*proj + 3*proj*int64(conv) // q, k, v and their depthwise convs
	p += 2 * (h*d + d*proj)            // f_a/f_b, g_a/g_b
	p += h*int64(heads) + int64(heads) // b_proj, A_log
	p += proj + d                      // dt_bias, o_norm
	p += proj * h                      // o_proj
	return arch.Attention{
		Kind: arch.AttnLinear, Heads: heads,
		StateHeads: heads, StateKeyDim: dim, StateValDim: dim,
		ConvKernel: conv, ConvChannels: 3 * heads * dim,
		ProjParams: p,
	}
}

// kdaLayers returns which layers (0-based) are KDA, from linear_attn_config's 1-based kda_layers
// (modeling_kimi.py: is_kda_layer(i) = i+1 in kda_layers). full_attn_layers must not overlap it.
func kdaLayers(r *reader, la *rawLinearAttn, n int) []bool {
	kda := make([]bool, n)
	for _, l := range la.KDALayers {
		if l < 1 || l > n {
			r.fail("linear_attn_config.kda_layers has %d: want 1..%d (1-based)", l, n)
			continue
		}
		kda[l-1] = true
	}
	for _, l := range la.FullAttnLayers {
		if l < 1 || l > n {
			r.fail("linear_attn_config.full_attn_layers has %d: want 1..%d (1-based)", l, n)
			continue
		}
		if kda[l-1] {
			r.fail("layer %d is in both kda_layers and full_attn_layers", l)
		}
	}
	return kda
}

// buildMLA: deepseek_v3, kimi_k2, deepseek_v32, glm_moe_dsa, and kimi_linear (MLA with KDA layers
// from linear_attn_config, which any of these families may carry).
func buildMLA(r *reader, c *rawConfig) []layer {
	n, hidden := *c.Layers, int64(*c.Hidden)
	sparse := r.family == "deepseek_v32" || r.family == "glm_moe_dsa" || c.IndexTopK != nil
	mla := mlaAttention(r, c, sparse)

	var kda []bool
	var kdaAt arch.Attention
	if c.LinearAttnConfig != nil {
		kda = kdaLayers(r, c.LinearAttnConfig, n)
		kdaAt = kdaAttention(r, c.LinearAttnConfig, hidden)
	} else if r.family == "kimi_linear" {
		r.fail("missing required field %q", "linear_attn_config")
	}

	// transformers DeepseekV3DecoderLayer: MoE when n_routed_experts is set, i >= first_k_dense_replace
	// and i % moe_layer_freq == 0.
	_, ep := first([]string{"n_routed_experts", "num_experts"}, c.NRoutedExperts, c.NumExperts)
	fkd := r.opt("first_k_dense_replace", c.FirstKDenseReplace, 0, 0, maxLayers)
	freq := r.opt("moe_layer_freq", c.MoELayerFreq, 1, 1, maxLayers)
	var moe arch.FFN
	if ep != nil {
		m := readMoE(r, c, "moe_intermediate_size", c.MoEIntermediate)
		sf, sp := first([]string{"n_shared_experts", "num_shared_experts"}, c.NSharedExperts, c.NumSharedExperts)
		moe = arch.FFN{
			Kind: arch.FFNMoE, Experts: m.experts, TopK: m.topK, ExpertIntermediate: m.inter,
			SharedExperts: r.opt(sf, sp, 0, 0, maxExperts),
		}
		if moe.SharedExperts > 0 {
			moe.SharedIntermediate = m.inter
		}
	}
	out := make([]layer, n)
	for i := range out {
		l := layer{attn: mla, extra: 2 * hidden}
		if kda != nil && kda[i] {
			l.attn = kdaAt
		}
		if ep != nil && i >= fkd && i%freq == 0 {
			l.ffn = moe
			l.extra += int64(moe.Experts) // e_score_correction_bias
		} else {
			inter := r.req("intermediate_size", c.Intermediate, maxIntermediate)
			l.ffn = arch.FFN{Kind: arch.FFNDense, Intermediate: inter}
		}
		l.setNames("self_attn", "mlp", "shared_experts")
		out[i] = l
	}
	return out
}

// gdnAttention reads a Gated DeltaNet layer (transformers Qwen3NextGatedDeltaNet) and counts its
// weights: in_proj_qkvz (hidden -> 2 key_dim + 2 value_dim: q, k, v and the output gate z),
// in_proj_ba (hidden -> 2 value heads), the depthwise conv over q, k, v, dt_bias, A_log, the gated
// RMSNorm over a value head, and out_proj. Value heads may outnumber key heads; the recurrent
// state is one head_k x head_v matrix per value head.
func gdnAttention(r *reader, c *rawConfig) arch.Attention {
	h := int64(*c.Hidden)
	kh := r.req("linear_num_key_heads", c.LinearNumKeyHeads, maxHeads)
	vh := r.req("linear_num_value_heads", c.LinearNumValueHeads, maxHeads)
	kd := r.req("linear_key_head_dim", c.LinearKeyHeadDim, maxHeadDim)
	vd := r.req("linear_value_head_dim", c.LinearValueHeadDim, maxHeadDim)
	conv := r.req("linear_conv_kernel_dim", c.LinearConvKernelDim, 64)
	if vh%kh != 0 {
		r.fail("linear_num_value_heads = %d is not a multiple of linear_num_key_heads = %d", vh, kh)
	}
	keyDim, valDim := int64(kh*kd), int64(vh*vd)
	convDim := 2*keyDim + valDim
	p := h*(2*keyDim+2*valDim) + h*2*int64(vh) // in_proj_qkvz, in_proj_ba
	p += convDim * int64(conv)                 // conv1d, no bias
	p += 2*int64(vh) + int64(vd)               // dt_bias, A_log, norm
	p += valDim * h                            // out_proj
	return arch.Attention{
		Kind: arch.AttnLinear, Heads: vh,
		StateHeads: vh, StateKeyDim: kd, StateValDim: vd,
		ConvKernel: conv, ConvChannels: int(convDim),
		ProjParams: p,
	}
}

// buildQwen3Next: Gated DeltaNet layers with a gated-attention layer every full_attention_interval
// layers; MoE with one shared expert (and its sigmoid gate).
func buildQwen3Next(r *reader, c *rawConfig) []layer {
	n, hidden := *c.Layers, int64(*c.Hidden)
	full := gqaAttention(r, c, gqaOptsFor(c, r.family))
	lin := gdnAttention(r, c)
	interval := r.opt("full_attention_interval", c.FullAttentionInterval, 4, 1, maxLayers)
	types := layerTypes(r, c, n, []string{linearAttention, fullAttention}, func(i int) string {
		if (i+1)%interval == 0 {
			return fullAttention
		}
		return linearAttention
	})
	m := readMoE(r, c, "moe_intermediate_size", c.MoEIntermediate)
	moe := arch.FFN{Kind: arch.FFNMoE, Experts: m.experts, TopK: m.topK, ExpertIntermediate: m.inter}
	moeExtra := 2 * hidden
	if si := r.opt("shared_expert_intermediate_size", c.SharedIntermediate, 0, 0, maxIntermediate); si > 0 {
		moe.SharedExperts, moe.SharedIntermediate = 1, si
		moeExtra += hidden // shared_expert_gate
	}
	out := make([]layer, n)
	for i := range out {
		l := layer{attn: full, ffn: moe, extra: moeExtra}
		prefix := "self_attn"
		if types[i] == linearAttention {
			l.attn, prefix = lin, "linear_attn"
		}
		if !isMoEQwen(r, c, i) {
			inter := r.req("intermediate_size", c.Intermediate, maxIntermediate)
			l.ffn = arch.FFN{Kind: arch.FFNDense, Intermediate: inter}
			l.extra = 2 * hidden
		}
		l.setNames(prefix, "mlp", "shared_expert")
		out[i] = l
	}
	return out
}

// req0 returns a required field that may be zero.
func (r *reader) req0(field string, p *int, max int) int {
	if p == nil {
		r.fail("missing required field %q", field)
		return 0
	}
	return r.check(field, *p, 0, max)
}

// setNames sets the module names of a transformers-style layer under model.layers.N, with a dense
// MLP named mlp.
func (l *layer) setNames(attnPrefix, moePrefix, sharedName string) {
	l.path, l.densePrefix = "model.layers.", "mlp"
	l.attnPrefix, l.moePrefix, l.sharedName = attnPrefix, moePrefix, sharedName
}
