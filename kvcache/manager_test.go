package kvcache

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestManagerShortcutsChangeNothing drives two managers over the seed's hybrid layout (state,
// full and sliding groups) with the same random request lives: one uses Grow's and Commit's
// early returns, the other has them disabled before every call. Block tables, cached hashes and
// the free count must agree after every operation; a shortcut that skips work would leave a
// request short of blocks or a block unhashed.
func TestManagerShortcutsChangeNothing(t *testing.T) {
	l, err := NewLayout(seedSpecs(), 2<<30, Options{SpecTokens: 7, MaxModelLen: 1 << 16, MaxNumBatchedTokens: 8192, PrefixCaching: true})
	if err != nil {
		t.Fatal(err)
	}
	fast, slow := NewManager(l, true), NewManager(l, true)
	rng := rand.New(rand.NewPCG(7, 9))
	for life := 0; life < 60; life++ {
		prompt := 1 + rng.IntN(6*l.BlockSize)
		c := Content{PromptID: uint64(1 + rng.IntN(3)), PromptTokens: prompt, UniqueID: uint64(1000 + life)}
		tf, ts := fast.NewTable(), slow.NewTable()
		hf, hs := fast.FindHit(tf, &c, prompt), slow.FindHit(ts, &c, prompt)
		if hf != hs {
			t.Fatalf("life %d: hits %d and %d", life, hf, hs)
		}
		if !fast.CanAdmit(tf, prompt+8) {
			continue // the pool is full of held blocks: nothing to compare
		}
		fast.Admit(tf)
		slow.Admit(ts)
		computed := hf
		for computed < prompt+3*l.BlockSize {
			n := 1 + rng.IntN(8)
			if computed < prompt {
				n = min(prompt-computed, 1+rng.IntN(3000))
			}
			ts.fits, ts.nextCommit = 0, 0
			okF, okS := fast.Grow(tf, computed+n+7), slow.Grow(ts, computed+n+7)
			if okF != okS {
				t.Fatalf("life %d at %d tokens: Grow %v and %v", life, computed, okF, okS)
			}
			if !okF {
				break
			}
			computed += n
			ts.fits, ts.nextCommit = 0, 0
			fast.Commit(tf, &c, computed)
			slow.Commit(ts, &c, computed)
			for g := range l.Groups {
				if !slices.Equal(tf.Blocks[g], ts.Blocks[g]) || tf.base[g] != ts.base[g] || tf.hashed[g] != ts.hashed[g] {
					t.Fatalf("life %d at %d tokens: group %d differs: blocks %v / %v, base %d / %d, hashed %d / %d",
						life, computed, g, tf.Blocks[g], ts.Blocks[g], tf.base[g], ts.base[g], tf.hashed[g], ts.hashed[g])
				}
			}
			if fast.Pool.NumFree() != slow.Pool.NumFree() || fast.Pool.NumCached() != slow.Pool.NumCached() {
				t.Fatalf("life %d at %d tokens: free %d / %d, cached %d / %d", life, computed,
					fast.Pool.NumFree(), slow.Pool.NumFree(), fast.Pool.NumCached(), slow.Pool.NumCached())
			}
		}
		if rng.IntN(3) > 0 { // keep some requests holding blocks so the pool fills up
			fast.Free(tf)
			slow.Free(ts)
		}
		fast.Pool.CheckInvariants()
	}
}
