package arch

import (
	"fmt"
	"math"
)

// AttnSparseMLA is MLA whose queries attend only to the top-k tokens chosen by a lightning
// indexer (DeepSeek Sparse Attention, GLM-5 "glm_moe_dsa").
const AttnSparseMLA AttnKind = "sparse_mla"

// SparseMLA is an MLA layer with DeepSeek Sparse Attention: a lightning indexer scores every
// earlier (possibly compressed) key in fp8 and each query attends to the IndexTopK best tokens
// (DeepSeek-AI, "DeepSeek-V3.2-Exp: Boosting Long-Context Efficiency with DeepSeek Sparse
// Attention", 2025).
type SparseMLA struct {
	MLA
	IndexHeads    int // indexer query heads
	IndexHeadDim  int // indexer head dimension (one shared key per stored state)
	IndexTopK     int // tokens each query attends to
	IndexCompress int // tokens per stored indexer key (1: one per token)
}

func checkSparseMLA(a *Attention) error {
	if err := checkMLA(a); err != nil {
		return err
	}
	if a.IndexHeads <= 0 || a.IndexHeadDim <= 0 || a.IndexTopK <= 0 {
		return fmt.Errorf("sparse_mla needs index_heads, index_head_dim and index_topk > 0")
	}
	if a.IndexCompress <= 0 {
		a.IndexCompress = 1
	}
	return nil
}

func newSparseMLA(a *Attention) Mixer {
	return SparseMLA{MLA: newMLA(a).(MLA), IndexHeads: a.IndexHeads, IndexHeadDim: a.IndexHeadDim,
		IndexTopK: a.IndexTopK, IndexCompress: max(a.IndexCompress, 1)}
}

// Kind is AttnSparseMLA.
func (SparseMLA) Kind() AttnKind { return AttnSparseMLA }

// ProjParams is MLA's plus the indexer's: queries from the q latent (or the hidden state),
// q_lora x IH x ID, one shared key projection h x ID and per-head weights h x IH.
func (s SparseMLA) ProjParams(hidden int) int64 {
	h := int64(hidden)
	idx := int64(s.IndexHeads * s.IndexHeadDim)
	qsrc := int64(s.QLoraRank)
	if qsrc == 0 {
		qsrc = h
	}
	return s.MLA.ProjParams(hidden) + qsrc*idx + h*int64(s.IndexHeadDim) + h*int64(s.IndexHeads)
}

// KVProjParams is MLA's plus the indexer's key projection h x ID.
func (s SparseMLA) KVProjParams(hidden int) int64 {
	return s.MLA.KVProjParams(hidden) + int64(hidden)*int64(s.IndexHeadDim)
}

// latentBytes is the cached latent of one token. An fp8 cache is vLLM's fp8_ds_mla page, which
// the sparse backends force: kv_lora fp8 values, one fp32 scale per 128 of them, and the rope key
// in bf16, at least 64 values (zero-padded for NoPE models): 512 + 16 + 128 = 656 bytes for
// DeepSeek-V3.2 and GLM-5 (vLLM vllm/v1/kv_cache_interface.py, MLAAttentionSpec; the FlashMLA
// sparse kernels' layout, github.com/deepseek-ai/FlashMLA).
//
// An nvfp4 cache (community builds' packed nvfp4_ds_mla) keeps the latent as NVFP4: half a byte
// per value and one fp8 scale per 16, with the same bf16 rope part: 256 + 32 + 128 = 416 bytes
// for a 512-wide latent.
func (s SparseMLA) latentBytes(kv DType) float64 {
	if kv == NVFP4 {
		return float64(s.KVLoraRank)/2 + float64(ceilDiv(s.KVLoraRank, 16)) + float64(2*max(s.QKRopeDim, 64))
	}
	if kv == FP8 {
		return float64(s.KVLoraRank + 4*ceilDiv(s.KVLoraRank, 128) + 2*max(s.QKRopeDim, 64))
	}
	return s.MLA.latentBytes(kv)
}

// indexKeyBytes is one stored indexer key: IndexHeadDim fp8 values and one fp32 scale per 128 (132
// bytes for a 128-wide key; vLLM vllm/model_executor/models/deepseek_v2.py, the indexer's K cache).
func (s SparseMLA) indexKeyBytes() float64 {
	return float64(s.IndexHeadDim + 4*ceilDiv(s.IndexHeadDim, 128))
}

// KVSpec is the latent plus one indexer key per IndexCompress tokens, not split by TP.
func (s SparseMLA) KVSpec(tp int, kv DType) KVSpec {
	return KVSpec{Kind: SpecFull, BytesPerToken: s.latentBytes(kv) + s.indexKeyBytes()/float64(s.IndexCompress), AlignTokens: 64}
}

func (s SparseMLA) String() string {
	d := "sparse " + s.MLA.String() + fmt.Sprintf("; DSA indexer %d x %d, top-%d", s.IndexHeads, s.IndexHeadDim, s.IndexTopK)
	if s.IndexCompress > 1 {
		d += fmt.Sprintf(", keys %d:1", s.IndexCompress)
	}
	return d
}

