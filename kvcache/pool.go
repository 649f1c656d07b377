package kvcache

import (
	"fmt"
	"math"
	"slices"
)

// BlockID indexes a block in the pool.
type BlockID int32

// NoBlock marks an empty link.
const NoBlock BlockID = -1

// Hash identifies a block's content: the chained hash of all tokens up to and including the
// block, salted with the group it belongs to. Zero means "not hashed".
type Hash uint64

// blockMeta is what the pool keeps per block, 32 bytes (two blocks a cache line): the fields
// every allocation and free touch. The order in which contents were entered (seq) is kept apart,
// in Pool.seqs: only entering a block in the index reads it.
type blockMeta struct {
	ref int32
	// qs is the index plus one of the block's entry in the free queue (Pool.q), 0 when it is
	// not on the queue: an entry at another index than its block's is stale (the block was
	// taken off, and maybe queued again further on).
	qs uint32
	// dupPrev, dupNext link the blocks cached under the same hash, oldest first (valid while
	// hash != 0 and not pending); while pending, dupPrev is the index of its entry in its
	// pending list.
	dupPrev, dupNext BlockID
	// list is the pending list the block is on plus one; 0 when it is not pending (its content
	// was not entered with SetHashLazy, or has since entered the index).
	list int32
	// src is, for a block entered with setChainRunLazy and still pending, its chain source plus
	// one, and hash is then its block index plus one: the hash is computed only if the block
	// enters the index. 0 otherwise (hash is the content hash).
	src  int32
	hash Hash
}

// chainSrc is where the hashes of pending blocks come from: a request's content, a block size and
// a group salt. Its hashes are computed only when one of its blocks enters the index, walking
// the chain from the last one computed (last, of block lastJ; blocks enter in chain order);
// refs counts its pending blocks, plus one while a table commits into it.
type chainSrc struct {
	c     Content
	bt    int
	salt  uint64
	last  uint64
	lastJ int32
	refs  int32
}

// pendList is the blocks of one content key entered with SetHashLazy and not yet flushed, oldest
// first, with when each was entered. An entry is live while its block is pending on this list
// with this entry's index (blockMeta.dupPrev); an evicted block just leaves a stale entry, so
// evicting touches no other block. live counts the live entries; the list is dropped when it
// reaches zero, and compacted when stale entries would make it grow. An entry keeps its block's
// sequence number as an offset from base (the pool's seq when the list was made), 8 bytes an
// entry; a list whose offsets would pass 32 bits is flushed first (pendList).
type pendList struct {
	key  uint64
	base uint64
	live int32
	ents []pendEnt
}

type pendEnt struct {
	b BlockID
	d uint32 // the block's seq minus the list's base
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
	// meta holds the metadata of blocks 0 .. used-1, those handed out at least once (and zeros
	// after them), flat: the hot loops index it directly. It is made as blocks are handed out,
	// doubling from 256 blocks until it would hold an eighth of the pool, then at once for the
	// whole pool: a run that uses a few blocks of a large cache does not clear metadata for the
	// rest, and one that uses them all allocates at most 1.25 times the final array. seqs, in
	// chunks of chunkLen blocks, holds when block b's content was entered (SetHash and
	// SetHashLazy order), valid while it is in the index; a pending block's is in its list entry.
	// A seqs chunk is made when one of its blocks first enters the index: a run in which no
	// block does (private prompts) makes none.
	meta      []blockMeta
	seqs      []*seqChunk
	used      int
	numBlocks int
	// head is how many entries at the head of the free queue stand for blocks never handed out
	// (numBlocks - used without ReuseHot).
	head int
	// ReuseHot: a block freed without content is interchangeable with any other such block (no
	// lookup can find it, allocation evicts nothing from it), so its place in the free queue is
	// held by an anonymous entry (NoBlock) and the block goes on the spare stack. An anonymous
	// entry, or one of the head's, reaching the front hands out the most recently freed spare
	// block, whose metadata is still in the processor's caches, or else a block never handed out.
	// Which content is cached and when it is evicted are as without it; only which ids the
	// blocks without content get differ, and the pool touches no more blocks than it holds at its
	// busiest (package sim's fast mode turns it on; set it before the first allocation).
	ReuseHot bool
	spare    []BlockID
	// blank holds spare blocks freed by FreeBlank, whose metadata was not touched: it still says
	// what Allocate leaves (one reference, not queued, no content), so Allocate hands them out
	// without touching it either. Under ReuseHot only.
	blank []BlockID
	// owed counts blocks handed out by TakeAnonymous and not yet named (TakeOwed): each stands
	// for one of the spare, blank or never handed out blocks.
	owed int
	// q[qh:] is the part of the free queue after the fresh blocks, least recently used first,
	// with stale entries (blocks taken off the queue by Touch) left in place and skipped: popping
	// reads the queue in order instead of chasing links from block to block. Entry i is live
	// when its block's qs is i+1: an entry holds only the block, 4 bytes. The queue is compacted
	// (its live entries renumbered) when stale entries fill it, and restarts at index 0 when
	// popping empties it.
	q  []BlockID
	qh int
	// tail is how many anonymous entries end the free queue after q, kept as a count: a run
	// whose freed blocks never hold content (FreeBlank, spare blocks) never writes or reads q.
	// An entry with a block after them writes them out first (flushTail).
	tail    int
	numFree int // fresh blocks, the live entries of q and the tail
	// cached maps a hash to the oldest block holding it; the others follow through dupNext.
	cached    hashTable
	numHashed int
	seq       uint64
	// lists indexes, by content key, the lists of blocks entered with SetHashLazy that no lookup
	// has needed yet (pendList in slots of pend, free slots in pendFree). A pending block's
	// entry goes stale when it is evicted, a list is dropped when it has no live entry and
	// compacted before stale entries make it grow, so the lists stay within twice the blocks.
	lists    keyTable
	pend     []pendList
	pendFree []int32
	lastKey  uint64 // the key of the last SetHashLazy and its list: consecutive calls share it
	lastList int32
	// srcs holds the chain sources of pending blocks (setChainRunLazy), free slots in srcFree.
	srcs    []chainSrc
	srcFree []int32
	// gen changes whenever the index changes (a block enters or leaves it), so a prefix lookup
	// can be reused: after flushing its keys, a request's lookups see only the index.
	gen uint64
	// Stats.
	Evictions int64
}

