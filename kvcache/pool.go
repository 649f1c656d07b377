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
	hash       Hash
	inFree     bool
}

// Pool is vLLM's BlockPool: a fixed number of equal blocks shared by every KV-cache group, a free
// queue ordered least-recently-used first, and a map from content hash to cached block.
//
// A free block may still hold cached content; it is evicted (its hash dropped) only when it is
// handed out again. Touching a cached free block takes it off the free queue. Several blocks may
// hold the same content (requests that computed it each keep their own, as in vLLM's
// BlockHashToBlockMap): one is the entry Lookup returns, the others wait in dups and take over
// when it is evicted, so the content stays cached while any copy does.
type Pool struct {
	meta       []blockMeta
	head, tail BlockID
	numFree    int
	cached     map[Hash]BlockID
	dups       map[Hash][]BlockID
	// gen changes whenever the set of cached hashes changes, so a prefix lookup can be reused.
	gen uint64
	// Stats.
	Evictions int64
}

// NewPool returns a pool of n free, empty blocks.
func NewPool(n int) *Pool {
	p := &Pool{meta: make([]blockMeta, n), head: NoBlock, tail: NoBlock, cached: make(map[Hash]BlockID), dups: make(map[Hash][]BlockID)}
	for i := 0; i < n; i++ {
		p.pushTail(BlockID(i))
	}
	return p
}

// NumBlocks is the pool size.
func (p *Pool) NumBlocks() int { return len(p.meta) }

// NumFree is the number of blocks that can be handed out (free, cached or not).
func (p *Pool) NumFree() int { return p.numFree }

// NumCached is the number of distinct contents cached.
func (p *Pool) NumCached() int { return len(p.cached) }

// Usage is the fraction of blocks referenced by requests.
func (p *Pool) Usage() float64 {
	if len(p.meta) == 0 {
		return 0
	}
	return 1 - float64(p.numFree)/float64(len(p.meta))
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
	b := p.head
	if b == NoBlock {
		panic("kvcache: popFree on an empty free queue")
	}
	p.unlink(b)
	p.evict(b)
	return b
}

// evict drops block b's content. When b was the entry of its content and another block holds the
// same content, the most recently hashed copy becomes the entry.
func (p *Pool) evict(b BlockID) {
	m := &p.meta[b]
	if m.hash == 0 {
		return
	}
	h := m.hash
	m.hash = 0
	p.Evictions++
	d := p.dups[h]
	if p.cached[h] != b {
		for i, x := range d {
			if x == b {
				d = append(d[:i], d[i+1:]...)
				break
			}
		}
	} else if len(d) > 0 {
		p.cached[h] = d[len(d)-1]
		d = d[:len(d)-1]
		p.gen++ // Lookup now returns another block
	} else {
		delete(p.cached, h)
		p.gen++
	}
	if len(d) == 0 {
		delete(p.dups, h)
	} else {
		p.dups[h] = d
	}
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

// Lookup returns the cached block with hash h.
func (p *Pool) Lookup(h Hash) (BlockID, bool) {
	b, ok := p.cached[h]
	return b, ok
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

// SetHash records that block b now holds content h, making it findable by Lookup. When another
// block already holds h it keeps the entry, and b becomes a copy that takes over if that block is
// evicted first (vLLM does not deduplicate either).
func (p *Pool) SetHash(b BlockID, h Hash) {
	m := &p.meta[b]
	if m.hash != 0 || h == 0 {
		return
	}
	m.hash = h
	if _, dup := p.cached[h]; dup {
		p.dups[h] = append(p.dups[h], b)
		return
	}
	p.cached[h] = b
	p.gen++
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
// checkpoint at a block boundary stays in the prefix cache after the request moves on. When h is
// already cached in a free block, that block becomes the most recently used instead (the content
// was just computed again: vLLM would cache the new copy); nothing happens when no block is free.
func (p *Pool) CacheDetached(h Hash) {
	if h == 0 || p.head == NoBlock {
		return
	}
	if b, ok := p.cached[h]; ok {
		if p.meta[b].inFree {
			p.unlink(b)
			p.pushTail(b)
		}
		return
	}
	b := p.popFree()
	p.meta[b].hash = h
	p.cached[h] = b
	p.gen++
	p.pushTail(b)
}

// Ref returns the reference count of block b (for tests and invariant checks).
func (p *Pool) Ref(b BlockID) int { return int(p.meta[b].ref) }

// CheckInvariants verifies the free queue and counts; it panics on a broken invariant.
func (p *Pool) CheckInvariants() {
	n := 0
	for b := p.head; b != NoBlock; b = p.meta[b].next {
		if p.meta[b].ref != 0 || !p.meta[b].inFree {
			panic(fmt.Sprintf("kvcache: block %d in free queue with ref %d", b, p.meta[b].ref))
		}
		n++
		if n > len(p.meta) {
			panic("kvcache: free queue has a cycle")
		}
	}
	if n != p.numFree {
		panic(fmt.Sprintf("kvcache: free queue length %d != numFree %d", n, p.numFree))
	}
	for h, b := range p.cached {
		if p.meta[b].hash != h {
			panic(fmt.Sprintf("kvcache: cached map says block %d holds %x, block says %x", b, h, p.meta[b].hash))
		}
	}
	for h, d := range p.dups {
		if _, ok := p.cached[h]; !ok || len(d) == 0 {
			panic(fmt.Sprintf("kvcache: copies of %x without an entry", h))
		}
		for _, b := range d {
			if p.meta[b].hash != h || p.cached[h] == b {
				panic(fmt.Sprintf("kvcache: copy block %d of %x holds %x", b, h, p.meta[b].hash))
			}
		}
	}
}
