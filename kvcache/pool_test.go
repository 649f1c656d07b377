package kvcache

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// naivePool is the reference model of Pool: a slice for the LRU free queue, maps for references
// and cached content. It is slow and obviously right. Like vLLM's BlockHashToBlockMap
// (vllm/v1/core/block_pool.py), it keeps every block cached under a hash, in insertion order, and
// a lookup returns the first (get_one_block).
type naivePool struct {
	n      int
	free   []BlockID // LRU order: front is evicted first
	ref    map[BlockID]int
	hashOf map[BlockID]Hash
	cached map[Hash][]BlockID
}

func newNaive(n int) *naivePool {
	p := &naivePool{n: n, ref: map[BlockID]int{}, hashOf: map[BlockID]Hash{}, cached: map[Hash][]BlockID{}}
	for i := 0; i < n; i++ {
		p.free = append(p.free, BlockID(i))
	}
	return p
}

func (p *naivePool) evict(b BlockID) {
	if h, ok := p.hashOf[b]; ok {
		bs := slices.DeleteFunc(p.cached[h], func(x BlockID) bool { return x == b })
		if len(bs) == 0 {
			delete(p.cached, h)
		} else {
			p.cached[h] = bs
		}
		delete(p.hashOf, b)
	}
}

func (p *naivePool) lookup(h Hash) (BlockID, bool) {
	if bs := p.cached[h]; len(bs) > 0 {
		return bs[0], true
	}
	return 0, false
}

func (p *naivePool) allocate(n int) ([]BlockID, bool) {
	if n > len(p.free) {
		return nil, false
	}
	out := append([]BlockID(nil), p.free[:n]...)
	p.free = p.free[n:]
	for _, b := range out {
		p.evict(b)
		p.ref[b] = 1
	}
	return out, true
}

func (p *naivePool) touch(b BlockID) {
	if p.ref[b] == 0 {
		i := slices.Index(p.free, b)
		p.free = slices.Delete(p.free, i, i+1)
	}
	p.ref[b]++
}

func (p *naivePool) freeBlocks(bs []BlockID) {
	for i := len(bs) - 1; i >= 0; i-- {
		b := bs[i]
		p.ref[b]--
		if p.ref[b] == 0 {
			p.free = append(p.free, b)
		}
	}
}

func (p *naivePool) setHash(b BlockID, h Hash) {
	if _, has := p.hashOf[b]; has || h == 0 {
		return
	}
	p.hashOf[b] = h
	p.cached[h] = append(p.cached[h], b)
}

func (p *naivePool) cacheDetached(h Hash) {
	if h == 0 || len(p.free) == 0 {
		return
	}
	if b, ok := p.lookup(h); ok {
		// Computed again: the cached free copy becomes the most recently used.
		if i := slices.Index(p.free, b); i >= 0 {
			p.free = append(slices.Delete(p.free, i, i+1), b)
		}
		return
	}
	b := p.free[0]
	p.free = p.free[1:]
	p.evict(b)
	p.hashOf[b] = h
	p.cached[h] = append(p.cached[h], b)
	p.free = append(p.free, b)
}

