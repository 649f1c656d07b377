package kvcache

import (
	"fmt"
	"math"

	"github.com/servesim/servesim/model/arch"
)

// Content identifies the tokens of a request without materialising them. Token i of the request is
//
//   - block content Blocks[i / BlockSpan] when Blocks is set and i < min(PromptTokens,
//     len(Blocks) x BlockSpan) (a trace's prefix-block hash ids: equal ids, equal content),
//   - shared-prefix content PrefixID when i < PrefixTokens,
//   - prompt content PromptID when i < PromptTokens,
//   - request-unique content UniqueID otherwise (generated tokens).
//
// Two requests with equal PromptID have identical prompts; equal PrefixID, an identical shared prefix.
type Content struct {
	PrefixID     uint64
	PrefixTokens int
	PromptID     uint64
	PromptTokens int
	// PromptUnique says no other request has PromptID: once this one leaves, its prompt's
	// blocks cannot be hit (ReleaseDone drops their content).
	PromptUnique bool
	UniqueID     uint64
	// Blocks names the prompt's content span by span, BlockSpan tokens each (the last span may be
	// partial): two prompts share their leading KV blocks as far as their leading ids agree.
	Blocks    []uint64
	BlockSpan int
}

// blocksEnd is the number of leading tokens Blocks names (0 without Blocks).
func (c *Content) blocksEnd() int {
	if len(c.Blocks) == 0 || c.BlockSpan <= 0 {
		return 0
	}
	return min(c.PromptTokens, len(c.Blocks)*c.BlockSpan)
}

