package kvcache

import "fmt"

// BlockID indexes a block in the pool.
type BlockID int32

// NoBlock marks an empty link.
const NoBlock BlockID = -1

// Hash identifies a block's content: the chained hash of all tokens up to and including the
// block, salted with the group it belongs to. Zero means "not hashed".
type Hash uint64

type blockMeta struct {
	ref        int32
	prev, next BlockID // free-queue links (valid while ref == 0)
	// dupPrev, dupNext link the blocks cached under the same hash, oldest first (valid while
	// hash != 0).
	dupPrev, dupNext BlockID
	hash             Hash
	inFree           bool
}

// Pool is vLLM's BlockPool: a fixed number of equal blocks shared by every KV-cache group, a free
// queue ordered least-recently-used first, and a map from content hash to the blocks cached with
// that content (vLLM's BlockHashToBlockMap: every block stays findable, not only the first).
//
// A free block may still hold cached content; it is evicted (its hash dropped) only when it is
// handed out again. Touching a cached free block takes it off the free queue.
//
// The blocks never handed out are the head of the free queue, in id order, as vLLM's queue starts
// (0, 1, ..., n-1). They are kept as a range, not linked, and get their metadata when first
// handed out, so a new pool costs nothing per block: a run that uses a few blocks of a large
// cache does not pay for the rest.
type Pool struct {
	meta       []blockMeta // blocks 0 .. len(meta)-1 have been handed out at least once
	numBlocks  int
	head, tail BlockID // the linked part of the free queue, after the fresh blocks
	numFree    int     // fresh blocks plus the linked queue
	// cached maps a hash to the oldest block holding it; the others follow through dupNext.
	cached    hashTable
	numHashed int
	// gen changes whenever the set of cached hashes changes, so a prefix lookup can be reused.
	gen uint64
	// Stats.
	Evictions int64
}

// NewPool returns a pool of n free, empty blocks.
func NewPool(n int) *Pool {
	return &Pool{numBlocks: n, head: NoBlock, tail: NoBlock, numFree: n}
}

// NumBlocks is the pool size.
func (p *Pool) NumBlocks() int { return p.numBlocks }

// NumFree is the number of blocks that can be handed out (free, cached or not).
func (p *Pool) NumFree() int { return p.numFree }

// NumCached is the number of blocks holding hashed content (several blocks may hold the same).
func (p *Pool) NumCached() int { return p.numHashed }

// Usage is the fraction of blocks referenced by requests.
func (p *Pool) Usage() float64 {
	if p.numBlocks == 0 {
		return 0
	}
	return 1 - float64(p.numFree)/float64(p.numBlocks)
}

func (p *Pool) pushTail(b BlockID) {
	m := &p.meta[b]
	m.prev, m.next, m.inFree = p.tail, NoBlock, true
	if p.tail != NoBlock {
		p.meta[p.tail].next = b
	} else {
		p.head = b
	}
	p.tail = b
	p.numFree++
}

func (p *Pool) unlink(b BlockID) {
	m := &p.meta[b]
	if !m.inFree {
		panic(fmt.Sprintf("kvcache: unlink of block %d that is not free", b))
	}
	if m.prev != NoBlock {
		p.meta[m.prev].next = m.next
	} else {
		p.head = m.next
	}
	if m.next != NoBlock {
		p.meta[m.next].prev = m.prev
	} else {
		p.tail = m.prev
	}
	m.prev, m.next, m.inFree = NoBlock, NoBlock, false
	p.numFree--
}

// popFree takes the least recently used free block and evicts its cached content.
func (p *Pool) popFree() BlockID {
	if len(p.meta) < p.numBlocks {
		// A block never handed out: the head of the queue, with nothing cached.
		b := BlockID(len(p.meta))
		p.meta = append(p.meta, blockMeta{prev: NoBlock, next: NoBlock})
		p.numFree--
		return b
	}
	b := p.head
	if b == NoBlock {
		panic("kvcache: popFree on an empty free queue")
	}
	p.unlink(b)
	p.evict(b)
	return b
}

func (p *Pool) evict(b BlockID) {
	if p.meta[b].hash != 0 {
		p.unhash(b)
		p.Evictions++
	}
}

// hash enters block b under content h, after the blocks already cached with h (vLLM's
// BlockHashToBlockMap.insert).
func (p *Pool) hash(b BlockID, h Hash) {
	m := &p.meta[b]
	m.hash, m.dupPrev, m.dupNext = h, NoBlock, NoBlock
	if first, dup := p.cached.insert(h, b); dup {
		last := first
		for p.meta[last].dupNext != NoBlock {
			last = p.meta[last].dupNext
		}
		p.meta[last].dupNext = b
		m.dupPrev = last
	}
	p.numHashed++
	p.gen++
}

// unhash drops block b's content; the other blocks with the same content stay cached (vLLM's
// BlockHashToBlockMap.pop with the block's id).
func (p *Pool) unhash(b BlockID) {
	m := &p.meta[b]
	switch {
	case m.dupPrev != NoBlock:
		p.meta[m.dupPrev].dupNext = m.dupNext
	case m.dupNext != NoBlock:
		p.cached.set(m.hash, m.dupNext)
	default:
		p.cached.del(m.hash)
	}
	if m.dupNext != NoBlock {
		p.meta[m.dupNext].dupPrev = m.dupPrev
	}
	m.hash, m.dupPrev, m.dupNext = 0, NoBlock, NoBlock
	p.numHashed--
	p.gen++
}