// TestPoolMatchesNaiveModel drives Pool and the naive model with the same random operations and
// checks they agree on every observable: which blocks are handed out, free counts, cache lookups,
// reference counts. Content is entered with SetHash or SetHashLazy (keyed by h mod 3, flushed
// before a lookup of h), which the naive model treats alike. rapid prints the failing seed and a
// shrunk operation sequence.
func TestPoolMatchesNaiveModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 24).Draw(t, "blocks")
		p := NewPool(n)
		ref := newNaive(n)
		var held [][]BlockID // allocations still owned by "requests"
		hashes := rapid.SampledFrom([]Hash{1, 2, 3, 4, 5, 6, 7, 8})
		t.Repeat(map[string]func(*rapid.T){
			"allocate": func(t *rapid.T) {
				k := rapid.IntRange(0, n+1).Draw(t, "k")
				got, ok := p.Allocate(nil, k)
				want, wok := ref.allocate(k)
				if ok != wok || !slices.Equal(got, want) {
					t.Fatalf("Allocate(%d) = %v %v, want %v %v", k, got, ok, want, wok)
				}
				if ok && k > 0 {
					held = append(held, got)
				}
			},
			"free": func(t *rapid.T) {
				if len(held) == 0 {
					t.Skip("nothing held")
				}
				i := rapid.IntRange(0, len(held)-1).Draw(t, "i")
				p.Free(held[i])
				ref.freeBlocks(held[i])
				held = slices.Delete(held, i, i+1)
			},
			"hash": func(t *rapid.T) {
				if len(held) == 0 {
					t.Skip("nothing held")
				}
				i := rapid.IntRange(0, len(held)-1).Draw(t, "i")
				j := rapid.IntRange(0, len(held[i])-1).Draw(t, "j")
				h := hashes.Draw(t, "h")
				p.SetHash(held[i][j], h)
				ref.setHash(held[i][j], h)
			},
			"hashLazy": func(t *rapid.T) {
				if len(held) == 0 {
					t.Skip("nothing held")
				}
				i := rapid.IntRange(0, len(held)-1).Draw(t, "i")
				j := rapid.IntRange(0, len(held[i])-1).Draw(t, "j")
				h := hashes.Draw(t, "h")
				p.SetHashLazy(held[i][j], h, uint64(h%3))
				ref.setHash(held[i][j], h)
			},
			"hitAndTouch": func(t *rapid.T) {
				h := hashes.Draw(t, "h")
				p.Flush(uint64(h % 3)) // the lazy entries a lookup of h may need
				b, ok := p.Lookup(h)
				wb, wok := ref.lookup(h)
				if ok != wok || (ok && b != wb) {
					t.Fatalf("Lookup(%d) = %d %v, want %d %v", h, b, ok, wb, wok)
				}
				if ok {
					p.Touch(b)
					ref.touch(b)
					held = append(held, []BlockID{b})
				}
			},
			"detached": func(t *rapid.T) {
				h := hashes.Draw(t, "h")
				p.CacheDetached(h, uint64(h%3))
				ref.cacheDetached(h)
			},
			"": func(t *rapid.T) {
				p.CheckInvariants()
				if p.NumFree() != len(ref.free) {
					t.Fatalf("NumFree = %d, want %d", p.NumFree(), len(ref.free))
				}
				if p.NumHashed() != len(ref.hashOf) {
					t.Fatalf("NumHashed = %d, want %d", p.NumHashed(), len(ref.hashOf))
				}
				for b := 0; b < n; b++ {
					if p.Ref(BlockID(b)) != ref.ref[BlockID(b)] {
						t.Fatalf("Ref(%d) = %d, want %d", b, p.Ref(BlockID(b)), ref.ref[BlockID(b)])
					}
				}
				// Never more blocks handed out than exist: held references plus free == total.
				inUse := 0
				for b := 0; b < n; b++ {
					if p.Ref(BlockID(b)) > 0 {
						inUse++
					}
				}
				if inUse+p.NumFree() != n {
					t.Fatalf("%d in use + %d free != %d blocks", inUse, p.NumFree(), n)
				}
			},
		})
		// Release everything: no block may leak.
		for _, h := range held {
			p.Free(h)
		}
		if p.NumFree() != n {
			t.Fatalf("after freeing everything NumFree = %d, want %d", p.NumFree(), n)
		}
		p.CheckInvariants()
	})
}

func TestPoolFreeOrderEvictsTailFirst(t *testing.T) {
	p := NewPool(4)
	bs, _ := p.Allocate(nil, 4)
	for i, b := range bs {
		p.SetHash(b, Hash(10+i))
	}
	p.Free(bs) // tail block (hash 13) joins the queue first
	got, _ := p.Allocate(nil, 1)
	if got[0] != bs[3] {
		t.Fatalf("first evicted block = %d, want the chain's tail %d", got[0], bs[3])
	}
	if _, ok := p.Lookup(13); ok {
		t.Fatal("evicted block still findable by its hash")
	}
	if _, ok := p.Lookup(10); !ok {
		t.Fatal("head of the chain was evicted before its tail")
	}
}

