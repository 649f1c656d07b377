package arch

import (
	"fmt"
	"math"
)

// AttnGQA is softmax attention with grouped key/value heads (MHA when KVHeads == Heads), over the
// whole context or a sliding window.
const AttnGQA AttnKind = "gqa"

// GQA is a grouped-query attention layer (Ainslie et al., "GQA: Training Generalized Multi-Query
// Transformer Models from Multi-Head Checkpoints", EMNLP 2023).
type GQA struct {
	Heads    int // query heads
	KVHeads  int // key/value heads, each shared by Heads/KVHeads query heads
	HeadDim  int // query/key head dimension
	VHeadDim int // value head dimension
	Window   int // > 0: sliding window, each token attends to the last Window tokens
	Chunk    int // > 0: chunked local attention, each token attends within its Chunk-aligned chunk
	NoPE     bool
	Sinks    bool
}

func checkGQA(a *Attention) error {
	if a.Heads <= 0 || a.KVHeads <= 0 || a.HeadDim <= 0 {
		return fmt.Errorf("gqa needs heads, kv_heads and head_dim > 0 (got %d, %d, %d)", a.Heads, a.KVHeads, a.HeadDim)
	}
	if a.Heads%a.KVHeads != 0 {
		return fmt.Errorf("heads = %d is not a multiple of kv_heads = %d", a.Heads, a.KVHeads)
	}
	if a.Window < 0 || a.Chunk < 0 || (a.Window > 0 && a.Chunk > 0) {
		return fmt.Errorf("window = %d, chunk = %d: want at most one of them positive", a.Window, a.Chunk)
	}
	if a.VHeadDim == 0 {
		a.VHeadDim = a.HeadDim
	}
	return nil
}

func newGQA(a *Attention) Mixer {
	return GQA{Heads: a.Heads, KVHeads: a.KVHeads, HeadDim: a.HeadDim, VHeadDim: a.VHeadDim, Window: a.Window,
		Chunk: a.Chunk, NoPE: a.NoPE, Sinks: a.Sinks}
}

// Kind is AttnGQA.
func (GQA) Kind() AttnKind { return AttnGQA }

// ShardedHeads is the query heads: TP splits them (and the KV heads, down to one per rank).
func (g GQA) ShardedHeads() int { return g.Heads }

// vDim is the value head dimension, HeadDim when not given.
func (g GQA) vDim() int {
	if g.VHeadDim == 0 {
		return g.HeadDim
	}
	return g.VHeadDim
}

// ProjParams is q, k, v and o without biases: h x H x d + h x KV x (d + dv) + H x dv x h.
func (g GQA) ProjParams(hidden int) int64 {
	h, v := int64(hidden), g.vDim()
	q := int64(g.Heads * g.HeadDim)
	kv := int64(g.KVHeads * (g.HeadDim + v))
	o := int64(g.Heads * v)
	return h*q + h*kv + o*h
}

// KVProjParams is the k and v projections: h x KV x (d + dv).
func (g GQA) KVProjParams(hidden int) int64 {
	return int64(hidden) * int64(g.KVHeads*(g.HeadDim+g.VHeadDim))
}

// KVSpec is max(1, KV / tp) x (d + dv) x bytes per token, for every token or, with a window, for
// the last Window tokens (vLLM vllm/v1/kv_cache_interface.py, FullAttentionSpec and
// SlidingWindowSpec). An fp8 cache carries per-tensor scales: 1 byte per value. A chunked-local
// layer is given as a sliding window of Chunk tokens: vLLM's ChunkedLocalAttentionSpec reserves,
// like SlidingWindowSpec, about a chunk plus one batch of tokens per request, and a request never
// holds more than its current chunk.
func (g GQA) KVSpec(tp int, kv DType) KVSpec {
	kvh := max(1, g.KVHeads/tp)
	s := KVSpec{Kind: SpecFull, AlignTokens: 16}
	s.BytesPerToken = float64(kvh*(g.HeadDim+g.VHeadDim)) * kv.BytesPerParam()
	if kv == FP8 {
		s.BytesPerToken = float64(kvh * (g.HeadDim + g.VHeadDim))
	}
	if g.Window > 0 {
		s.Kind = SpecSliding
		s.Window = g.Window
	}
	if g.Chunk > 0 {
		s.Kind = SpecSliding
		s.Window = g.Chunk
	}
	return s
}

func (g GQA) String() string {
	s := fmt.Sprintf("GQA %d heads, %d KV heads x %d", g.Heads, g.KVHeads, g.HeadDim)
	if g.VHeadDim != g.HeadDim {
		s += fmt.Sprintf("/%d", g.VHeadDim)
	}
	if g.Window > 0 {
		s += fmt.Sprintf(", sliding window %d", g.Window)
	}
	if g.Chunk > 0 {
		s += fmt.Sprintf(", chunked local %d", g.Chunk)
	}
	if g.NoPE {
		s += ", NoPE"
	}
	if g.Sinks {
		s += ", sinks"
	}
	return s
}

// Kernels: the fused QKV and output projections, and the attention kernel.
func (GQA) Kernels() int { return 3 }

// SmallKernels: rotary embedding and the KV-cache write; the QKV and output projections quantise
// their input.
func (GQA) SmallKernels() (elementwise, quantized int) { return 2, 2 }

// gqaCost is one GQA layer on one GPU.
type gqaCost struct {
	heads           float64 // query heads per rank
	qkDim, vDim     float64
	window          int
	chunk           int
	kvBytesPerToken float64 // per GPU
}

// Prepare splits the query heads over tp ranks.
func (g GQA) Prepare(tp int, kv DType) LayerCost {
	return &gqaCost{heads: float64(g.Heads) / float64(tp), qkDim: float64(g.HeadDim), vDim: float64(g.VHeadDim),
		window: g.Window, chunk: g.Chunk, kvBytesPerToken: g.KVSpec(tp, kv).BytesPerToken}
}

// Seconds is the FlashAttention roofline (Dao, "FlashAttention-2", 2023): each of the tokens
// queries attends to min(position, window) keys, or in a chunked layer to the earlier keys of its
// chunk, 2 x heads x (d + dv) FLOPs per query-key pair, and the KV the request holds (from the
// start of the first chunk the new tokens touch) is read once; divided by attn_prefill_eff or attn_decode_eff.
func (c *gqaCost) Seconds(r *Roofline, start, tokens int, decode bool) Seconds {
	var ctx float64
	if c.chunk > 0 {
		ctx = sumChunkPos(start, tokens, c.chunk)
	} else {
		ctx = sumMinPos(start, tokens, c.window)
	}
	flops := 2 * c.heads * ctx * (c.qkDim + c.vDim)
	held := float64(start + tokens)
	if c.window > 0 {
		held = math.Min(held, float64(c.window))
	}
	if c.chunk > 0 {
		held = float64(start + tokens - start/c.chunk*c.chunk)
	}
	return Seconds{Attention: r.Attention(flops, held*c.kvBytesPerToken, decode)}
}
