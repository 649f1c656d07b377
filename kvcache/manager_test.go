package kvcache

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/servesim/servesim/model/arch"
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

// TestDeferUniqueChangesNoHit drives an eager manager and one with DeferUnique over the same
// random request lives on two layouts (the seed's hybrid one with a sliding window, and a plain
// full-attention one with small blocks): prompts shared between requests, preemptions (CommitAll,
// Free, and a later re-admission with prompt + output known), finishes and aborts (Free without
// CommitAll). Hits, block tables and free counts must agree throughout: the deferred generated
// blocks are the request's own, entered before any lookup that could find them. A third manager
// adds the pool's hot reuse (Pool.ReuseHot) and drops a finished unique prompt's content
// (ReleaseDone): a third of the prompts are unique; it must agree as well.
func TestDeferUniqueChangesNoHit(t *testing.T) {
	hybrid, err := NewLayout(seedSpecs(), 2<<30, Options{SpecTokens: 7, MaxModelLen: 1 << 16, MaxNumBatchedTokens: 8192, PrefixCaching: true})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := NewLayout([]arch.KVSpec{{Name: "gqa", Kind: arch.SpecFull, Layers: 4, BytesPerToken: 1024, AlignTokens: 16}}, 8<<20,
		Options{MaxModelLen: 1024, MaxNumBatchedTokens: 512, PrefixCaching: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []*Layout{hybrid, plain} {
		for _, eagle := range []bool{false, true} {
			eager, lazy, hot := NewManager(l, eagle), NewManager(l, eagle), NewManager(l, eagle)
			lazy.DeferUnique = true
			hot.DeferUnique, hot.Pool.ReuseHot = true, true
			type live struct {
				c          Content
				te, tl, th *Table
				computed   int
			}
			var held, preempted []*live
			rng := rand.New(rand.NewPCG(11, uint64(l.BlockSize)))
			for life := 0; life < 300; life++ {
				var x *live
				if len(preempted) > 0 && rng.IntN(2) == 0 {
					x = preempted[0]
					preempted = preempted[1:]
				} else {
					prompt := 1 + rng.IntN(5*l.BlockSize)
					x = &live{c: Content{PromptID: uint64(1 + rng.IntN(4)), PromptTokens: prompt, UniqueID: uint64(1000 + life)},
						te: eager.NewTable(), tl: lazy.NewTable(), th: hot.NewTable(), computed: prompt}
					if rng.IntN(3) == 0 {
						x.c.PromptID, x.c.PromptUnique = uint64(1_000_000+life), true
					}
				}
				known := x.computed
				he, hl, hh := eager.FindHit(x.te, &x.c, known), lazy.FindHit(x.tl, &x.c, known), hot.FindHit(x.th, &x.c, known)
				if he != hl || he != hh {
					t.Fatalf("block %d eagle %v life %d: hits %d (eager), %d (deferred) and %d (hot reuse)", l.BlockSize, eagle, life, he, hl, hh)
				}
				ae, al, ah := eager.CanAdmit(x.te, known+8), lazy.CanAdmit(x.tl, known+8), hot.CanAdmit(x.th, known+8)
				if ae != al || ae != ah {
					t.Fatalf("life %d: CanAdmit %v, %v and %v", life, ae, al, ah)
				}
				if !ae {
					// Make room: finish the oldest held request.
					if len(held) > 0 {
						eager.Free(held[0].te)
						lazy.Free(held[0].tl)
						hot.ReleaseDone(held[0].th, &held[0].c)
						held = held[1:]
					}
					continue
				}
				eager.Admit(x.te)
				lazy.Admit(x.tl)
				hot.Admit(x.th)
				computed := he
				end := known + rng.IntN(3*l.BlockSize)
				for computed < end {
					n := min(end-computed, 1+rng.IntN(l.BlockSize))
					ge, gl, gh := eager.Grow(x.te, computed+n+7), lazy.Grow(x.tl, computed+n+7), hot.Grow(x.th, computed+n+7)
					if ge != gl || ge != gh {
						t.Fatalf("life %d: Grow %v, %v and %v", life, ge, gl, gh)
					}
					if !ge {
						break
					}
					computed += n
					eager.Commit(x.te, &x.c, computed)
					lazy.Commit(x.tl, &x.c, computed)
					hot.Commit(x.th, &x.c, computed)
					checkHashes(t, eager, x.te, &x.c)
					checkHashes(t, lazy, x.tl, &x.c)
					checkHashes(t, hot, x.th, &x.c)
					if eager.Pool.NumFree() != lazy.Pool.NumFree() || eager.Pool.NumFree() != hot.Pool.NumFree() {
						t.Fatalf("life %d: free %d, %d and %d", life, eager.Pool.NumFree(), lazy.Pool.NumFree(), hot.Pool.NumFree())
					}
					for g := range l.Groups {
						if len(x.te.Blocks[g]) != len(x.tl.Blocks[g]) || x.te.base[g] != x.tl.base[g] {
							t.Fatalf("life %d: group %d holds %d blocks from %d and %d from %d", life, g,
								len(x.te.Blocks[g]), x.te.base[g], len(x.tl.Blocks[g]), x.tl.base[g])
						}
					}
				}
				x.computed = computed
				switch rng.IntN(3) {
				case 0: // preempted: everything computed becomes findable, then freed
					lazy.CommitAll(x.tl, &x.c, computed)
					hot.CommitAll(x.th, &x.c, computed)
					eager.Free(x.te)
					lazy.Free(x.tl)
					hot.Free(x.th)
					preempted = append(preempted, x)
				case 1: // finished or aborted
					eager.Free(x.te)
					lazy.Free(x.tl)
					hot.ReleaseDone(x.th, &x.c)
				default:
					held = append(held, x)
				}
				eager.Pool.CheckInvariants()
				lazy.Pool.CheckInvariants()
				hot.Pool.CheckInvariants()
			}
		}
	}
}

// checkHashes checks that every block tb has entered in the cache holds the chained hash of its
// position in c, pending (computed from its chain source) or in the index.
func checkHashes(t *testing.T, m *Manager, tb *Table, c *Content) {
	t.Helper()
	for g := range m.L.Groups {
		if m.L.Groups[g].Kind == arch.SpecState {
			continue
		}
		for i, b := range tb.Blocks[g] {
			j := tb.base[g] + i
			if j >= tb.hashed[g] {
				break
			}
			if got, want := m.Pool.hashOf(b), m.blockHash(tb, c, g, j); got != want {
				t.Fatalf("group %d block %d (%d): hash %x, want %x", g, j, b, got, want)
			}
		}
	}
}

// BenchmarkManagerPrivatePrompts is the kvcache side of sim's BenchmarkTrace: 2,048-token prompts
// that no other request shares, 256 generated tokens, about 100 requests holding blocks of a
// 16,098-block pool (Qwen3-14B on one H100), in the fast mode's DeferUnique. One op is one
// request's life: a missed lookup, admission, prefill, decode block by block, release.
func BenchmarkManagerPrivatePrompts(b *testing.B) {
	specs := []arch.KVSpec{{Name: "gqa", Kind: arch.SpecFull, Layers: 80, BytesPerToken: 512, AlignTokens: 16}}
	l, err := NewLayout(specs, 16098*16*512*80, Options{MaxModelLen: 40960, MaxNumBatchedTokens: 8192, PrefixCaching: true})
	if err != nil {
		b.Fatal(err)
	}
	m := NewManager(l, false)
	m.DeferUnique = true
	type live struct {
		t *Table
		c Content
	}
	var active []*live
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		r := &live{t: m.NewTable(), c: Content{PromptID: 1<<40 + uint64(i), PromptTokens: 2048, UniqueID: uint64(i) << 20}}
		m.FindHit(r.t, &r.c, 2048)
		if !m.CanAdmit(r.t, 2049) {
			b.Fatal("pool full")
		}
		m.Admit(r.t)
		m.Grow(r.t, 2049)
		m.Commit(r.t, &r.c, 2048)
		for tok := 2064; tok <= 2304; tok += 16 {
			m.Grow(r.t, tok+1)
			m.Commit(r.t, &r.c, tok)
		}
		active = append(active, r)
		if len(active) > 100 {
			m.Release(active[0].t)
			active = active[1:]
		}
	}
}
