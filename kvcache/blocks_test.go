package kvcache

import (
	"testing"

	"github.com/servesim/servesim/model/arch"
)

// TestContentBlocksShareLeadingSpans: prompts named span by span (a trace's prefix-block hash
// ids, 64 tokens a span over 16-token blocks) hit the cache exactly as far as their leading ids
// agree and the first prompt's blocks were committed; a differing first id shares nothing.
func TestContentBlocksShareLeadingSpans(t *testing.T) {
	specs := []arch.KVSpec{{Name: "gqa", Kind: arch.SpecFull, Layers: 2, BytesPerToken: 1024, AlignTokens: 16}}
	l, err := NewLayout(specs, 64<<20, Options{MaxModelLen: 4096, MaxNumBatchedTokens: 4096, PrefixCaching: true, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(l, false)
	first := Content{PromptTokens: 200, PromptID: 1, UniqueID: 100, Blocks: []uint64{11, 12, 13, 14}, BlockSpan: 64}
	tab := m.NewTable()
	if h := m.FindHit(tab, &first, first.PromptTokens); h != 0 {
		t.Fatalf("cold cache: hit %d", h)
	}
	m.Admit(tab)
	if !m.Grow(tab, first.PromptTokens) {
		t.Fatal("no room")
	}
	m.Commit(tab, &first, first.PromptTokens)
	m.Free(tab)
	for _, c := range []struct {
		name   string
		blocks []uint64
		prompt int
		want   int
	}{
		{"same ids, longer prompt", []uint64{11, 12, 13, 14, 15}, 300, 192}, // 200 tokens committed: 12 full blocks
		{"two leading ids", []uint64{11, 12, 99, 14}, 256, 128},
		{"one leading id", []uint64{11, 98}, 128, 64},
		{"first id differs", []uint64{10, 12, 13}, 192, 0},
	} {
		cc := Content{PromptTokens: c.prompt, PromptID: 2, UniqueID: 200, Blocks: c.blocks, BlockSpan: 64}
		tt := m.NewTable()
		if got := m.FindHit(tt, &cc, cc.PromptTokens); got != c.want {
			t.Errorf("%s: hit %d tokens, want %d", c.name, got, c.want)
		}
		m.Release(tt)
	}
}