// chunkBits sets the blocks per seqs chunk, chunkLen: 256 blocks, 2 KiB.
const (
	chunkBits = 8
	chunkLen  = 1 << chunkBits
	chunkMask = chunkLen - 1
)

type seqChunk [chunkLen]uint64

// m returns block b's metadata.
func (p *Pool) m(b BlockID) *blockMeta { return &p.meta[b] }

// seqOf returns where block b's sequence number is kept, making its chunk if needed.
func (p *Pool) seqOf(b BlockID) *uint64 {
	c := p.seqs[b>>chunkBits]
	if c == nil {
		c = new(seqChunk)
		p.seqs[b>>chunkBits] = c
	}
	return &c[b&chunkMask]
}

// NewPool returns a pool of n free, empty blocks.
func NewPool(n int) *Pool {
	k := (n + chunkMask) >> chunkBits
	p := &Pool{numBlocks: n, numFree: n, head: n, lastList: -1, seqs: make([]*seqChunk, k)}
	return p
}

// NumBlocks is the pool size.
func (p *Pool) NumBlocks() int { return p.numBlocks }

// NumFree is the number of blocks that can be handed out (free, cached or not).
func (p *Pool) NumFree() int { return p.numFree }

// NumCached is the number of distinct contents cached (several blocks may hold the same). It
// enters the pending blocks in the index to count them (tests and diagnostics).
func (p *Pool) NumCached() int {
	p.flushAll()
	return p.cached.n
}

// NumHashed is the number of blocks holding cached content, copies included.
func (p *Pool) NumHashed() int { return p.numHashed }

// Usage is the fraction of blocks referenced by requests.
func (p *Pool) Usage() float64 {
	if p.numBlocks == 0 {
		return 0
	}
	return 1 - float64(p.numFree)/float64(p.numBlocks)
}

// pushTail puts block b, which is not on the free queue, at its tail (most recently used).
func (p *Pool) pushTail(b BlockID) {
	p.flushTail(1)
	p.q = append(p.q, b)
	p.m(b).qs = uint32(len(p.q))
	p.numFree++
}

// flushTail writes the tail's anonymous entries into q, making room for extra more entries after
// them: an entry with a block is about to follow.
func (p *Pool) flushTail(extra int) {
	if len(p.q)+p.tail+extra > cap(p.q) {
		p.compact(p.tail + extra)
	}
	for ; p.tail > 0; p.tail-- {
		p.q = append(p.q, NoBlock)
	}
}

// compact drops the stale entries of the free queue, and makes room for extra more entries and
// for at least as many again as are live (so compacting costs O(1) per entry pushed).
func (p *Pool) compact(extra int) {
	live := p.numFree - p.head - p.tail
	q := p.q[:0]
	if c := max(2*(live+extra), 64); cap(p.q) < c {
		q = make([]BlockID, 0, c)
	}
	for i, b := range p.q[p.qh:] {
		if b == NoBlock {
			q = append(q, b) // anonymous: always live
		} else if m := p.m(b); m.qs == uint32(p.qh+i+1) {
			q = append(q, b)
			m.qs = uint32(len(q))
		}
	}
	if len(q) != live {
		panic(fmt.Sprintf("kvcache: free queue holds %d live blocks, %d counted", len(q), live))
	}
	p.q, p.qh = q, 0
}