// TestPoolKeepsDuplicateContent is the case vLLM's BlockHashToBlockMap handles and a pool with one
// block per hash does not: two blocks computed with the same content, the first evicted, the
// content still found in the second.
func TestPoolKeepsDuplicateContent(t *testing.T) {
	p := NewPool(3)
	a, _ := p.Allocate(nil, 1)
	b, _ := p.Allocate(nil, 1)
	p.SetHash(a[0], 7)
	p.SetHash(b[0], 7)
	if got, ok := p.Lookup(7); !ok || got != a[0] {
		t.Fatalf("Lookup(7) = %d %v, want the first block %d", got, ok, a[0])
	}
	p.Free(a)
	p.Allocate(nil, 2) // the never-used block 2, then a[0], whose content is evicted
	got, ok := p.Lookup(7)
	if !ok || got != b[0] {
		t.Fatalf("after evicting block %d: Lookup(7) = %d %v, want %d (vLLM finds the second block)", a[0], got, ok, b[0])
	}
	if p.NumCached() != 1 || p.NumHashed() != 1 {
		t.Fatalf("NumCached = %d, NumHashed = %d, want 1 and 1", p.NumCached(), p.NumHashed())
	}
	p.CheckInvariants()
}

func BenchmarkPoolAllocateFree(b *testing.B) {
	p := NewPool(8192)
	buf := make([]BlockID, 0, 64)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf, _ = p.Allocate(buf[:0], 64)
		for j, blk := range buf {
			p.SetHash(blk, Hash(i*64+j+1))
		}
		p.Free(buf)
	}
}

// TestPoolLargeLazyMetadata allocates a large pool in a few calls, the metadata growing as blocks
// are handed out: blocks come out in id order from the never-used range, every one once, then
// from the free queue in LRU order.
func TestPoolLargeLazyMetadata(t *testing.T) {
	const n = 3*256 + 5
	p := NewPool(n)
	a, _ := p.Allocate(nil, 256+1)
	b, _ := p.Allocate(nil, n-len(a))
	for i, x := range append(append([]BlockID(nil), a...), b...) {
		if x != BlockID(i) {
			t.Fatalf("block %d handed out as %d", i, x)
		}
	}
	if _, ok := p.Allocate(nil, 1); ok || p.NumFree() != 0 {
		t.Fatalf("allocated past %d blocks (free %d)", n, p.NumFree())
	}
	p.SetHash(b[len(b)-1], 99)
	p.Free(b)
	p.Free(a)
	p.CheckInvariants()
	c, _ := p.Allocate(nil, 1) // b's tail block, freed first
	if c[0] != b[len(b)-1] {
		t.Fatalf("first reallocated block %d, want %d", c[0], b[len(b)-1])
	}
	if _, ok := p.Lookup(99); ok {
		t.Fatal("evicted content still cached")
	}
	p.CheckInvariants()
}

// TestPoolPendingOffsetsWrap: a pending list keeps its blocks' sequence numbers as 32-bit offsets
// from its base; one that would pass 32 bits is flushed first, and the blocks still enter the
// index in the order their contents were entered.
func TestPoolPendingOffsetsWrap(t *testing.T) {
	p := NewPool(4)
	bs, _ := p.Allocate(nil, 3)
	p.SetHashLazy(bs[0], 5, 1)
	p.seq += 1 << 32 // as if 4G contents were entered since the list was made
	p.SetHashLazy(bs[1], 5, 1)
	if _, ok := p.Lookup(5); !ok {
		t.Fatal("the list was not flushed before its offsets passed 32 bits")
	}
	p.SetHash(bs[2], 5)
	p.CheckInvariants()
	p.Flush(1)
	p.CheckInvariants()
	for _, want := range bs {
		got, ok := p.Lookup(5)
		if !ok || got != want {
			t.Fatalf("Lookup(5) = %d %v, want block %d (entry order)", got, ok, want)
		}
		p.Free([]BlockID{want})
		p.Allocate(nil, 2) // the never-used block, then want: its content evicted
		p.Free([]BlockID{3})
		p.CheckInvariants()
	}
}

