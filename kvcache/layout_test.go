package kvcache

import (
	"math"
	"testing"

	"github.com/servesim/servesim/model/arch"
)

// seedSpecs are the per-GPU specs of the seed deployment (GLM-5.3-Flash, TP 4, fp8 KV, DFlash
// drafter with bf16 KV), written out from their definitions:
//   - KDA state: 64 heads / 4 ranks x 128 x 128 x 4 B = 1,048,576 B, plus the conv state
//     (kernel 4 - 1) x 3 x 8,192 channels / 4 ranks x 2 B = 36,864 B;
//   - sparse MLA: 656 B fp8_ds_mla + 132 B indexer key per 4 tokens = 689 B per token;
//   - drafter GQA: 8 KV heads / 4 ranks x (128 + 128) x 2 B = 1,024 B per token, window 2,048.
func seedSpecs() []arch.KVSpec {
	return []arch.KVSpec{
		{Name: "linear", Kind: arch.SpecState, Layers: 34, StateBytes: 1048576 + 36864, AlignTokens: 16},
		{Name: "sparse_mla", Kind: arch.SpecFull, Layers: 11, BytesPerToken: 689, AlignTokens: 64},
		{Name: "drafter", Kind: arch.SpecSliding, Layers: 5, BytesPerToken: 1024, Window: 2048, AlignTokens: 16},
	}
}

func TestLayoutSeedHybrid(t *testing.T) {
	const avail = 40 << 30
	l, err := NewLayout(seedSpecs(), avail, Options{SpecTokens: 7, MaxModelLen: 1 << 20, MaxNumBatchedTokens: 8192, PrefixCaching: true})
	if err != nil {
		t.Fatal(err)
	}
	// Attention block: ceil(1,085,440 / 689) = 1,576 tokens, rounded up to a multiple of 16.
	if l.BlockSize != 1584 {
		t.Errorf("BlockSize = %d, want 1584", l.BlockSize)
	}
	if got, want := l.PageBytes, 1584.0*689; got != want {
		t.Errorf("PageBytes = %v, want %v", got, want)
	}
	// Group size: the smallest layer count among the kinds (5 drafter layers); 34 -> 7 groups,
	// 11 -> 3 groups, 5 -> 1 group.
	if l.GroupSize != 5 || len(l.Groups) != 11 {
		t.Fatalf("GroupSize %d, groups %d; want 5 and 11", l.GroupSize, len(l.Groups))
	}
	kinds := map[arch.KVSpecKind]int{}
	for _, g := range l.Groups {
		kinds[g.Kind]++
	}
	if kinds[arch.SpecState] != 7 || kinds[arch.SpecFull] != 3 || kinds[arch.SpecSliding] != 1 {
		t.Errorf("groups by kind = %v, want 7 state, 3 full, 1 sliding", kinds)
	}
	// The drafter's block must divide the main block and fit the page: 1,584 / 2 = 792.
	if bt := l.Groups[len(l.Groups)-1].BlockTokens; bt != 792 {
		t.Errorf("drafter block = %d tokens, want 792", bt)
	}
	wantBlocks := int(avail / (l.PageBytes * 5))
	if l.NumBlocks != wantBlocks {
		t.Errorf("NumBlocks = %d, want %d", l.NumBlocks, wantBlocks)
	}
	// blocks(L) = 3 x cdiv(L, 1584) + 7 x (2 + 7) + min(cdiv(L, 792), cdiv(2048 + 8192, 792) + 1).
	L := 1 << 20
	want := 3*((L+1583)/1584) + 7*9 + min((L+791)/792, (2048+8192+791)/792+1)
	if l.BlocksPerRequestMax != want {
		t.Errorf("BlocksPerRequestMax = %d, want %d", l.BlocksPerRequestMax, want)
	}
	if got := int(float64(l.NumBlocks) / float64(want) * float64(L)); l.KVCacheSizeTokens != got {
		t.Errorf("KVCacheSizeTokens = %d, want %d", l.KVCacheSizeTokens, got)
	}
}

func TestLayoutUniformGQA(t *testing.T) {
	// Llama-3.1-70B on TP 8, bf16: 80 layers x 1 KV head per rank x (128 + 128) x 2 B.
	specs := []arch.KVSpec{{Name: "gqa", Kind: arch.SpecFull, Layers: 80, BytesPerToken: 512, AlignTokens: 16}}
	const avail = 30 << 30
	l, err := NewLayout(specs, avail, Options{MaxModelLen: 131072, MaxNumBatchedTokens: 8192, PrefixCaching: true})
	if err != nil {
		t.Fatal(err)
	}
	if l.BlockSize != 16 || len(l.Groups) != 1 || l.GroupSize != 80 {
		t.Fatalf("block %d, groups %d, group size %d; want 16, 1, 80", l.BlockSize, len(l.Groups), l.GroupSize)
	}
	blocks := avail / (16 * 512 * 80)
	if l.NumBlocks != blocks {
		t.Errorf("NumBlocks = %d, want %d", l.NumBlocks, blocks)
	}
	// One group: kv_cache_size_tokens is num_blocks x block_size up to the int truncation.
	if d := math.Abs(float64(l.KVCacheSizeTokens - blocks*16)); d > 1 {
		t.Errorf("KVCacheSizeTokens = %d, want about %d", l.KVCacheSizeTokens, blocks*16)
	}
	if got, want := l.BytesPerToken(), 512.0*80; got != want {
		t.Errorf("BytesPerToken = %v, want %v", got, want)
	}
}