// fresh hands out the first block never handed out, making room for its metadata if needed.
func (p *Pool) fresh() (BlockID, *blockMeta) {
	b := BlockID(p.used)
	p.used++
	if int(b) == len(p.meta) {
		p.growMeta()
	}
	m := &p.meta[b]
	m.dupPrev, m.dupNext = NoBlock, NoBlock
	return b, m
}

// spareQS marks a spare block's qs: free, its place in the queue held by an anonymous entry.
const spareQS = math.MaxUint32

// takeBlank hands out a block without content for an anonymous or head entry: the most recently
// freed spare block, else the first never handed out. Its metadata says it is not queued; the
// caller sets its references.
func (p *Pool) takeBlank() (BlockID, *blockMeta) {
	if b, ok := pop(&p.spare); ok {
		m := &p.meta[b]
		m.qs = 0
		return b, m
	}
	if b, ok := pop(&p.blank); ok {
		m := &p.meta[b]
		m.ref = 0
		return b, m
	}
	return p.fresh()
}

// takeHeld hands out a block without content for an anonymous or head entry with one reference,
// as Allocate wants it: one freed by FreeBlank if there is one (its metadata already says so, and
// is not touched), else takeBlank's.
func (p *Pool) takeHeld() BlockID {
	if b, ok := pop(&p.blank); ok {
		return b
	}
	b, m := p.takeBlank()
	m.ref = 1
	return b
}

// pop takes the last block of stack s, if it has one.
func pop(s *[]BlockID) (BlockID, bool) {
	k := len(*s)
	if k == 0 {
		return NoBlock, false
	}
	b := (*s)[k-1]
	*s = (*s)[:k-1]
	return b, true
}

// growMeta makes room for more block metadata: twice as much, from 256 blocks, or the whole
// pool once that would be an eighth of it.
func (p *Pool) growMeta() {
	c := min(p.numBlocks, max(2*len(p.meta), 256))
	if 8*c >= p.numBlocks {
		c = p.numBlocks
	}
	meta := make([]blockMeta, c)
	copy(meta, p.meta)
	p.meta = meta
}

// unlink takes block b off the free queue; its entry goes stale.
func (p *Pool) unlink(b BlockID) {
	m := p.m(b)
	if m.qs == 0 {
		panic(fmt.Sprintf("kvcache: unlink of block %d that is not free", b))
	}
	m.qs = 0
	p.numFree--
}

// popFree takes the least recently used free block and evicts its cached content.
func (p *Pool) popFree() BlockID {
	if p.head > 0 {
		// A block never handed out: the head of the queue, with nothing cached.
		p.head--
		b, _ := p.takeBlank()
		p.numFree--
		return b
	}
	for p.qh < len(p.q) {
		b := p.q[p.qh]
		p.qh++
		if b == NoBlock {
			p.numFree--
			if p.qh == len(p.q) {
				p.q, p.qh = p.q[:0], 0
			}
			b, _ = p.takeBlank()
			return b
		}
		m := p.m(b)
		if m.qs != uint32(p.qh) {
			continue // taken off the queue since
		}
		m.qs = 0
		p.numFree--
		if p.qh == len(p.q) {
			p.q, p.qh = p.q[:0], 0
		}
		if m.hash != 0 {
			p.evict(b)
		}
		return b
	}
	if p.tail > 0 {
		p.tail--
		p.numFree--
		b, _ := p.takeBlank()
		return b
	}
	panic("kvcache: popFree on an empty free queue")
}

// evict drops block b's content; other blocks with the same content keep it cached.
func (p *Pool) evict(b BlockID) {
	if m := p.m(b); m.hash != 0 {
		p.evictHashed(b, m)
	}
}

// evictHashed is evict for block b, with metadata m, that holds content.
func (p *Pool) evictHashed(b BlockID, m *blockMeta) {
	p.Evictions++
	if m.list == 0 {
		p.unhash(b)
		return
	}
	// Pending: its list entry goes stale.
	li := m.list - 1
	m.list, m.dupPrev, m.hash = 0, NoBlock, 0
	p.numHashed--
	if s := m.src; s != 0 {
		m.src = 0
		p.releaseSrc(s - 1)
	}
	l := &p.pend[li]
	if l.live--; l.live == 0 {
		p.dropList(li)
	}
}