// mix is a 64-bit hash combiner (splitmix64 finaliser over a ^ rotated b).
func mix(a, b uint64) uint64 {
	x := a ^ (b + 0x9e3779b97f4a7c15 + (a << 6) + (a >> 2))
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// blockID is the content id of the last tokens of [i*bt, (i+1)*bt): the shared prefix's, the
// prompt's or the request's own. Two requests can share block i only if their blockIDs agree.
func (c *Content) blockID(i, bt int) uint64 {
	end := (i + 1) * bt
	if len(c.Blocks) > 0 && end <= c.blocksEnd() {
		return c.Blocks[(end-1)/c.BlockSpan]
	}
	switch {
	case end <= c.PrefixTokens:
		return c.PrefixID
	case end <= c.PromptTokens:
		return c.PromptID
	}
	return c.UniqueID
}

// runEnd is the first block after j whose content id may differ from block j's (blockID).
func (c *Content) runEnd(j, bt int) int {
	end := (j + 1) * bt
	if len(c.Blocks) > 0 && end <= c.blocksEnd() {
		span := ((end-1)/c.BlockSpan + 1) * c.BlockSpan
		return max(j+1, min(span, c.blocksEnd())/bt)
	}
	switch {
	case end <= c.PrefixTokens:
		return c.PrefixTokens / bt
	case end <= c.PromptTokens:
		return c.PromptTokens / bt
	}
	return math.MaxInt
}

// blockKey is the content key of tokens [i*bt, (i+1)*bt): the content id, made position- and
// block-size-specific by an odd-multiplier offset. At a given position it is a bijection of the
// id, so two blocks with the same parent chain get different chained hashes whenever their ids
// differ; chainHash mixes it into the chain.
func (c *Content) blockKey(i, bt int) uint64 {
	return c.blockID(i, bt) ^ (uint64(i)*0x9e3779b97f4a7c15 + uint64(bt)*0xc2b2ae3d27d4eb4f)
}

type chain struct {
	bt     int
	hashes []uint64
}

// Table is one request's block tables, one per group, plus its cached hash chains. What Grow and
// Commit read at a decoding request's visit comes first, and a one-group layout's per-group
// slices point into the table itself (one1 and the fields after it), so that visit touches one or
// two cache lines of it: in a fleet, a replica's tables are evicted from the caches between two
// of its steps.
type Table struct {
	// fits is how many tokens the held blocks cover in every group (Grow has nothing to do up
	// to it); nextCommit the smallest computed-token count at which Commit has work. Both are 0
	// (unknown) after Admit and Free.
	fits       int
	nextCommit int
	Blocks     [][]BlockID
	// base[g] is the index of the first block still held in a sliding-window group.
	base []int
	// The backing arrays of Blocks, base, hashed and src in a one-group layout.
	one1    [1][]BlockID
	base1   [1]int
	hashed1 [1]int
	src1    [1]int32
	// hashed[g] counts blocks (attention) or boundaries (state) already entered in the cache.
	hashed []int
	// src[g] is the pool's chain source of group g's pending blocks plus one (0: none yet), held
	// until Free.
	src    []int32
	chains []chain
	// hit blocks found by FindHit, per group, to be touched on Admit; hitState the recurrent-state
	// checkpoints the hit resumes from, to be marked recently used on Admit.
	hitBlocks [][]BlockID
	hitState  []BlockID
	hitTokens int
	// The last FindHit's inputs: reused while the pool's cached set is unchanged.
	hitGen    uint64
	hitFor    int
	hitCached bool
}

// Manager is the KV-cache coordinator: it maps requests to blocks in every group of a Layout,
// finds prefix-cache hits and keeps the cache's hash entries.
type Manager struct {
	L         *Layout
	Pool      *Pool
	EagleDrop bool // drop the last matched block (EAGLE-family speculative methods)
	Caching   bool
	// DeferUnique makes Commit skip the blocks that hold a request's generated tokens, and under
	// the pool's hot reuse those of a unique prompt (Content.PromptUnique) past what other
	// requests may share (their content is the request's own: no other request can hit them;
	// ReleaseDone frees them without content). CommitAll enters them, which
	// the caller must do before freeing blocks a later admission of the same request may hit
	// (a preemption); a request that finishes or is aborted never looks them up again, so
	// skipping them changes no hit, admission or eviction (package sim's fast mode).
	DeferUnique bool
	salts       []uint64
	scratch     []BlockID
	spare       []*Table // released tables, reused by NewTable
}

// NewManager builds the pool for layout l.
func NewManager(l *Layout, eagleDrop bool) *Manager {
	m := &Manager{L: l, Pool: NewPool(l.NumBlocks), EagleDrop: eagleDrop, Caching: l.PrefixCaching}
	m.salts = make([]uint64, len(l.Groups))
	for i := range l.Groups {
		m.salts[i] = mix(0x5eed, uint64(i+1))
	}
	return m
}

// NewTable returns an empty table for a request.
func (m *Manager) NewTable() *Table {
	if k := len(m.spare); k > 0 {
		t := m.spare[k-1]
		m.spare = m.spare[:k-1]
		return t
	}
	n := len(m.L.Groups)
	if n == 1 {
		t := &Table{hitBlocks: make([][]BlockID, 1)}
		t.Blocks, t.base, t.hashed, t.src = t.one1[:], t.base1[:], t.hashed1[:], t.src1[:]
		return t
	}
	return &Table{Blocks: make([][]BlockID, n), base: make([]int, n), hashed: make([]int, n), src: make([]int32, n),
		hitBlocks: make([][]BlockID, n)}
}

// ReleaseDone is Release for a request of content c that has left the engine: under the pool's
// hot reuse, a unique prompt's pending blocks first lose their content (Pool.Forget), which no
// lookup could find any more, so the blocks are freed without content and handed out again hot.
func (m *Manager) ReleaseDone(t *Table, c *Content) {
	if c.PromptUnique && m.Pool.ReuseHot {
		m.Pool.Forget(c.PromptID)
	}
	m.Release(t)
}

// Release frees t's blocks and keeps the table, emptied, for a later NewTable: a request that
// has left the engine no longer needs it, and reusing its storage spares the allocations.
func (m *Manager) Release(t *Table) {
	m.Free(t)
	for g := range t.hitBlocks {
		t.hitBlocks[g] = t.hitBlocks[g][:0]
	}
	for k := range t.chains {
		t.chains[k].hashes = t.chains[k].hashes[:0]
	}
	t.hitState = t.hitState[:0]
	t.hitTokens, t.hitGen, t.hitFor = 0, 0, 0
	m.spare = append(m.spare, t)
}

// chainHash returns the chained content hash of block i at block size bt.
func (t *Table) chainHash(c *Content, bt, i int) uint64 {
	return t.chainUpTo(c, bt, i+1)[i]
}

// chainUpTo returns the chained content hashes of blocks 0 .. n-1 at block size bt (and maybe
// more), computing those not yet known.
func (t *Table) chainUpTo(c *Content, bt, n int) []uint64 {
	var ch *chain
	for k := range t.chains {
		if t.chains[k].bt == bt {
			ch = &t.chains[k]
			break
		}
	}
	if ch == nil {
		t.chains = append(t.chains, chain{bt: bt})
		ch = &t.chains[len(t.chains)-1]
	}
	ch.hashes = extendChain(ch.hashes, c, bt, n)
	return ch.hashes
}

// extendChain appends to hashes, the chained content hashes of c's first blocks at block size
// bt, those of the blocks up to n-1.
func extendChain(hashes []uint64, c *Content, bt, n int) []uint64 {
	for j := len(hashes); j < n; j++ {
		var parent uint64 = chainSeed
		if j > 0 {
			parent = hashes[j-1]
		}
		hashes = append(hashes, mix(parent, c.blockKey(j, bt)))
	}
	return hashes
}

// chainSeed is the parent of a chain's first block.
const chainSeed = 0xcafef00d

// saltHash is a chained hash salted with a group's salt (vLLM keys its cache by hash and group).
// The salt is xored in: within a group a bijection of the chain, across groups a random offset.
func saltHash(salt, chain uint64) Hash {
	h := Hash(salt ^ chain)
	if h == 0 {
		h = 1
	}
	return h
}

// blockHash is block i's chained hash salted with group g.
func (m *Manager) blockHash(t *Table, c *Content, g, i int) Hash {
	return saltHash(m.salts[g], t.chainHash(c, m.L.Groups[g].BlockTokens, i))
}

// groupHit returns the longest hit <= limit that group g supports, in tokens.
func (m *Manager) groupHit(t *Table, c *Content, g, limit int) int {
	gr := &m.L.Groups[g]
	bt := gr.BlockTokens
	switch gr.Kind {
	case arch.SpecFull:
		// The chain is extended only as far as the lookups go (most prompts miss at once).
		var chain []uint64
		salt, n := m.salts[g], 0
		for (n+1)*bt <= limit {
			if n == len(chain) {
				chain = t.chainUpTo(c, bt, n+1)
			}
			if _, ok := m.Pool.Lookup(saltHash(salt, chain[n])); !ok {
				break
			}
			n++
		}
		return n * bt
	case arch.SpecSliding:
		// Needs the blocks covering the last Window tokens before the hit point.
		need := cdiv(gr.Window, bt)
		for j := limit / bt; j > 0; j-- {
			ok := true
			for i := max(0, j-need); i < j; i++ {
				if _, hit := m.Pool.Lookup(m.blockHash(t, c, g, i)); !hit {
					ok = false
					break
				}
			}
			if ok {
				return j * bt
			}
		}
		return 0
	case arch.SpecState:
		// A state checkpoint exists only at block boundaries.
		for j := limit / bt; j > 0; j-- {
			if _, ok := m.Pool.Lookup(m.blockHash(t, c, g, j-1)); ok {
				return j * bt
			}
		}
		return 0
	}
	panic(fmt.Sprintf("kvcache: unknown group kind %q", gr.Kind))
}

// fixedPoint lowers limit until every group supports it.
func (m *Manager) fixedPoint(t *Table, c *Content, limit int) int {
	for {
		h := limit
		for g := range m.L.Groups {
			h = min(h, m.groupHit(t, c, g, h))
			if h == 0 {
				return 0
			}
		}
		if h == limit {
			return h
		}
		limit = h
	}
}

// FindHit computes the prefix-cache hit, in tokens, for a request about to be admitted with
// tokens tokens known (prompt, plus output after a preemption). The hit is capped at tokens-1, is
// the minimum over groups, and loses its last block for EAGLE-family drafters. The blocks to reuse
// are remembered in t for Admit.
func (m *Manager) FindHit(t *Table, c *Content, tokens int) int {
	if m.Caching && tokens > 1 {
		// Blocks committed with any of this content's ids are the only ones it can hit (the
		// shared prefix's only when it has tokens: no block of it is keyed by it otherwise).
		if c.PrefixTokens > 0 {
			m.Pool.Flush(c.PrefixID)
		}
		for _, id := range c.Blocks {
			m.Pool.Flush(id)
		}
		m.Pool.Flush(c.PromptID)
		m.Pool.Flush(c.UniqueID)
	}
	if t.hitCached && t.hitGen == m.Pool.gen && t.hitFor == tokens {
		// Same request, same length, no block entered in or evicted from the index since: same
		// answer. (A request blocked at the head of the queue asks every step.)
		return t.hitTokens
	}
	t.hitCached, t.hitGen, t.hitFor = true, m.Pool.gen, tokens
	for g := range t.hitBlocks {
		t.hitBlocks[g] = t.hitBlocks[g][:0]
	}
	t.hitState = t.hitState[:0]
	t.hitTokens = 0
	if !m.Caching || tokens <= 1 {
		return 0
	}
	hit := m.fixedPoint(t, c, tokens-1)
	if hit > 0 && m.EagleDrop {
		hit = m.fixedPoint(t, c, hit-m.L.BlockSize)
	}
	if hit <= 0 {
		return 0
	}
	for g := range m.L.Groups {
		gr := &m.L.Groups[g]
		if gr.Kind == arch.SpecState {
			if b, ok := m.Pool.Lookup(m.blockHash(t, c, g, hit/gr.BlockTokens-1)); ok {
				t.hitState = append(t.hitState, b)
			}
			continue
		}
		n := hit / gr.BlockTokens
		first := 0
		if gr.Kind == arch.SpecSliding {
			first = max(0, n-cdiv(gr.Window, gr.BlockTokens))
		}
		chain, salt := t.chainUpTo(c, gr.BlockTokens, n), m.salts[g]
		for i := first; i < n; i++ {
			b, _ := m.Pool.Lookup(saltHash(salt, chain[i]))
			t.hitBlocks[g] = append(t.hitBlocks[g], b)
		}
	}
	t.hitTokens = hit
	return hit
}

// blocksNeeded is how many new blocks group g needs to hold tokens tokens, given what it holds.
func (m *Manager) blocksNeeded(t *Table, g, tokens int) int {
	gr := &m.L.Groups[g]
	held := len(t.Blocks[g])
	switch gr.Kind {
	case arch.SpecState:
		return max(0, m.L.StateBlocks()-held)
	case arch.SpecSliding:
		// Blocks wholly before the window are released as the request grows.
		end := cdiv(tokens, gr.BlockTokens)
		return max(0, end-t.base[g]-held)
	}
	return max(0, cdiv(tokens, gr.BlockTokens)-held)
}

// CanAdmit reports whether a request whose prefix hit was just found can be admitted: blocks for
// all of its tokens plus lookahead must be free, counting cached free blocks the hit would take off
// the free queue (vLLM's whole-prompt reservation).
func (m *Manager) CanAdmit(t *Table, tokens int) bool {
	need := 0
	for g := range m.L.Groups {
		gr := &m.L.Groups[g]
		hitN := len(t.hitBlocks[g])
		switch gr.Kind {
		case arch.SpecState:
			need += m.L.StateBlocks()
		case arch.SpecSliding:
			need += max(0, m.L.GroupBlocks(gr, tokens)-hitN)
		default:
			need += max(0, cdiv(tokens, gr.BlockTokens)-hitN)
		}
		for _, b := range t.hitBlocks[g] {
			if m.Pool.IsFree(b) {
				need++
			}
		}
	}
	return need <= m.Pool.NumFree()
}

// Admit takes references on the hit blocks found by FindHit.
func (m *Manager) Admit(t *Table) {
	t.hitCached = false
	t.fits, t.nextCommit = 0, 0
	for g := range m.L.Groups {
		gr := &m.L.Groups[g]
		if len(t.hitBlocks[g]) == 0 {
			continue
		}
		if gr.Kind == arch.SpecSliding {
			// Blocks before the window are not held; the table starts at the first hit block.
			n := t.hitTokens / gr.BlockTokens
			t.base[g] = n - len(t.hitBlocks[g])
		}
		for _, b := range t.hitBlocks[g] {
			m.Pool.Touch(b)
		}
		t.Blocks[g] = append(t.Blocks[g], t.hitBlocks[g]...)
		t.hashed[g] = t.base[g] + len(t.hitBlocks[g])
		t.hitBlocks[g] = t.hitBlocks[g][:0]
	}
	// The request resumes from the cached recurrent state at the hit (vLLM references that block
	// and releases it once copied): it becomes the most recently used, as an attention block a
	// request holds does when freed, and is not the next one evicted.
	for _, b := range t.hitState {
		m.Pool.Touch(b)
		m.Pool.Free([]BlockID{b})
	}
	t.hitState = t.hitState[:0]
	for g := range m.L.Groups {
		if m.L.Groups[g].Kind == arch.SpecState {
			t.hashed[g] = t.hitTokens / m.L.Groups[g].BlockTokens
		}
	}
}

// Grow allocates the blocks needed to hold tokens tokens (computed + scheduled + lookahead) in
// every group, all or nothing. It returns false when the pool is short.
func (m *Manager) Grow(t *Table, tokens int) bool {
	if tokens <= t.fits {
		return true // a decoding request crosses a block boundary once in many steps
	}
	if gs := m.L.Groups; len(gs) == 1 && gs[0].Kind == arch.SpecFull {
		// One full-attention group (most models): what the loops below do, without them.
		bt := gs[0].BlockTokens
		if n := cdiv(tokens, bt) - len(t.Blocks[0]); n > 0 {
			if n > m.Pool.NumFree() {
				return false
			}
			t.Blocks[0], _ = m.Pool.Allocate(t.Blocks[0], n)
		}
		t.fits = (t.base[0] + len(t.Blocks[0])) * bt
		return true
	}
	need := 0
	for g := range m.L.Groups {
		need += m.blocksNeeded(t, g, tokens)
	}
	if need > m.Pool.NumFree() {
		return false
	}
	for g := range m.L.Groups {
		if n := m.blocksNeeded(t, g, tokens); n > 0 {
			t.Blocks[g], _ = m.Pool.Allocate(t.Blocks[g], n)
		}
	}
	t.fits = m.covered(t)
	return true
}

// covered is how many tokens t's blocks cover in every group.
func (m *Manager) covered(t *Table) int {
	c := math.MaxInt
	for g := range m.L.Groups {
		gr := &m.L.Groups[g]
		held := len(t.Blocks[g])
		if gr.Kind == arch.SpecState {
			if held < m.L.StateBlocks() {
				return 0
			}
			continue
		}
		c = min(c, (t.base[g]+held)*gr.BlockTokens)
	}
	return c
}

// commitWork is the smallest computed-token count at which Commit has something to do for t.
func (m *Manager) commitWork(t *Table, c *Content) int {
	next := math.MaxInt
	for g := range m.L.Groups {
		gr := &m.L.Groups[g]
		bt := gr.BlockTokens
		switch gr.Kind {
		case arch.SpecFull, arch.SpecSliding:
			if m.Caching && (t.hashed[g]+1)*bt <= m.enteredTokens(c) {
				next = min(next, (t.hashed[g]+1)*bt)
			}
			if gr.Kind == arch.SpecSliding {
				next = min(next, (t.base[g]+1)*bt+gr.Window)
			}
		case arch.SpecState:
			if m.Caching && t.hashed[g] < c.PromptTokens/bt {
				next = min(next, (t.hashed[g]+1)*bt)
			}
		}
	}
	return next
}

// Commit records that computed tokens now have their KV written: full blocks are entered in the
// prefix cache, sliding-window groups release blocks that left the window, and recurrent-state
// checkpoints are cached at block boundaries inside the prompt.
func (m *Manager) Commit(t *Table, c *Content, computed int) {
	if computed < t.nextCommit {
		return
	}
	defer func() { t.nextCommit = m.commitWork(t, c) }()
	for g := range m.L.Groups {
		gr := &m.L.Groups[g]
		bt := gr.BlockTokens
		switch gr.Kind {
		case arch.SpecFull, arch.SpecSliding:
			if m.Caching {
				full := computed / bt
				if m.DeferUnique {
					// The blocks others may hit, and in a sliding window those about to be
					// released (a block on the free queue keeps its content for a later hit).
					lim := m.enteredTokens(c) / bt
					if gr.Kind == arch.SpecSliding {
						lim = max(lim, (computed-gr.Window)/bt)
					}
					full = min(full, lim)
				}
				if t.hashed[g] < full {
					// The blocks are entered pending, their hashes computed only if a lookup
					// flushes them into the index (Pool.setChainRunLazy).
					if t.src[g] == 0 {
						t.src[g] = m.Pool.newSrc(c, bt, m.salts[g]) + 1
					}
					// Blocks before base are no longer held; each run of one content id goes
					// in at once.
					src, blocks, base := t.src[g]-1, t.Blocks[g], t.base[g]
					end := min(full, base+len(blocks))
					for j := max(t.hashed[g], base); j < end; {
						k := min(c.runEnd(j, bt), end)
						m.Pool.setChainRunLazy(blocks[j-base:k-base], src, j, c.blockID(j, bt))
						j = k
					}
					t.hashed[g] = full
				}
			}
			if gr.Kind == arch.SpecSliding {
				keepFrom := (computed - gr.Window) / bt // first block still inside the window
				if drop := keepFrom - t.base[g]; drop > 0 && drop <= len(t.Blocks[g]) {
					m.Pool.Free(t.Blocks[g][:drop])
					t.Blocks[g] = append(t.Blocks[g][:0], t.Blocks[g][drop:]...)
					t.base[g] += drop
				}
			}
		case arch.SpecState:
			if !m.Caching {
				continue
			}
			upto := min(computed, c.PromptTokens) / bt
			for ; t.hashed[g] < upto; t.hashed[g]++ {
				// State checkpoints are only entered here, eagerly: their key (the content id in
				// another namespace) never has pending blocks, so the check flushes nothing.
				m.Pool.CacheDetached(m.blockHash(t, c, g, t.hashed[g]), mix(c.blockID(t.hashed[g], bt), 0x57a7e))
			}
		}
	}
}

// enteredTokens is how many of c's leading tokens Commit enters in the cache as their blocks
// fill: all of them without DeferUnique; with it, the prompt, or only the part other requests may
// share (a prefix, named blocks) when the prompt is unique and its blocks are freed without
// content when the request is done (ReleaseDone under the pool's hot reuse). CommitAll enters the
// rest before a preemption frees blocks the request's re-admission may hit.
func (m *Manager) enteredTokens(c *Content) int {
	switch {
	case !m.DeferUnique:
		return math.MaxInt
	case c.PromptUnique && m.Pool.ReuseHot:
		return min(max(c.PrefixTokens, c.blocksEnd()), c.PromptTokens)
	}
	return c.PromptTokens
}

// FullBlockTokens is the block size in tokens of a layout of one full-attention group, else 0.
// In such a layout a request's blocks are freed only when it leaves the running queue (finished,
// aborted or preempted): no window slides past them, no state replaces them.
func (m *Manager) FullBlockTokens() int {
	if gs := m.L.Groups; len(gs) == 1 && gs[0].Kind == arch.SpecFull {
		return gs[0].BlockTokens
	}
	return 0
}

// OweBlockTokens is the block size in tokens when OweBlock can hand out blocks for this layout
// (one full-attention group, under the pool's hot reuse), else 0.
func (m *Manager) OweBlockTokens() int {
	if m.Pool.ReuseHot {
		return m.FullBlockTokens()
	}
	return 0
}

// OweBlock hands out the one block a table of a one-group layout (OweBlockTokens) needs to grow
// past a block boundary, without naming it or touching the table (Pool.TakeAnonymous): the
// caller counts it and names such blocks with NameOwed before the table is used again (freeing
// it included). It returns false, handing out nothing, when the pool would have to evict
// or is short: then NameOwed and Grow.
func (m *Manager) OweBlock() bool {
	return m.Pool.TakeAnonymous()
}

// NameOwed appends n blocks handed out by OweBlock for t to its table.
func (m *Manager) NameOwed(t *Table, n int) {
	t.Blocks[0] = m.Pool.TakeOwed(t.Blocks[0], n)
	t.fits = (t.base[0] + len(t.Blocks[0])) * m.L.Groups[0].BlockTokens
}

// CommitAll is Commit with every full block entered in the cache, the request's generated ones
// included, whatever DeferUnique says.
func (m *Manager) CommitAll(t *Table, c *Content, computed int) {
	if !m.DeferUnique {
		m.Commit(t, c, computed)
		return
	}
	m.DeferUnique = false
	t.nextCommit = 0
	m.Commit(t, c, computed)
	m.DeferUnique = true
	t.nextCommit = m.commitWork(t, c)
}

// GrowLimit is the number of tokens t's blocks cover in every group: Grow has nothing to do up
// to it. It is known after a Grow (0 before).
func (t *Table) GrowLimit() int { return t.fits }

// CommitLimit is the smallest computed-token count at which Commit has something to do for t.
// It is known after a Commit (0 before).
func (t *Table) CommitLimit() int { return t.nextCommit }

// Free releases every block the request holds; cached content stays until evicted.
func (m *Manager) Free(t *Table) {
	t.hitCached = false
	t.fits, t.nextCommit = 0, 0
	for g := range t.Blocks {
		blocks := t.Blocks[g]
		if k := m.L.Groups[g].Kind; k == arch.SpecFull || k == arch.SpecSliding {
			// The blocks past those entered in the cache were allocated for this request and
			// never held content (a hit block is among the entered ones): the tail of the
			// table, freed first, as Free frees a table from its end.
			i := min(max(t.hashed[g]-t.base[g], 0), len(blocks))
			m.Pool.FreeBlank(blocks[i:])
			blocks = blocks[:i]
		}
		m.Pool.Free(blocks)
		t.Blocks[g] = t.Blocks[g][:0]
		t.base[g] = 0
		t.hashed[g] = 0
		if t.src[g] != 0 {
			m.Pool.releaseSrc(t.src[g] - 1)
			t.src[g] = 0
		}
	}
}

// HeldBlocks is the number of blocks the request holds over all groups.
func (t *Table) HeldBlocks() int {
	n := 0
	for _, b := range t.Blocks {
		n += len(b)
	}
	return n
}
