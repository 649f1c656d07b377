package arch

import (
	"fmt"
)

// AttnMLA is multi-head latent attention: one compressed latent per token, shared by all heads.
const AttnMLA AttnKind = "mla"

// MLA is a multi-head latent attention layer (DeepSeek-AI, "DeepSeek-V2: A Strong, Economical, and
// Efficient Mixture-of-Experts Language Model", 2024, section 2.1).
type MLA struct {
	Heads      int // query heads
	QLoraRank  int // rank of the query compression (0: queries projected from the hidden state)
	KVLoraRank int // width of the cached key/value latent
	QKRopeDim  int // rotary part of the query/key head (cached once per token, shared by heads)
	QKNopeDim  int // non-rotary part of the query/key head
	VHeadDim   int // value head dimension
}

func checkMLA(a *Attention) error {
	if a.Heads <= 0 || a.KVLoraRank <= 0 || a.VHeadDim <= 0 {
		return fmt.Errorf("mla needs heads, kv_lora_rank and v_head_dim > 0")
	}
	return nil
}

func newMLA(a *Attention) Mixer {
	return MLA{Heads: a.Heads, QLoraRank: a.QLoraRank, KVLoraRank: a.KVLoraRank, QKRopeDim: a.QKRopeDim,
		QKNopeDim: a.QKNopeDim, VHeadDim: a.VHeadDim}
}

// Kind is AttnMLA.
func (MLA) Kind() AttnKind { return AttnMLA }

// ShardedHeads is the query heads; the latent is not split.
func (m MLA) ShardedHeads() int { return m.Heads }

// ProjParams is q (h x H x qk, or q_a h x q_lora + q_b q_lora x H x qk), kv_a (h x (kv_lora +
// rope)), kv_b (kv_lora x H x (nope + v)) and o (H x v x h), with qk = nope + rope.
func (m MLA) ProjParams(hidden int) int64 {
	h := int64(hidden)
	qk := int64(m.QKNopeDim + m.QKRopeDim)
	var q int64
	if m.QLoraRank > 0 {
		q = h*int64(m.QLoraRank) + int64(m.QLoraRank)*int64(m.Heads)*qk
	} else {
		q = h * int64(m.Heads) * qk
	}
	kvA := h * int64(m.KVLoraRank+m.QKRopeDim)
	kvB := int64(m.KVLoraRank) * int64(m.Heads) * int64(m.QKNopeDim+m.VHeadDim)
	o := int64(m.Heads*m.VHeadDim) * h
	return q + kvA + kvB + o
}

// KVProjParams is kv_a, which produces the cached latent and rope key: h x (kv_lora + rope).
func (m MLA) KVProjParams(hidden int) int64 {
	return int64(hidden) * int64(m.KVLoraRank+m.QKRopeDim)
}

// latentBytes is the cached latent and rope key of one token: (kv_lora + rope) x bytes, 1 byte per
// value in fp8 (per-tensor scales).
func (m MLA) latentBytes(kv DType) float64 {
	if kv == FP8 {
		return float64(m.KVLoraRank + m.QKRopeDim)
	}
	return float64(m.KVLoraRank+m.QKRopeDim) * kv.BytesPerParam()
}

// KVSpec is the latent per token, not split by TP: every rank stores it whole (vLLM
// vllm/v1/kv_cache_interface.py, MLAAttentionSpec). MLA kernels want 64-token blocks.
func (m MLA) KVSpec(tp int, kv DType) KVSpec {
	return KVSpec{Kind: SpecFull, BytesPerToken: m.latentBytes(kv), AlignTokens: 64}
}

func (m MLA) String() string {
	s := fmt.Sprintf("MLA %d heads, kv_lora %d, rope %d, nope %d, v %d", m.Heads, m.KVLoraRank, m.QKRopeDim, m.QKNopeDim, m.VHeadDim)
	if m.QLoraRank > 0 {
		s += fmt.Sprintf(", q_lora %d", m.QLoraRank)
	}
	return s
}

// mlaCost is one MLA layer on one GPU.
type mlaCost struct {
	heads           float64 // query heads per rank
	latent, rope    float64
	nope, vDim      float64
	kvBytesPerToken float64
}

// Prepare splits the query heads over tp ranks.
// Kernels: the fused q_a/kv_a down-projection, q_b, the latent up-projection (kv_b, or the
// absorbed q and output batched GEMMs in decode), the attention kernel and the output projection
// (vLLM vllm/model_executor/layers/mla.py).
func (MLA) Kernels() int { return 6 }

// SmallKernels: the q and kv latent RMSNorms, rotary embedding and the latent cache write (vLLM
// vllm/model_executor/layers/mla.py); the fused q_a/kv_a, q_b and output projections quantise
// their input (the absorbed latent products are bf16 batched GEMMs).
func (MLA) SmallKernels() (elementwise, quantized int) { return 4, 3 }

func (m MLA) Prepare(tp int, kv DType) LayerCost {
	return &mlaCost{heads: float64(m.Heads) / float64(tp), latent: float64(m.KVLoraRank), rope: float64(m.QKRopeDim),
		nope: float64(m.QKNopeDim), vDim: float64(m.VHeadDim), kvBytesPerToken: m.KVSpec(tp, kv).BytesPerToken}
}

// Seconds is the roofline of MLA: decode runs the absorbed form (queries and outputs in latent
// space, 2 x heads x (2 kv_lora + rope) FLOPs per query-key pair; DeepSeek-V2 section 2.1.3,
// FlashMLA), prefill the expanded form (2 x heads x (nope + rope + v)); the whole cached latent is
// read once; divided by attn_prefill_eff or attn_decode_eff.
func (c *mlaCost) Seconds(r *Roofline, start, tokens int, decode bool) Seconds {
	ctx := sumMinPos(start, tokens, 0)
	var flops float64
	if decode {
		flops = 2 * c.heads * ctx * (2*c.latent + c.rope)
	} else {
		flops = 2 * c.heads * ctx * (c.nope + c.rope + c.vDim)
	}
	return Seconds{Attention: r.Attention(flops, float64(start+tokens)*c.kvBytesPerToken, decode)}
}