func TestLayoutErrors(t *testing.T) {
	specs := []arch.KVSpec{{Name: "gqa", Kind: arch.SpecFull, Layers: 80, BytesPerToken: 512, AlignTokens: 16}}
	if _, err := NewLayout(specs, -1, Options{MaxModelLen: 1024}); err == nil {
		t.Error("negative available memory: want an error")
	}
	// 1 GiB holds 1 GiB / 40,960 B = 26,214 tokens: a 131,072-token request does not fit.
	if _, err := NewLayout(specs, 1<<30, Options{MaxModelLen: 131072}); err == nil {
		t.Error("max_model_len larger than the cache: want an error")
	}
	if _, err := NewLayout(nil, 1<<30, Options{MaxModelLen: 1024}); err == nil {
		t.Error("no specs: want an error")
	}
}

func TestSecondaryBlockTokens(t *testing.T) {
	for _, c := range []struct {
		main        int
		page, bytes float64
		want        int
	}{
		{1584, 1584 * 689, 1024, 792}, // bigger per-token bytes: halve the block
		{1584, 1584 * 689, 689, 1584}, // same kind of size: same block
		{1584, 1584 * 689, 100, 1584}, // smaller: same block, page padded
		{16, 16 * 100, 1700, 0},       // does not fit even one token per block... 16/16 = 1 token x 1700 > 1600
	} {
		if got := secondaryBlockTokens(c.main, c.page, c.bytes); got != c.want {
			t.Errorf("secondaryBlockTokens(%d, %v, %v) = %d, want %d", c.main, c.page, c.bytes, got, c.want)
		}
	}
}

// TestLayoutGroupsByTarget: with the groups sized by the target's layers, the seed's kinds give
// G = 11 (the sparse-MLA layers, fewer than the 34 KDA layers), the drafter's 5 layers fill one
// group padded to 11, and a block spans 11 pages: 1 full, 4 state and 1 sliding group where
// vLLM's rule (G = 5, the drafter's count) makes 3, 7 and 1. A page of the sparse-MLA layers then
// costs 11 pages of memory (one block of 11 slots) instead of 15 (three blocks of 5): 15/11 the
// pages for the same memory.
func TestLayoutGroupsByTarget(t *testing.T) {
	const avail = 40 << 30
	specs := seedSpecs()
	specs[2].Drafter = true
	o := Options{SpecTokens: 7, MaxModelLen: 1 << 20, MaxNumBatchedTokens: 8192, PrefixCaching: true}
	vllm, err := NewLayout(specs, avail, o)
	if err != nil {
		t.Fatal(err)
	}
	o.GroupsByTarget = true
	l, err := NewLayout(specs, avail, o)
	if err != nil {
		t.Fatal(err)
	}
	if vllm.GroupSize != 5 || l.GroupSize != 11 {
		t.Fatalf("group size %d by vLLM's rule, %d by the target's: want 5 and 11", vllm.GroupSize, l.GroupSize)
	}
	kinds := map[arch.KVSpecKind]int{}
	for _, g := range l.Groups {
		kinds[g.Kind]++
		if g.Kind == arch.SpecSliding && g.Layers != 5 {
			t.Errorf("drafter group holds %d layers, want its 5 (padded to 11)", g.Layers)
		}
	}
	if kinds[arch.SpecState] != 4 || kinds[arch.SpecFull] != 1 || kinds[arch.SpecSliding] != 1 {
		t.Errorf("groups by kind = %v, want 4 state, 1 full, 1 sliding", kinds)
	}
	if want := int(avail / (l.PageBytes * 11)); l.NumBlocks != want {
		t.Errorf("NumBlocks = %d, want %d", l.NumBlocks, want)
	}
	if r := float64(l.PageTokens()) / float64(vllm.PageTokens()); math.Abs(r-15.0/11) > 0.001 {
		t.Errorf("page tokens %d against vLLM's rule %d: ratio %.3f, want 15/11", l.PageTokens(), vllm.PageTokens(), r)
	}
	// Without a drafter the rule changes nothing.
	plain := seedSpecs()[:2]
	a, errA := NewLayout(plain, avail, Options{MaxModelLen: 1 << 20, MaxNumBatchedTokens: 8192})
	b, errB := NewLayout(plain, avail, Options{MaxModelLen: 1 << 20, MaxNumBatchedTokens: 8192, GroupsByTarget: true})
	if errA != nil || errB != nil || a.GroupSize != b.GroupSize || a.NumBlocks != b.NumBlocks {
		t.Errorf("no drafter: %+v / %+v differ", a, b)
	}
}