// hash enters block b under content h, among the blocks already cached with h in the order their
// contents were entered (vLLM's BlockHashToBlockMap.insert appends; a pending block enters the
// index later than younger ones may have, so its place is found by its sequence number).
func (p *Pool) hash(b BlockID, h Hash) {
	p.seq++
	*p.seqOf(b) = p.seq
	p.index(b, h)
	p.numHashed++
	p.gen++
}

// seqAt is the sequence number of block b, which is in the index or entering it.
func (p *Pool) seqAt(b BlockID) uint64 { return p.seqs[b>>chunkBits][b&chunkMask] }

// index links block b, whose seq is set, into h's list.
func (p *Pool) index(b BlockID, h Hash) {
	m := p.m(b)
	m.hash, m.list, m.dupPrev, m.dupNext = h, 0, NoBlock, NoBlock
	first, dup := p.cached.insert(h, b)
	if !dup {
		return
	}
	seq := p.seqAt(b)
	if p.seqAt(first) > seq {
		m.dupNext = first
		p.m(first).dupPrev = b
		p.cached.set(h, b)
		return
	}
	prev := first
	for next := p.m(prev).dupNext; next != NoBlock && p.seqAt(next) < seq; next = p.m(next).dupNext {
		prev = next
	}
	m.dupPrev, m.dupNext = prev, p.m(prev).dupNext
	if m.dupNext != NoBlock {
		p.m(m.dupNext).dupPrev = b
	}
	p.m(prev).dupNext = b
}

// SetHashLazy is SetHash for content that only requests with the content key key can look up
// (package kvcache keys a block by the content id its tokens come from: a shared prefix, a
// prompt, a request's own output). The block joins the index when Flush(key) is called, which a
// caller must do before looking up any hash of that key; until then it costs no index update,
// and nothing if it is evicted first. Lookups after Flush see exactly what SetHash would have
// given them, in the same order.
func (p *Pool) SetHashLazy(b BlockID, h Hash, key uint64) {
	m := p.m(b)
	if m.hash != 0 || h == 0 {
		return
	}
	m.hash = h
	p.pendBlock(b, m, key)
}

// newSrc returns a chain source for content c at block size bt with group salt salt, held by
// its caller until releaseSrc.
func (p *Pool) newSrc(c *Content, bt int, salt uint64) int32 {
	var i int32
	if k := len(p.srcFree); k > 0 {
		i = p.srcFree[k-1]
		p.srcFree = p.srcFree[:k-1]
	} else {
		i = int32(len(p.srcs))
		p.srcs = append(p.srcs, chainSrc{})
	}
	s := &p.srcs[i]
	*s = chainSrc{c: *c, bt: bt, salt: salt, lastJ: -1, refs: 1}
	return i
}

// releaseSrc drops one reference on chain source i.
func (p *Pool) releaseSrc(i int32) {
	s := &p.srcs[i]
	if s.refs--; s.refs == 0 {
		p.srcFree = append(p.srcFree, i)
	}
}

// srcHash is the hash of block j of chain source i: what Manager.blockHash gives the request.
func (p *Pool) srcHash(i int32, j int) Hash {
	s := &p.srcs[i]
	k, h := int(s.lastJ), s.last
	if j < k {
		k = -1 // an earlier block: from the start again
	}
	for ; k < j; k++ {
		parent := h
		if k < 0 {
			parent = chainSeed
		}
		h = mix(parent, s.c.blockKey(k+1, s.bt))
	}
	s.lastJ, s.last = int32(k), h
	return saltHash(s.salt, h)
}

// setChainRunLazy is SetHashLazy for blocks[k], block j0+k of chain source src, for every k,
// all under content key key: a block's hash is computed only if it enters the index (Flush),
// which a request with a private prompt never makes it do.
func (p *Pool) setChainRunLazy(blocks []BlockID, src int32, j0 int, key uint64) {
	li := p.pendList(key, len(blocks))
	l := &p.pend[li]
	if len(l.ents)+len(blocks) > cap(l.ents) {
		if int(l.live) <= len(l.ents)/2 {
			p.compactList(li)
		}
		l.ents = slices.Grow(l.ents, len(blocks))
	}
	ents, d, n, meta := l.ents, uint32(p.seq-l.base), int32(0), p.meta
	for k, b := range blocks {
		m := &meta[b]
		if m.hash != 0 {
			continue
		}
		d++
		m.hash, m.src, m.list, m.dupPrev, m.dupNext = Hash(j0+k+1), src+1, li+1, BlockID(len(ents)), NoBlock
		ents = append(ents, pendEnt{b, d})
		n++
	}
	l.ents = ents
	p.seq += uint64(n)
	l.live += n
	p.srcs[src].refs += n
	p.numHashed += int(n)
	if l.live == 0 {
		p.dropList(li) // made for nothing: every block already held content
	}
}