// Allocate appends n fresh blocks to dst. It returns false (and allocates nothing) when fewer than n
// blocks are free.
func (p *Pool) Allocate(dst []BlockID, n int) ([]BlockID, bool) {
	if n > p.numFree {
		return dst, false
	}
	for i := 0; i < n; i++ {
		b := p.popFree()
		p.meta[b].ref = 1
		dst = append(dst, b)
	}
	return dst, true
}

// Lookup returns a cached block with hash h: the oldest of them (vLLM's
// BlockHashToBlockMap.get_one_block returns the first in insertion order).
func (p *Pool) Lookup(h Hash) (BlockID, bool) {
	return p.cached.get(h)
}

// Touch takes a reference on a cached block found by Lookup, taking it off the free queue if no
// request held it.
func (p *Pool) Touch(b BlockID) {
	m := &p.meta[b]
	if m.ref == 0 {
		p.unlink(b)
	}
	m.ref++
}

// IsFree reports whether block b is on the free queue (counted by NumFree).
func (p *Pool) IsFree(b BlockID) bool { return p.meta[b].inFree }

// SetHash records that block b now holds content h, making it findable by Lookup. When other
// blocks already hold h, b joins them: vLLM does not deduplicate, and keeps every block in its
// BlockHashToBlockMap (vllm/v1/core/block_pool.py, cache_full_blocks), so evicting one leaves the
// content findable in the others.
func (p *Pool) SetHash(b BlockID, h Hash) {
	if p.meta[b].hash != 0 || h == 0 {
		return
	}
	p.hash(b, h)
}

// Free drops one reference on each block. Blocks whose count reaches zero join the free queue in
// reverse order, so a request's tail blocks are evicted before its head (vLLM's free order).
func (p *Pool) Free(blocks []BlockID) {
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		m := &p.meta[b]
		if m.ref <= 0 {
			panic(fmt.Sprintf("kvcache: double free of block %d", b))
		}
		m.ref--
		if m.ref == 0 {
			p.pushTail(b)
		}
	}
}

// CacheDetached stores content h in a block that no request holds: the least recently used free
// block is overwritten and rejoins the queue as most recently used. This is how a recurrent-state
// checkpoint at a block boundary stays in the prefix cache after the request moves on. It does
// nothing when h is already cached or no block is free.
func (p *Pool) CacheDetached(h Hash) {
	if h == 0 || p.numFree == 0 {
		return
	}
	if _, ok := p.cached.get(h); ok {
		return
	}
	b := p.popFree()
	p.hash(b, h)
	p.pushTail(b)
}

// freeQueue lists the free queue, least recently used first (tests only).
func (p *Pool) freeQueue() []BlockID {
	var q []BlockID
	for b := len(p.meta); b < p.numBlocks; b++ {
		q = append(q, BlockID(b))
	}
	for b := p.head; b != NoBlock; b = p.meta[b].next {
		q = append(q, b)
	}
	return q
}

// Ref returns the reference count of block b (for tests and invariant checks).
func (p *Pool) Ref(b BlockID) int {
	if int(b) >= len(p.meta) {
		return 0 // never handed out
	}
	return int(p.meta[b].ref)
}

// CheckInvariants verifies the free queue and counts; it panics on a broken invariant.
func (p *Pool) CheckInvariants() {
	n := p.numBlocks - len(p.meta) // fresh blocks
	for b := p.head; b != NoBlock; b = p.meta[b].next {
		if p.meta[b].ref != 0 || !p.meta[b].inFree {
			panic(fmt.Sprintf("kvcache: block %d in free queue with ref %d", b, p.meta[b].ref))
		}
		n++
		if n > p.numBlocks {
			panic("kvcache: free queue has a cycle")
		}
	}
	if n != p.numFree {
		panic(fmt.Sprintf("kvcache: free queue length %d != numFree %d", n, p.numFree))
	}
	hashed, entries := 0, 0
	p.cached.each(func(h Hash, b BlockID) {
		entries++
		if p.meta[b].dupPrev != NoBlock {
			panic(fmt.Sprintf("kvcache: block %d is first for hash %x but has a predecessor", b, h))
		}
		for x, prev := b, NoBlock; x != NoBlock; prev, x = x, p.meta[x].dupNext {
			if p.meta[x].hash != h || p.meta[x].dupPrev != prev {
				panic(fmt.Sprintf("kvcache: cached map says block %d holds %x, block says %x", x, h, p.meta[x].hash))
			}
			hashed++
			if hashed > len(p.meta) {
				panic("kvcache: duplicate list has a cycle")
			}
		}
	})
	if entries != p.cached.n {
		panic(fmt.Sprintf("kvcache: hash table counts %d entries, holds %d", p.cached.n, entries))
	}
	if hashed != p.numHashed {
		panic(fmt.Sprintf("kvcache: %d blocks in the hash lists, %d counted", hashed, p.numHashed))
	}
}
