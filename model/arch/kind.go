package arch

import (
	"fmt"
	"math"
	"strings"
)

// AttnKind names how a decoder layer mixes tokens (the `kind` key of a layer's attention table).
// Each kind is one type in its own file (gqa.go, mla.go, sparse_mla.go, linear.go) implementing
// Mixer, registered in kinds.
type AttnKind string

// Mixer is one layer's token mixer, read from its Attention description: what its projections
// weigh, what it keeps in the KV cache per GPU, and what a request's work on it costs. Get one with
// Attention.Mixer.
type Mixer interface {
	// Kind is the kind's name.
	Kind() AttnKind
	// ShardedHeads is the number of heads tensor parallelism splits over its ranks; the TP size
	// must divide it.
	ShardedHeads() int
	// ProjParams counts the layer's projection weights in a model of width hidden (the default of
	// Attention.ProjParams).
	ProjParams(hidden int) int64
	// KVProjParams counts the projection weights that turn one context token into what the layer
	// caches (GQA: k and v; MLA: the compressed latent; 0 for a recurrent state). A drafter applies
	// them to every new context token.
	KVProjParams(hidden int) int64
	// KVSpec is one layer's cache footprint on one GPU of tp ranks, with the cache stored in kv
	// (Name and Layers are left for the caller).
	KVSpec(tp int, kv DType) KVSpec
	// Prepare precomputes one layer's per-GPU step-cost constants for tp ranks and a cache in kv.
	Prepare(tp int, kv DType) LayerCost
	// Kernels is the number of GEMM and attention kernels one layer of this kind launches per
	// step (projections as vLLM fuses them, the attention or scan kernel): each pays the GPU's
	// fixed kernel time (kernel_fixed_us) whatever the batch.
	Kernels() int
	// SmallKernels is what one layer of this kind launches per step beside Kernels: elementwise
	// kernels (its norms, rotary embedding, cache writes) and the projection GEMMs whose input
	// activation is quantised by a kernel of its own when the weights run on fp8 or fp4 tensor
	// cores. Each pays the GPU's fixed elementwise-kernel time (kernel_fixed_us x elementwise_fixed_ratio).
	SmallKernels() (elementwise, quantized int)
	// String describes the shape for people ("GQA 32 heads, 8 KV heads x 128").
	String() string
}

// LayerCost is one layer of a Mixer prepared for a deployment (TP size, KV dtype).
type LayerCost interface {
	// Seconds is the layer's time for one request's work: tokens new tokens after start cached
	// ones; decode marks a decode or verification entry (1 + k tokens against a long context).
	Seconds(r *Roofline, start, tokens int, decode bool) Seconds
}

// Roofline is what a layer's kernels run against on one GPU: the achieved memory bandwidth, the
// dense tensor-core peaks and the calibrated fractions of the roofline the attention kernels reach
// (Williams, Waterman and Patterson, "Roofline: an insightful visual performance model", CACM 2009:
// time = max(bytes / bandwidth, FLOPs / peak)).
type Roofline struct {
	BandwidthBytesPerS float64 // achieved device-memory bandwidth (peak x mem_bw_eff), bytes/s
	BF16FLOPS          float64 // dense bf16 tensor-core peak, FLOP/s
	FP8FLOPS           float64 // dense fp8 tensor-core peak, FLOP/s
	AttnPrefillEff     float64 // fraction of the roofline prefill attention kernels reach (attn_prefill_eff)
	AttnDecodeEff      float64 // fraction of the roofline decode attention kernels reach (attn_decode_eff)
	IndexerEff         float64 // fraction of the fp8 peak the DSA indexer's scoring reaches (indexer_eff)
	LinearAttnEff      float64 // fraction of the bf16 peak the chunked linear-attention scan reaches (linear_attn_eff)
	SparseDecodeEff    float64 // fraction of the bf16 peak the sparse-MLA decode kernel reaches when compute-bound (sparse_decode_eff)
	// SparseHeadTile is the query heads per rank the sparse-MLA kernels compute at least (the
	// kernel's head tile, which the rank's heads are padded to; 0: no padding;
	// deploy.Deployment.SparseMLAHeadTile).
	SparseHeadTile int
	// SparsePrefillOnce: the sparse-MLA prefill kernel reads the cache its queries touch about
	// once (FlashMLA's sparse prefill), rather than one latent per selected token
	// (deploy.Deployment.SparsePrefillKernel).
	SparsePrefillOnce bool
}