// TestPoolHotReuseMatchesNaiveModel is TestPoolMatchesNaiveModel with Pool.ReuseHot: the pool may
// hand out another block without content than the naive model's, so the two are compared through
// a renaming (pool block -> model block) fixed whenever a block is handed out without content.
// Blocks allocated and given no content since may be freed with FreeBlank, which the model frees
// as Free; TakeAnonymous must hand out a block exactly when the model's next free block has no
// content, and the blocks it owes are named (TakeOwed) later.
// Blocks with content, and so every lookup, eviction and reference count, must agree exactly;
// the pool must never touch more blocks than it holds at its busiest.
func TestPoolHotReuseMatchesNaiveModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 24).Draw(t, "blocks")
		p := NewPool(n)
		p.ReuseHot = true
		ref := newNaive(n)
		name := map[BlockID]BlockID{} // pool block -> model block, for blocks held or holding content
		var held [][]BlockID          // pool blocks
		// blank[i] says held[i] was allocated and has had no content since: its blocks may be
		// freed with FreeBlank.
		var blank []bool
		// owed holds the model's blocks for those the pool handed out without naming them
		// (TakeAnonymous), not yet named (TakeOwed).
		var owed []BlockID
		hashes := rapid.SampledFrom([]Hash{1, 2, 3, 4, 5, 6, 7, 8})
		names := func(bs []BlockID) []BlockID {
			out := make([]BlockID, len(bs))
			for i, b := range bs {
				out[i] = name[b]
			}
			return out
		}
		t.Repeat(map[string]func(*rapid.T){
			"allocate": func(t *rapid.T) {
				k := rapid.IntRange(0, n+1).Draw(t, "k")
				var had []bool
				if k <= len(ref.free) {
					for _, w := range ref.free[:k] {
						_, c := ref.hashOf[w]
						had = append(had, c)
					}
				}
				got, ok := p.Allocate(nil, k)
				want, wok := ref.allocate(k)
				if ok != wok || len(got) != len(want) {
					t.Fatalf("Allocate(%d) = %v %v, want %v %v", k, got, ok, want, wok)
				}
				for i, b := range got {
					if had[i] && name[b] != want[i] {
						t.Fatalf("Allocate(%d)[%d] = %d (model %d), want the model's %d, which held content", k, i, b, name[b], want[i])
					}
					name[b] = want[i]
				}
				if ok && k > 0 {
					held = append(held, got)
					blank = append(blank, true)
				}
			},
			"free": func(t *rapid.T) {
				if len(held) == 0 {
					t.Skip("nothing held")
				}
				i := rapid.IntRange(0, len(held)-1).Draw(t, "i")
				ref.freeBlocks(names(held[i]))
				p.Free(held[i])
				held = slices.Delete(held, i, i+1)
				blank = slices.Delete(blank, i, i+1)
			},
			"freeBlank": func(t *rapid.T) {
				var can []int
				for i, ok := range blank {
					if ok {
						can = append(can, i)
					}
				}
				if len(can) == 0 {
					t.Skip("nothing held without content")
				}
				i := rapid.SampledFrom(can).Draw(t, "i")
				ref.freeBlocks(names(held[i]))
				p.FreeBlank(held[i])
				held = slices.Delete(held, i, i+1)
				blank = slices.Delete(blank, i, i+1)
			},
			"takeAnonymous": func(t *rapid.T) {
				var front Hash
				if len(ref.free) > 0 {
					front = ref.hashOf[ref.free[0]]
				}
				if !p.TakeAnonymous() {
					if len(ref.free) > 0 && front == 0 {
						t.Fatalf("TakeAnonymous refused with the model's next free block %d without content", ref.free[0])
					}
					return
				}
				if front != 0 {
					t.Fatalf("TakeAnonymous handed out a block where the model's next free one holds %x", front)
				}
				w, _ := ref.allocate(1)
				owed = append(owed, w[0])
			},
			"takeOwed": func(t *rapid.T) {
				if len(owed) == 0 {
					t.Skip("nothing owed")
				}
				k := rapid.IntRange(1, len(owed)).Draw(t, "k")
				got := p.TakeOwed(nil, k)
				if len(got) != k {
					t.Fatalf("TakeOwed(%d) named %d blocks", k, len(got))
				}
				for i, b := range got {
					if p.Ref(b) != 1 || p.hashOf(b) != 0 {
						t.Fatalf("owed block %d named with ref %d, hash %x", b, p.Ref(b), p.hashOf(b))
					}
					name[b] = owed[len(owed)-k+i]
				}
				owed = owed[:len(owed)-k]
				held = append(held, got)
				blank = append(blank, true)
			},
			"hashLazy": func(t *rapid.T) {
				if len(held) == 0 {
					t.Skip("nothing held")
				}
				i := rapid.IntRange(0, len(held)-1).Draw(t, "i")
				j := rapid.IntRange(0, len(held[i])-1).Draw(t, "j")
				h := hashes.Draw(t, "h")
				p.SetHashLazy(held[i][j], h, uint64(h%3))
				ref.setHash(name[held[i][j]], h)
				blank[i] = false
			},
			"hitAndTouch": func(t *rapid.T) {
				h := hashes.Draw(t, "h")
				p.Flush(uint64(h % 3))
				b, ok := p.Lookup(h)
				wb, wok := ref.lookup(h)
				if ok != wok || (ok && name[b] != wb) {
					t.Fatalf("Lookup(%d) = %d (model %d) %v, want %d %v", h, b, name[b], ok, wb, wok)
				}
				if ok {
					p.Touch(b)
					ref.touch(wb)
					held = append(held, []BlockID{b})
					blank = append(blank, false)
				}
			},
			"detached": func(t *rapid.T) {
				h := hashes.Draw(t, "h")
				p.CacheDetached(h, uint64(h%3))
				ref.cacheDetached(h)
				if b, ok := p.Lookup(h); ok {
					if wb, wok := ref.lookup(h); wok {
						name[b] = wb
					}
				}
			},
			"": func(t *rapid.T) {
				p.CheckInvariants()
				if p.NumFree() != len(ref.free) || p.NumHashed() != len(ref.hashOf) {
					t.Fatalf("NumFree %d, NumHashed %d, want %d and %d", p.NumFree(), p.NumHashed(), len(ref.free), len(ref.hashOf))
				}
				for _, bs := range held {
					for _, b := range bs {
						if p.Ref(b) != ref.ref[name[b]] {
							t.Fatalf("Ref(%d) = %d, want the model's %d: %d", b, p.Ref(b), name[b], ref.ref[name[b]])
						}
					}
				}
			},
		})
		for _, h := range held {
			p.Free(h)
		}
		if len(owed) > 0 {
			p.Free(p.TakeOwed(nil, len(owed)))
		}
		if p.NumFree() != n {
			t.Fatalf("after freeing everything NumFree = %d, want %d", p.NumFree(), n)
		}
		p.CheckInvariants()
	})
}