// pendList returns the pending list of key, made empty if it has none, with room in its
// offsets for n more blocks: a list whose offsets would pass 32 bits is flushed (the blocks
// enter the index, which Flush allows at any time) and a new one made.
func (p *Pool) pendList(key uint64, n int) int32 {
	if p.lastList < 0 || p.lastKey != key {
		p.lastKey, p.lastList = key, p.listFor(key)
	}
	if p.seq+uint64(n)-p.pend[p.lastList].base > math.MaxUint32 {
		p.Flush(key)
		p.lastKey, p.lastList = key, p.listFor(key)
	}
	return p.lastList
}

// pendBlock puts block b, whose content was just set, at the tail of key's pending list.
func (p *Pool) pendBlock(b BlockID, m *blockMeta, key uint64) {
	li := p.pendList(key, 1)
	l := &p.pend[li]
	if len(l.ents) == cap(l.ents) && int(l.live) <= len(l.ents)/2 {
		p.compactList(li)
	}
	p.seq++
	m.list, m.dupPrev, m.dupNext = li+1, BlockID(len(l.ents)), NoBlock
	l.ents = append(l.ents, pendEnt{b, uint32(p.seq - l.base)})
	l.live++
	p.numHashed++
}

// live reports whether entry k of pending list i is live.
func (p *Pool) live(i int32, k int, e pendEnt) bool {
	m := p.m(e.b)
	return m.list == i+1 && m.dupPrev == BlockID(k)
}

// compactList drops the stale entries of pending list i.
func (p *Pool) compactList(i int32) {
	l := &p.pend[i]
	n := 0
	for k, e := range l.ents {
		if p.live(i, k, e) {
			p.m(e.b).dupPrev = BlockID(n)
			l.ents[n] = e
			n++
		}
	}
	l.ents = l.ents[:n]
}

// listFor returns the pending list of key, made empty if it has none.
func (p *Pool) listFor(key uint64) int32 {
	if i, ok := p.lists.get(key); ok {
		return i
	}
	var i int32
	if k := len(p.pendFree); k > 0 {
		i = p.pendFree[k-1]
		p.pendFree = p.pendFree[:k-1]
	} else {
		i = int32(len(p.pend))
		p.pend = append(p.pend, pendList{})
	}
	l := &p.pend[i]
	l.key, l.base, l.live, l.ents = key, p.seq, 0, l.ents[:0]
	p.lists.put(key, i)
	return i
}

// dropList forgets the pending list i (empty or flushed).
func (p *Pool) dropList(i int32) {
	p.lists.del(p.pend[i].key)
	p.pendFree = append(p.pendFree, i)
	if p.lastList == i {
		p.lastList = -1
	}
}

// Forget drops the content of key's pending blocks: the caller knows no request will look the key
// up again (a finished request's prompt that no other request has). Nothing cached that a lookup
// could find changes; the blocks hold no content after it, so a block freed then is spare under
// ReuseHot.
func (p *Pool) Forget(key uint64) {
	i, ok := p.lists.get(key)
	if !ok {
		return
	}
	for k, e := range p.pend[i].ents {
		if !p.live(i, k, e) {
			continue
		}
		m := p.m(e.b)
		if s := m.src; s != 0 {
			m.src = 0
			p.releaseSrc(s - 1)
		}
		m.hash, m.list, m.dupPrev = 0, 0, NoBlock
		p.numHashed--
	}
	p.dropList(i)
}

// Flush enters the pending blocks of content key into the index.
func (p *Pool) Flush(key uint64) {
	i, ok := p.lists.get(key)
	if !ok {
		return
	}
	base := p.pend[i].base
	for k, e := range p.pend[i].ents {
		if !p.live(i, k, e) {
			continue
		}
		m := p.m(e.b)
		h := m.hash
		if s := m.src; s != 0 {
			h = p.srcHash(s-1, int(h)-1)
			m.src = 0
			p.releaseSrc(s - 1)
		}
		*p.seqOf(e.b) = base + uint64(e.d)
		p.index(e.b, h)
	}
	p.dropList(i)
	p.gen++
}

