package arch

import (
	"testing"
)

// TestKVSpecTP checks the per-GPU split: GQA with fewer KV heads than ranks keeps one head per
// rank; MLA is not split by TP.
func TestKVSpecTP(t *testing.T) {
	gqa := Attention{Kind: AttnGQA, Heads: 64, KVHeads: 8, HeadDim: 128, VHeadDim: 128}
	if s := gqa.KVSpec(16, BF16, ""); s.BytesPerToken != 1*256*2 {
		t.Errorf("GQA on TP 16: %v B/token, want 512", s.BytesPerToken)
	}
	mla := Attention{Kind: AttnMLA, Heads: 128, KVLoraRank: 512, QKRopeDim: 64, VHeadDim: 128}
	if s := mla.KVSpec(8, BF16, ""); s.BytesPerToken != 576*2 {
		t.Errorf("MLA on TP 8: %v B/token, want 1,152", s.BytesPerToken)
	}
}
