package arch

import (
	"math"
	"testing"
)

// TestSparsePrefillGather: a decode entry gathers one latent per selected token whatever the
// kernel; a prefill chunk does too with a gathering kernel, and with a kernel that reads the
// touched cache once (FlashMLA's sparse prefill) it is bounded by its FLOPs or by the request's
// cache read once. GLM-5's attention on one of 8 ranks: 8 query heads, kv_lora 512, rope 64,
// top-2048, an fp8 cache of 656 bytes per token (DeepSeek-V3.2's fp8_ds_mla layout).
func TestSparsePrefillGather(t *testing.T) {
	s := SparseMLA{MLA: MLA{Heads: 64, KVLoraRank: 512, QKRopeDim: 64, QKNopeDim: 192, VHeadDim: 256},
		IndexHeads: 32, IndexHeadDim: 128, IndexTopK: 2048, IndexCompress: 1}
	c := s.Prepare(8, FP8).(*sparseMLACost)
	c.latentBytesPerToken, c.gatherRowBytes = 656, 656
	r := Roofline{BandwidthBytesPerS: 4e12, BF16FLOPS: 1e15, FP8FLOPS: 2e15, AttnPrefillEff: 0.5, AttnDecodeEff: 0.8, IndexerEff: 0.5, SparseDecodeEff: 0.41}
	once := r
	once.SparsePrefillOnce = true
	// A chunk of 8192 tokens from position 0: sum of min(position, 2048) over positions 1..8192.
	sel := 2048.0*2049/2 + 2048.0*(8192-2048)
	flops := 2 * 8 * sel * (2*512 + 64)
	gather := sel * 656
	if got, want := c.Seconds(&r, 0, 8192, false).Attention, math.Max(flops/1e15, gather/4e12)/0.5; math.Abs(got/want-1) > 1e-9 {
		t.Errorf("gathering prefill: %g s, want %g", got, want)
	}
	if got, want := c.Seconds(&once, 0, 8192, false).Attention, math.Max(flops/1e15, 8192*656/4e12)/0.5; math.Abs(got/want-1) > 1e-9 {
		t.Errorf("read-once prefill: %g s, want %g (compute-bound)", got, want)
	}
	// Decode at 100K: 2048 latents gathered per query, with either kernel; FLOPs at
	// sparse_decode_eff of the peak, bytes at attn_decode_eff of the bandwidth.
	a, b := c.Seconds(&r, 100000, 1, true).Attention, c.Seconds(&once, 100000, 1, true).Attention
	if want := math.Max(2*8*2048*1088/(1e15*0.41), 2048*656/(4e12*0.8)); math.Abs(a/want-1) > 1e-9 || a != b {
		t.Errorf("decode: %g and %g s, want both %g", a, b, want)
	}
}

// TestSparseHeadTile: a kernel that computes a tile of 64 query heads (FlashMLA's sparse kernels
// on Hopper) does 8 times the FLOPs of a rank's 8 heads, in prefill and decode; a rank with more
// heads than the tile computes its own.
func TestSparseHeadTile(t *testing.T) {
	s := SparseMLA{MLA: MLA{Heads: 64, KVLoraRank: 512, QKRopeDim: 64, QKNopeDim: 192, VHeadDim: 256},
		IndexHeads: 32, IndexHeadDim: 128, IndexTopK: 2048, IndexCompress: 1}
	r := Roofline{BandwidthBytesPerS: 4e12, BF16FLOPS: 1e15, FP8FLOPS: 2e15, AttnPrefillEff: 0.5, AttnDecodeEff: 0.8, IndexerEff: 0.5,
		SparseDecodeEff: 0.41, SparsePrefillOnce: true}
	tiled := r
	tiled.SparseHeadTile = 64
	c8 := s.Prepare(8, FP8)
	// Prefill of 8192 tokens after 8192 cached: every query selects 2048, compute-bound.
	p8, p64 := c8.Seconds(&r, 8192, 8192, false).Attention, c8.Seconds(&tiled, 8192, 8192, false).Attention
	if want := 2 * 64 * 2048 * 8192 * 1088.0 / 1e15 / 0.5; math.Abs(p64/want-1) > 1e-9 || math.Abs(p64/p8-8) > 1e-9 {
		t.Errorf("tiled prefill: %g s (untiled %g), want %g, 8x", p64, p8, want)
	}
	if d := c8.Seconds(&tiled, 100000, 1, true).Attention; math.Abs(d/(2*64*2048*1088/(1e15*0.41))-1) > 1e-9 {
		t.Errorf("tiled decode: %g s, want the 64 heads' FLOPs at sparse_decode_eff", d)
	}
	c1 := s.Prepare(1, FP8)
	if a, b := c1.Seconds(&r, 8192, 8192, false).Attention, c1.Seconds(&tiled, 8192, 8192, false).Attention; a != b {
		t.Errorf("64 heads on one rank: tiled %g s, untiled %g s, want equal", b, a)
	}
}

// TestNVFP4CacheGather: an NVFP4 sparse-MLA cache stores 416-byte rows against fp8's 656 (a
// 512-wide latent and the padded bf16 rope part); a prefill kernel that gathers per selected
// token is priced the fp8 row either way (the row is unpacked and rescaled before the MMA), while
// decode and a read-once prefill kernel move the smaller rows.
func TestNVFP4CacheGather(t *testing.T) {
	s := SparseMLA{MLA: MLA{Heads: 64, KVLoraRank: 512, QKRopeDim: 0, QKNopeDim: 256, VHeadDim: 256},
		IndexHeads: 32, IndexHeadDim: 128, IndexTopK: 2048, IndexCompress: 4}
	if f, n := s.latentBytes(FP8), s.latentBytes(NVFP4); f != 656 || n != 416 {
		t.Fatalf("rows: fp8 %g, nvfp4 %g bytes, want 656 and 416", f, n)
	}
	// Bandwidth-bound: a low bandwidth and a high peak.
	r := Roofline{BandwidthBytesPerS: 1e11, BF16FLOPS: 1e16, FP8FLOPS: 2e16, AttnPrefillEff: 0.5, AttnDecodeEff: 0.8, IndexerEff: 0.5, SparseDecodeEff: 0.41}
	fp8, nv := s.Prepare(4, FP8), s.Prepare(4, NVFP4)
	if a, b := fp8.Seconds(&r, 16384, 4096, false).Attention, nv.Seconds(&r, 16384, 4096, false).Attention; a != b {
		t.Errorf("gathering prefill: fp8 %g s, nvfp4 %g s, want equal", a, b)
	}
	if a, b := fp8.Seconds(&r, 100000, 1, true).Attention, nv.Seconds(&r, 100000, 1, true).Attention; math.Abs(b/a-416.0/656) > 1e-9 {
		t.Errorf("decode: nvfp4 %g s over fp8 %g s, want the rows' ratio 416/656", b, a)
	}
	once := r
	once.SparsePrefillOnce = true
	if a, b := fp8.Seconds(&once, 16384, 4096, false).Attention, nv.Seconds(&once, 16384, 4096, false).Attention; math.Abs(b/a-416.0/656) > 1e-9 {
		t.Errorf("read-once prefill: nvfp4 %g s over fp8 %g s, want the rows' ratio", b, a)
	}
}
