package arch

// WeightPart names a set of weights.
type WeightPart int

const (
	PartAttention     WeightPart = iota // attention projections (Attention.ProjParams)
	PartDenseMLP                        // a dense MLP
	PartSharedExperts                   // the shared experts of an MoE layer
	PartRouter                          // an MoE router (bf16, replicated on every rank)
	PartRoutedExperts                   // the routed experts of an MoE layer
	PartExtra                           // norms and other small per-layer weights (bf16, replicated)
	PartEmbedding                       // the token embedding table
	PartLMHead                          // the lm_head, when not tied to the embedding table
	PartEncoder                         // a modality encoder (vision tower): loaded, not run for text
)

// WeightSet is one set of weights of a model: Layers x Experts copies of Params weights stored in
// DType.
type WeightSet struct {
	Part  WeightPart
	DType DType
	// Layers is the number of layers the set repeats in (1 for the embedding table and lm_head).
	Layers int
	// Experts is the copies per layer: the routed experts E, 1 for every other part.
	Experts int
	// ActiveExperts is the copies one token runs through: top_k for routed experts, else Experts.
	ActiveExperts int
	// Params is the weight count of one copy in one layer.
	Params int64
	// Rows is the number of output rows of one copy's matrices, for formats with one scale per
	// row (DType.RowScaleBytes). Exact for MLPs and experts (2 x intermediate + hidden when
	// gated); Params / hidden for attention projections and the rest (every input taken as
	// hidden wide).
	Rows int64
}

// Replicated reports whether every tensor-parallel rank holds the whole set (routers and the small
// per-layer weights); the others are split over the ranks.
func (w *WeightSet) Replicated() bool { return w.Part == PartRouter || w.Part == PartExtra }

// Total is the set's weight count, Layers x Experts x Params.
func (w *WeightSet) Total() int64 { return int64(w.Layers) * int64(w.Experts) * w.Params }

// Bytes is the set's storage, scales included (one copy of the model, no parallelism): elements
// and group scales at DType.BytesPerParam, plus per-row scales for per-channel formats.
func (w *WeightSet) Bytes() float64 {
	b := float64(w.Layers) * float64(w.Experts) * float64(w.Params) * w.DType.BytesPerParam()
	if r := w.DType.RowScaleBytes(); r > 0 {
		b += float64(w.Layers) * float64(w.Experts) * float64(w.Rows) * r
	}
	return b
}

// WeightSets lists every weight of the model, the one walk over the layers that counts weights
// (Params, the memory budget's weights per GPU, the cost model's GEMMs and expert reads, and
// `servesim model show` all read it). The order is fixed: for each layer group its attention
// projections, then its dense MLP, or its shared experts, router and routed experts, then its
// small weights; after the layers the embedding table and the lm_head (absent when tied or shared
// with the target model; a drafter with a reduced vocabulary, DraftVocab, has its own lm_head),
// then a modality encoder when the model has one. Sets with zero weights
// are listed too.
func (a *Arch) WeightSets() []WeightSet {
	h := a.Hidden
	out := make([]WeightSet, 0, 4*len(a.Layers)+3)
	one := func(p WeightPart, d DType, layers int, params int64) WeightSet {
		return WeightSet{Part: p, DType: d, Layers: layers, Experts: 1, ActiveExperts: 1, Params: params, Rows: params / int64(max(h, 1))}
	}
	for _, g := range a.Layers {
		f := &g.FFN
		out = append(out, one(PartAttention, g.Attn.DType, g.Count, g.Attn.ProjParams))
		switch f.Kind {
		case FFNDense:
			d := one(PartDenseMLP, f.DType, g.Count, f.DenseParams(h))
			d.Rows = f.rows(h, f.Intermediate)
			out = append(out, d)
		case FFNMoE:
			sh := one(PartSharedExperts, f.DType, g.Count, f.SharedParams(h))
			sh.Rows = int64(f.SharedExperts) * f.rows(h, f.SharedIntermediate)
			out = append(out, sh,
				one(PartRouter, BF16, g.Count, f.RouterParams(h)),
				WeightSet{Part: PartRoutedExperts, DType: f.ExpertDType, Layers: g.Count, Experts: f.Experts, ActiveExperts: f.TopK,
					Params: f.ExpertParams(h), Rows: f.rows(h, f.ExpertIntermediate)})
		}
		out = append(out, one(PartExtra, BF16, g.Count, a.ExtraParamsPerLayer))
	}
	if !a.SharesTargetEmbeddings {
		emb := int64(a.Vocab) * int64(h)
		out = append(out, one(PartEmbedding, a.EmbedDType, 1, emb))
		if !a.TiedEmbed {
			lm := one(PartLMHead, a.EmbedDType, 1, emb)
			lm.Rows = int64(a.Vocab)
			out = append(out, lm)
		}
	} else if a.DraftVocab > 0 {
		lm := one(PartLMHead, a.EmbedDType, 1, int64(a.DraftVocab)*int64(h))
		lm.Rows = int64(a.DraftVocab)
		out = append(out, lm)
	}
	if a.EncoderParams > 0 {
		out = append(out, one(PartEncoder, a.EmbedDType, 1, a.EncoderParams))
	}
	return out
}