// unhash drops block b's content; the other blocks with the same content stay cached (vLLM's
// BlockHashToBlockMap.pop with the block's id).
func (p *Pool) unhash(b BlockID) {
	m := p.m(b)
	switch {
	case m.dupPrev != NoBlock:
		p.m(m.dupPrev).dupNext = m.dupNext
	case m.dupNext != NoBlock:
		p.cached.set(m.hash, m.dupNext)
	default:
		p.cached.del(m.hash)
	}
	if m.dupNext != NoBlock {
		p.m(m.dupNext).dupPrev = m.dupPrev
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
	dst = slices.Grow(dst, n)
	for ; n > 0 && p.head > 0; n-- {
		p.head--
		p.numFree--
		dst = append(dst, p.takeHeld()) // never handed out: the head of the queue
	}
	if n == 0 {
		return dst, true
	}
	// popFree over the queue, in one loop.
	p.numFree -= n
	q, qh, meta := p.q, p.qh, p.meta
	for n > 0 {
		if qh == len(q) {
			// The rest from the tail's anonymous entries.
			p.tail -= n
			for ; n > 0; n-- {
				dst = append(dst, p.takeHeld())
			}
			break
		}
		b := q[qh]
		qh++
		if b == NoBlock {
			// Anonymous: any block without content.
			dst = append(dst, p.takeHeld())
			meta = p.meta // takeHeld may have grown it
			n--
			continue
		}
		m := &meta[b]
		if m.qs != uint32(qh) {
			continue // taken off the queue since
		}
		m.qs, m.ref = 0, 1
		if m.hash != 0 {
			p.evictHashed(b, m)
		}
		dst = append(dst, b)
		n--
	}
	if qh == len(q) {
		p.q, p.qh = q[:0], 0
	} else {
		p.qh = qh
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
	m := p.m(b)
	if m.ref == 0 {
		p.unlink(b)
	}
	m.ref++
}

// IsFree reports whether block b is on the free queue (counted by NumFree).
func (p *Pool) IsFree(b BlockID) bool { return p.m(b).qs != 0 }

// SetHash records that block b now holds content h, making it findable by Lookup. When other
// blocks already hold h, b joins them: vLLM does not deduplicate, and keeps every block in its
// BlockHashToBlockMap (vllm/v1/core/block_pool.py, cache_full_blocks), so evicting one leaves the
// content findable in the others.
func (p *Pool) SetHash(b BlockID, h Hash) {
	if p.m(b).hash != 0 || h == 0 {
		return
	}
	p.hash(b, h)
}

// Free drops one reference on each block. Blocks whose count reaches zero join the free queue in
// reverse order, so a request's tail blocks are evicted before its head (vLLM's free order).
func (p *Pool) Free(blocks []BlockID) {
	// pushTail for each block reaching zero, in one loop: anonymous entries join the tail, which
	// is written out before the first entry with a block (making room in q for the rest).
	q, meta, tail, roomy := p.q, p.meta, p.tail, false
	n0 := len(q) + tail // entries numFree counts
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		m := &meta[b]
		if m.ref <= 0 {
			panic(fmt.Sprintf("kvcache: double free of block %d", b))
		}
		m.ref--
		if m.ref == 0 {
			if m.hash == 0 && p.ReuseHot {
				tail++
				m.qs = spareQS
				p.spare = append(p.spare, b)
				continue
			}
			if !roomy {
				p.numFree += tail - p.tail
				p.tail = tail
				p.flushTail(i + 1)
				q, tail, roomy = p.q, 0, true
				n0 = len(q)
			}
			for ; tail > 0; tail-- {
				q = append(q, NoBlock)
			}
			q = append(q, b)
			m.qs = uint32(len(q))
		}
	}
	p.q, p.tail = q, tail
	p.numFree += len(q) + tail - n0
}

// TakeAnonymous hands out one block as Allocate(nil, 1) would, if doing so touches no block: the
// block at the front of the free queue has no content (an anonymous entry, or one never handed
// out), so which block it is does not matter. The block is not named: the caller owes it, and
// names it with TakeOwed before it uses or frees the blocks it holds. It returns false (and hands
// out nothing) when the front of the queue holds content or nothing is free, or without ReuseHot.
func (p *Pool) TakeAnonymous() bool {
	if !p.ReuseHot || p.numFree == 0 {
		return false
	}
	if p.head > 0 {
		p.head--
	} else {
		for {
			if p.qh == len(p.q) {
				p.tail-- // numFree > 0: the tail holds the rest
				break
			}
			b := p.q[p.qh]
			if b != NoBlock && p.m(b).qs == uint32(p.qh+1) {
				return false // a free block that may hold content: Allocate would evict it
			}
			p.qh++ // anonymous, or stale (taken off the queue since): Allocate skips it too
			if b == NoBlock {
				break
			}
		}
		if p.qh == len(p.q) {
			p.q, p.qh = p.q[:0], 0
		}
	}
	p.numFree--
	p.owed++
	return true
}

// AnonymousAhead reports whether the next n blocks the pool hands out, by Allocate or
// TakeAnonymous in any order, are all blocks without content: then n calls of TakeAnonymous
// succeed, and interleaving them with allocations of the rest changes nothing.
func (p *Pool) AnonymousAhead(n int) bool {
	if !p.ReuseHot || n > p.numFree {
		return false
	}
	n -= p.head
	for i := p.qh; n > 0 && i < len(p.q); i++ {
		switch b := p.q[i]; {
		case b == NoBlock:
			n--
		case p.m(b).qs == uint32(i+1):
			return false // a free block that may hold content
		}
	}
	return n <= p.tail
}

// TakeOwed names n blocks handed out by TakeAnonymous, appending them to dst: blocks without
// content, with one reference.
func (p *Pool) TakeOwed(dst []BlockID, n int) []BlockID {
	if n > p.owed {
		panic(fmt.Sprintf("kvcache: %d blocks named, %d owed", n, p.owed))
	}
	p.owed -= n
	for range n {
		dst = append(dst, p.takeHeld())
	}
	return dst
}

// FreeBlank is Free for blocks the caller alone holds (one reference each) and that never held
// content in this holding: no lookup can reach them, so under ReuseHot each is interchangeable
// with any other block without content. Their places in the free queue are anonymous entries, in
// Free's order, and the blocks go to the blank stack without their metadata being read or
// written: a request's blocks were last touched when it allocated them, and in a fleet that is
// long out of the caches. Without ReuseHot it is Free.
func (p *Pool) FreeBlank(blocks []BlockID) {
	if !p.ReuseHot {
		p.Free(blocks)
		return
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		p.blank = append(p.blank, blocks[i])
	}
	p.tail += len(blocks)
	p.numFree += len(blocks)
}

// CacheDetached stores content h in a block that no request holds: the least recently used free
// block is overwritten and rejoins the queue as most recently used. This is how a recurrent-state
// checkpoint at a block boundary stays in the prefix cache after the request moves on. When h is
// already cached in a free block, that block becomes the most recently used instead (the content
// was just computed again: vLLM would cache the new copy); nothing happens when no block is free.
// key is h's content key (SetHashLazy).
func (p *Pool) CacheDetached(h Hash, key uint64) {
	if h == 0 || p.numFree == 0 {
		return
	}
	p.Flush(key)
	if b, ok := p.cached.get(h); ok {
		if p.m(b).qs != 0 {
			p.unlink(b)
			p.pushTail(b)
		}
		return
	}
	b := p.popFree()
	p.hash(b, h)
	p.pushTail(b)
}

// flushAll enters every pending block into the index (tests only).
func (p *Pool) flushAll() {
	var keys []uint64
	p.lists.each(func(k uint64, _ int32) { keys = append(keys, k) })
	for _, k := range keys {
		p.Flush(k)
	}
}

// freeQueue lists the free queue, least recently used first (tests only).
func (p *Pool) freeQueue() []BlockID {
	var q []BlockID
	for b := p.used; b < p.used+p.head; b++ {
		q = append(q, BlockID(b))
	}
	for i, b := range p.q[p.qh:] {
		if b == NoBlock {
			q = append(q, NoBlock)
		} else if p.m(b).qs == uint32(p.qh+i+1) {
			q = append(q, b)
		}
	}
	for range p.tail {
		q = append(q, NoBlock)
	}
	return q
}

// hashOf is block b's content hash, 0 if none, computed if it is pending (tests only).
func (p *Pool) hashOf(b BlockID) Hash {
	m := p.m(b)
	if m.src != 0 {
		return p.srcHash(m.src-1, int(m.hash)-1)
	}
	return m.hash
}

// Ref returns the reference count of block b (for tests and invariant checks).
func (p *Pool) Ref(b BlockID) int {
	if int(b) >= p.used {
		return 0 // never handed out
	}
	return int(p.m(b).ref)
}

// CheckInvariants verifies the free queue and counts; it panics on a broken invariant.
func (p *Pool) CheckInvariants() {
	n := p.head // blocks never handed out
	queued, anonymous := 0, 0
	if !p.ReuseHot && (p.head != p.numBlocks-p.used || len(p.spare)+len(p.blank) > 0) {
		panic(fmt.Sprintf("kvcache: head %d, %d blocks never handed out, %d spare without hot reuse", p.head, p.numBlocks-p.used, len(p.spare)+len(p.blank)))
	}
	for i, b := range p.q[p.qh:] {
		if b == NoBlock {
			anonymous++
			n++
			continue
		}
		if p.m(b).qs != uint32(p.qh+i+1) {
			continue
		}
		if p.m(b).ref != 0 {
			panic(fmt.Sprintf("kvcache: block %d in free queue with ref %d", b, p.m(b).ref))
		}
		n++
		if n > p.numBlocks {
			panic("kvcache: free queue holds a block twice")
		}
	}
	anonymous += p.tail
	n += p.tail
	spare := 0
	for b := BlockID(0); int(b) < p.used; b++ {
		switch m := p.m(b); {
		case m.qs == spareQS:
			if m.ref != 0 || m.hash != 0 || m.list != 0 || m.src != 0 {
				panic(fmt.Sprintf("kvcache: spare block %d holds ref %d, hash %x", b, m.ref, m.hash))
			}
			spare++
		case m.qs != 0:
			queued++
		}
	}
	if spare != len(p.spare) {
		panic(fmt.Sprintf("kvcache: %d blocks marked spare, %d on the spare stack", spare, len(p.spare)))
	}
	onBlank := make(map[BlockID]bool, len(p.blank))
	for _, b := range p.blank {
		if m := p.m(b); onBlank[b] || m.ref != 1 || m.qs != 0 || m.hash != 0 || m.list != 0 || m.src != 0 {
			panic(fmt.Sprintf("kvcache: blank block %d twice on its stack, or holds ref %d, qs %d, hash %x", b, m.ref, m.qs, m.hash))
		}
		onBlank[b] = true
	}
	if anonymous != len(p.spare)+len(p.blank)+(p.numBlocks-p.used)-p.head-p.owed {
		panic(fmt.Sprintf("kvcache: %d anonymous entries for %d spare and %d blank blocks and %d never handed out beyond the head's %d, %d owed", anonymous, len(p.spare), len(p.blank), p.numBlocks-p.used, p.head, p.owed))
	}
	if queued != n-p.head-anonymous {
		panic(fmt.Sprintf("kvcache: %d blocks marked free, %d on the free queue", queued, n-p.head-anonymous))
	}
	if n != p.numFree {
		panic(fmt.Sprintf("kvcache: free queue length %d != numFree %d", n, p.numFree))
	}
	hashed, entries, pending := 0, 0, 0
	for b := BlockID(0); int(b) < p.used; b++ {
		if p.m(b).list != 0 {
			pending++
		}
	}
	p.lists.each(func(key uint64, i int32) {
		l := &p.pend[i]
		if l.key != key || l.live <= 0 {
			panic(fmt.Sprintf("kvcache: pending list %d of key %x is empty or under key %x", i, key, l.key))
		}
		live := 0
		for k, e := range l.ents {
			if k > 0 && l.ents[k-1].d >= e.d {
				panic(fmt.Sprintf("kvcache: pending list of key %x out of order at entry %d", key, k))
			}
			if p.live(i, k, e) {
				live++
			}
		}
		if live != int(l.live) {
			panic(fmt.Sprintf("kvcache: pending list of key %x has %d live entries, %d counted", key, live, l.live))
		}
		hashed += live
	})
	if hashed != pending {
		panic(fmt.Sprintf("kvcache: %d blocks pending, %d in pending lists", pending, hashed))
	}
	srcPending := make([]int32, len(p.srcs))
	for b := BlockID(0); int(b) < p.used; b++ {
		if m := p.m(b); m.src != 0 {
			if m.list == 0 {
				panic(fmt.Sprintf("kvcache: block %d has a chain source but is not pending", b))
			}
			srcPending[m.src-1]++
		}
	}
	released := make([]bool, len(p.srcs))
	for _, i := range p.srcFree {
		released[i] = true
	}
	for i := range p.srcs {
		if r := p.srcs[i].refs; released[i] != (r == 0) || r < srcPending[i] || r > srcPending[i]+1 {
			panic(fmt.Sprintf("kvcache: chain source %d has %d references, %d pending blocks", i, r, srcPending[i]))
		}
	}
	p.cached.each(func(h Hash, b BlockID) {
		entries++
		if p.m(b).dupPrev != NoBlock {
			panic(fmt.Sprintf("kvcache: block %d is first for hash %x but has a predecessor", b, h))
		}
		for x, prev := b, NoBlock; x != NoBlock; prev, x = x, p.m(x).dupNext {
			if p.m(x).hash != h || p.m(x).dupPrev != prev || p.m(x).list != 0 {
				panic(fmt.Sprintf("kvcache: cached map says block %d holds %x, block says %x", x, h, p.m(x).hash))
			}
			if prev != NoBlock && p.seqAt(prev) >= p.seqAt(x) {
				panic(fmt.Sprintf("kvcache: blocks %d and %d with hash %x out of order", prev, x, h))
			}
			hashed++
			if hashed > p.used {
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