// sparseMLACost is one sparse-MLA layer on one GPU.
type sparseMLACost struct {
	heads               float64 // query heads per rank
	latent, rope        float64 // kv_lora_rank (absorbed q.c and p.c width), rope dim
	topK                int
	idxFLOPsPerQK       float64 // 2 x index heads x index dim (replicated on every rank)
	compress            float64
	latentBytesPerToken float64
	// gatherRowBytes is what a gathering prefill kernel is priced per selected token: the
	// cached row, an NVFP4 row at the fp8 row's size (prefillGatherRowBytes).
	gatherRowBytes float64
	indexKeyBytes  float64 // per stored indexer key
}

// prefillGatherRowBytes is the bytes a prefill kernel that gathers one latent per selected token
// is priced per gather. A gathered row is converted for a bf16 MMA: an fp8 row value by value; an
// NVFP4 row (416 bytes against fp8's 656) is first unpacked, two values a byte, and rescaled by
// an fp8 scale per 16 values on the CUDA cores. No public kernel figure prices that unpacking.
// The community builds' 32K prefills on 4 x RTX PRO 6000 Workstation at decode context parallel
// 4 run 4-6 % slower with the NVFP4 cache than with fp8 (the same builds, speculation methods
// and cards; 12.3-12.8K against 12.9-13.4K tok/s), not faster as 37 % fewer bytes would make a
// gather-bound kernel: the smaller row buys a gathering prefill nothing, so an NVFP4 row is
// priced as the fp8 row. Decode (bandwidth-bound streaming of each query's top-k) keeps the
// smaller row, and a kernel that reads the touched cache once reads its real bytes.
func (s SparseMLA) prefillGatherRowBytes(kv DType) float64 {
	if kv == NVFP4 {
		return s.latentBytes(FP8)
	}
	return s.latentBytes(kv)
}

// Kernels: MLA's six, and the indexer's query and key projections, its weights projection, the
// fp8 logits kernel and the top-k selection (vLLM vllm/model_executor/models/deepseek_v2.py,
// Indexer).
func (SparseMLA) Kernels() int { return 11 }

// SmallKernels: MLA's, and the indexer's key LayerNorm, its rotary embedding, the fp8
// quantisation of its queries and the quantise-and-cache of its keys (vLLM
// vllm/model_executor/models/deepseek_v2.py, Indexer); its query and key projections quantise
// their input too (the per-head weights projection is bf16).
func (s SparseMLA) SmallKernels() (elementwise, quantized int) {
	e, q := s.MLA.SmallKernels()
	return e + 4, q + 2
}

// Prepare splits the query heads over tp ranks; the indexer runs whole on every rank.
func (s SparseMLA) Prepare(tp int, kv DType) LayerCost {
	return &sparseMLACost{heads: float64(s.Heads) / float64(tp), latent: float64(s.KVLoraRank), rope: float64(s.QKRopeDim),
		topK: s.IndexTopK, idxFLOPsPerQK: 2 * float64(s.IndexHeads*s.IndexHeadDim), compress: float64(s.IndexCompress),
		latentBytesPerToken: s.latentBytes(kv), gatherRowBytes: s.prefillGatherRowBytes(kv), indexKeyBytes: s.indexKeyBytes()}
}

// Seconds has two parts. Indexer: every query scores all earlier compressed keys, 2 x IH x ID fp8
// FLOPs each at indexer_eff of the fp8 peak, or reads the keys once, whichever is slower; this is
// the term that grows with the square of the context in prefill. Attention: absorbed MLA over
// min(position, top-k) selected tokens, 2 x heads x (2 kv_lora + rope) FLOPs each for the heads
// the kernel computes (the rank's, padded up to the kernel's head tile r.SparseHeadTile), against
// the latents gathered: one per selected token (a decode query's top-k from its own request's
// cache; a prefill kernel that gathers per query), or, for a prefill kernel that reads the touched
// cache about once (r.SparsePrefillOnce), at most the request's cache once. Prefill runs at
// attn_prefill_eff of the roofline; decode's FLOPs at sparse_decode_eff of the bf16 peak (the fp8
// cache dequantised for a bf16 MMA: FlashMLA's published 410 TFLOPS on an H800) and its bytes at
// attn_decode_eff of the bandwidth, whichever is slower.
func (c *sparseMLACost) Seconds(r *Roofline, start, tokens int, decode bool) Seconds {
	keys := sumMinPos(start, tokens, 0) / c.compress
	tIdx := math.Max(c.idxFLOPsPerQK*keys/(r.FP8FLOPS*r.IndexerEff), float64(start+tokens)/c.compress*c.indexKeyBytes/r.BandwidthBytesPerS)
	sel := sumMinPos(start, tokens, c.topK)
	heads := math.Max(c.heads, float64(r.SparseHeadTile))
	flops := 2 * heads * sel * (2*c.latent + c.rope)
	if decode {
		bytes := sel * c.latentBytesPerToken
		return Seconds{Indexer: tIdx, Attention: math.Max(flops/(r.BF16FLOPS*r.SparseDecodeEff), bytes/(r.BandwidthBytesPerS*r.AttnDecodeEff))}
	}
	bytes := sel * c.gatherRowBytes
	if r.SparsePrefillOnce {
		bytes = math.Min(sel*c.latentBytesPerToken, float64(start+tokens)*c.latentBytesPerToken)
	}
	return Seconds{Indexer: tIdx, Attention: r.Attention(flops, bytes, false)}
}

// ceilDiv is ceiling division for positive ints.
func ceilDiv(a, b int) int { return (a + b - 1) / b }
