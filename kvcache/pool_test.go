package kvcache

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// naivePool is the reference model of Pool: a slice for the LRU free queue, maps for references
// and cached content, and for each content the other blocks holding it in the order they were
// hashed. It is slow and obviously right.
type naivePool struct {
	n      int
	free   []BlockID // LRU order: front is evicted first
	ref    map[BlockID]int
	hashOf map[BlockID]Hash
	cached map[Hash]BlockID
	copies map[Hash][]BlockID
}

func newNaive(n int) *naivePool {
	p := &naivePool{n: n, ref: map[BlockID]int{}, hashOf: map[BlockID]Hash{}, cached: map[Hash]BlockID{}, copies: map[Hash][]BlockID{}}
	for i := 0; i < n; i++ {
		p.free = append(p.free, BlockID(i))
	}
	return p
}

// evict drops b's content; the most recently hashed copy of it, if any, becomes the entry.
func (p *naivePool) evict(b BlockID) {
	h, ok := p.hashOf[b]
	if !ok {
		return
	}
	delete(p.hashOf, b)
	c := p.copies[h]
	switch {
	case p.cached[h] != b:
		c = slices.DeleteFunc(c, func(x BlockID) bool { return x == b })
	case len(c) > 0:
		p.cached[h], c = c[len(c)-1], c[:len(c)-1]
	default:
		delete(p.cached, h)
	}
	p.copies[h] = c
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
	if _, dup := p.cached[h]; dup {
		p.copies[h] = append(p.copies[h], b)
		return
	}
	p.cached[h] = b
}

func (p *naivePool) cacheDetached(h Hash) {
	if h == 0 || len(p.free) == 0 {
		return
	}
	if b, ok := p.cached[h]; ok {
		if i := slices.Index(p.free, b); i >= 0 {
			p.free = append(slices.Delete(p.free, i, i+1), b)
		}
		return
	}
	b := p.free[0]
	p.free = p.free[1:]
	p.evict(b)
	p.hashOf[b] = h
	p.cached[h] = b
	p.free = append(p.free, b)
}

// TestPoolMatchesNaiveModel drives Pool and the naive model with the same random operations and
// checks they agree on every observable: which blocks are handed out, free counts, cache lookups,
// reference counts. rapid prints the failing seed and a shrunk operation sequence.
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
			"hitAndTouch": func(t *rapid.T) {
				h := hashes.Draw(t, "h")
				b, ok := p.Lookup(h)
				wb, wok := ref.cached[h]
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
				p.CacheDetached(h)
				ref.cacheDetached(h)
			},
			"": func(t *rapid.T) {
				p.CheckInvariants()
				if p.NumFree() != len(ref.free) {
					t.Fatalf("NumFree = %d, want %d", p.NumFree(), len(ref.free))
				}
				if p.NumCached() != len(ref.cached) {
					t.Fatalf("NumCached = %d, want %d", p.NumCached(), len(ref.cached))
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