// TestPoolHotReuseStaysSmall: blocks freed without content are handed out again, most recently
// freed first, so a pool of 100,000 blocks cycled by requests of at most 15 blocks touches 15 (its
// metadata stays small and cached), and the blocks that hold content still age out in order.
func TestPoolHotReuseStaysSmall(t *testing.T) {
	p := NewPool(100_000)
	p.ReuseHot = true
	for range 1000 {
		a, _ := p.Allocate(nil, 10)
		b, _ := p.Allocate(nil, 5)
		p.Free(a)
		p.Free(b)
	}
	if p.used != 15 || len(p.meta) > 256 {
		t.Errorf("%d blocks handed out, metadata for %d: want 15 and at most 256", p.used, len(p.meta))
	}
	p.CheckInvariants()
	c, _ := p.Allocate(nil, 1)
	p.SetHash(c[0], 42)
	p.Free(c)
	for range 99_998 / 2 {
		a, _ := p.Allocate(nil, 2)
		p.Free(a)
	}
	if _, ok := p.Lookup(42); !ok {
		t.Error("content evicted before 99,999 blocks were handed out after it")
	}
	a, _ := p.Allocate(nil, 2)
	p.Free(a)
	if _, ok := p.Lookup(42); ok {
		t.Error("content still cached after the whole queue passed over it")
	}
	p.CheckInvariants()
}