// WeightBytesByDType sums the model's weight bytes by storage format (one copy, no parallelism).
func (a *Arch) WeightBytesByDType() map[DType]float64 {
	m := map[DType]float64{}
	for _, w := range a.WeightSets() {
		if w.Total() > 0 {
			m[w.DType] += w.Bytes()
		}
	}
	return m
}

// ParamCount is the number of weights: total, and active per token (routed experts counted top_k
// times, embeddings counted once for the lm_head).
type ParamCount struct {
	Total  int64
	Active int64
	// Breakdown.
	Embedding, LMHead, Attention, DenseMLP, SharedExperts, RoutedExperts, Router, Extra, Encoder int64
}

// ActiveNonEmbedding is Active without the lm_head: the weights a token runs through in the
// decoder layers only (Zhipu's convention: GLM-4.5's 32 B, GLM-5's 40 B).
func (c ParamCount) ActiveNonEmbedding(a *Arch) int64 {
	if a.SharesTargetEmbeddings {
		return c.Active
	}
	if a.TiedEmbed {
		return c.Active - c.Embedding
	}
	return c.Active - c.LMHead
}

// ActiveWithEmbedding is Active plus the embedding table (when it is not the lm_head's too): the
// convention of publishers that count every weight a token touches, the embedding row included
// (Mistral's 12.9 B for Mixtral-8x7B, Qwen's "activated" counts).
func (c ParamCount) ActiveWithEmbedding(a *Arch) int64 {
	if a.TiedEmbed || a.SharesTargetEmbeddings {
		return c.Active
	}
	return c.Active + c.Embedding
}

// Params counts weights.
func (a *Arch) Params() ParamCount {
	var c ParamCount
	var activeRouted int64
	for _, w := range a.WeightSets() {
		n := w.Total()
		switch w.Part {
		case PartAttention:
			c.Attention += n
		case PartDenseMLP:
			c.DenseMLP += n
		case PartSharedExperts:
			c.SharedExperts += n
		case PartRouter:
			c.Router += n
		case PartRoutedExperts:
			c.RoutedExperts += n
			activeRouted += int64(w.Layers) * int64(w.ActiveExperts) * w.Params
		case PartExtra:
			c.Extra += n
		case PartEmbedding:
			c.Embedding += n
		case PartLMHead:
			c.LMHead += n
		case PartEncoder:
			c.Encoder += n
		}
	}
	c.Total = c.Embedding + c.LMHead + c.Attention + c.DenseMLP + c.SharedExperts + c.RoutedExperts + c.Router + c.Extra + c.Encoder
	lm := c.LMHead
	if a.TiedEmbed && !a.SharesTargetEmbeddings {
		lm = c.Embedding
	}
	// Active: everything but the embedding table, the encoder and the unused routed experts; the
	// lm_head runs.
	c.Active = c.Total - c.Embedding - c.LMHead + lm - c.RoutedExperts + activeRouted - c.Encoder
	return c
}

// matrices is the number of weight matrices in an MLP: 3 for SwiGLU (gate, up, down), 2 otherwise.
func (f *FFN) matrices() int64 {
	if f.NotGated {
		return 2
	}
	return 3
}

// rows is the output rows of one MLP of the given intermediate width: gate and up (intermediate
// each, or one up) and down (hidden).
func (f *FFN) rows(hidden, intermediate int) int64 {
	return (f.matrices()-1)*int64(intermediate) + int64(hidden)
}

// ExpertParams is the weight count of one routed expert.
func (f *FFN) ExpertParams(hidden int) int64 {
	return f.matrices() * int64(hidden) * int64(f.ExpertIntermediate)
}

// SharedParams is the weight count of all shared experts of the layer.
func (f *FFN) SharedParams(hidden int) int64 {
	return int64(f.SharedExperts) * f.matrices() * int64(hidden) * int64(f.SharedIntermediate)
}

// DenseParams is the weight count of a dense MLP.
func (f *FFN) DenseParams(hidden int) int64 {
	return f.matrices() * int64(hidden) * int64(f.Intermediate)
}

// RouterParams is the router's weight count.
func (f *FFN) RouterParams(hidden int) int64 {
	if f.Kind != FFNMoE {
		return 0
	}
	return int64(hidden) * int64(f.Experts)
}