// Attention is the time of an attention kernel doing flops bf16 FLOPs and reading bytes: the
// roofline divided by the prefill or decode kernel's efficiency.
func (r *Roofline) Attention(flops, bytes float64, decode bool) float64 {
	eff := r.AttnPrefillEff
	if decode {
		eff = r.AttnDecodeEff
	}
	return math.Max(flops/r.BF16FLOPS, bytes/r.BandwidthBytesPerS) / eff
}

// Seconds is one layer's time for one request's work, by kind of work. The cost model adds Indexer
// + Attention to its attention term and State to its state term.
type Seconds struct {
	Indexer   float64 // DSA lightning-indexer scoring
	Attention float64 // softmax, MLA or sparse top-k attention
	State     float64 // recurrent-state traffic and the chunked linear-attention scan
}

// kindDef registers one attention kind: check validates the kind's fields of an Attention and
// fills their defaults (Arch.Normalize calls it); build reads them into the kind's type.
type kindDef struct {
	kind  AttnKind
	check func(a *Attention) error
	build func(a *Attention) Mixer
}

// kinds is the registry of attention kinds, in the order error messages list them: the one place
// a new kind is added (with its file).
func kinds() []kindDef {
	return []kindDef{
		{AttnGQA, checkGQA, newGQA},
		{AttnMLA, checkMLA, newMLA},
		{AttnSparseMLA, checkSparseMLA, newSparseMLA},
		{AttnLinear, checkLinear, newLinear},
	}
}

func lookupKind(k AttnKind) (kindDef, bool) {
	for _, d := range kinds() {
		if d.kind == k {
			return d, true
		}
	}
	return kindDef{}, false
}

// kindList spells the known kinds for an error message: "gqa, mla, sparse_mla or linear".
func kindList() string {
	ks := kinds()
	names := make([]string, len(ks))
	for i, d := range ks {
		names[i] = string(d.kind)
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Mixer returns the layer's token mixer. It panics on a kind that is not registered, which
// Arch.Normalize rejects.
func (a *Attention) Mixer() Mixer {
	d, ok := lookupKind(a.Kind)
	if !ok {
		panic(fmt.Sprintf("arch: attention kind %q is not registered (want %s); Arch.Normalize rejects it", a.Kind, kindList()))
	}
	return d.build(a)
}

// sumMinPos returns sum over positions p = s+1 .. s+t of min(p, k): the attended tokens of t
// causal queries after s cached tokens with a cap of k (k <= 0: no cap).
func sumMinPos(s, t, k int) float64 {
	lo, hi := float64(s+1), float64(s+t)
	if k <= 0 || hi <= float64(k) {
		return (lo + hi) * float64(t) / 2
	}
	if lo >= float64(k) {
		return float64(k) * float64(t)
	}
	// lo..k uncapped, k+1..hi capped.
	kk := float64(k)
	return (lo+kk)*(kk-lo+1)/2 + kk*(hi-kk)
}

// sumChunkPos returns sum over positions p = s+1 .. s+t of ((p-1) mod c) + 1: the attended tokens
// of t causal queries after s cached ones when each attends only within its c-aligned chunk.
func sumChunkPos(s, t, c int) float64 {
	// Prefix sums: F(n) = sum over p = 1..n = full chunks x c(c+1)/2 + r(r+1)/2, r = n mod c.
	f := func(n int) float64 {
		q, r := float64(n/c), float64(n%c)
		cc := float64(c)
		return q*cc*(cc+1)/2 + r*(r+1)/2
	}
	return f(s+t) - f(s)
}
