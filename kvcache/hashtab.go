package kvcache

// hashTable maps a content hash (never 0) to a block: open addressing with linear probing in a
// power-of-two table, deletion by backward shift (no tombstones), grown at half load. The pool
// does a lookup, an insertion or a deletion for every block it caches or evicts, millions in a
// long run; a key and its block share a slot, so each costs one cache line, and nothing is
// allocated after growing. Keys are already well-mixed 64-bit hashes; the slot is the top bits
// of the key times the golden ratio (Fibonacci hashing), which also spreads the small keys of
// tests.
type hashTable struct {
	slots []htSlot // len is zero or a power of two
	n     int
	shift uint // 64 - log2(len(slots))
}

type htSlot struct {
	key Hash // 0: empty
	val BlockID
}

func (t *hashTable) home(h Hash) int {
	return int((uint64(h) * 0x9e3779b97f4a7c15) >> t.shift)
}

// get returns the block stored under h.
func (t *hashTable) get(h Hash) (BlockID, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := len(t.slots) - 1
	for i := t.home(h); ; i = (i + 1) & mask {
		s := &t.slots[i]
		switch s.key {
		case h:
			return s.val, true
		case 0:
			return 0, false
		}
	}
}

// insert stores b under h unless h is present; it returns the block stored under h and whether
// it was already there.
func (t *hashTable) insert(h Hash, b BlockID) (BlockID, bool) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := t.home(h); ; i = (i + 1) & mask {
		s := &t.slots[i]
		switch s.key {
		case h:
			return s.val, true
		case 0:
			s.key, s.val = h, b
			t.n++
			return b, false
		}
	}
}

// set stores b under h, replacing what was there.
func (t *hashTable) set(h Hash, b BlockID) {
	if old, ok := t.insert(h, b); ok && old != b {
		mask := len(t.slots) - 1
		for i := t.home(h); ; i = (i + 1) & mask {
			if t.slots[i].key == h {
				t.slots[i].val = b
				return
			}
		}
	}
}

// del removes h; the entries after it in its probe run move back to close the gap.
func (t *hashTable) del(h Hash) {
	if t.n == 0 {
		return
	}
	mask := len(t.slots) - 1
	i := t.home(h)
	for t.slots[i].key != h {
		if t.slots[i].key == 0 {
			return
		}
		i = (i + 1) & mask
	}
	t.n--
	for j := (i + 1) & mask; t.slots[j].key != 0; j = (j + 1) & mask {
		// The entry at j may fill the hole at i if its home slot is not in (i, j].
		home := t.home(t.slots[j].key)
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = htSlot{}
}

func (t *hashTable) grow() {
	size := max(2*len(t.slots), 64)
	old := t.slots
	t.slots, t.n = make([]htSlot, size), 0
	t.shift = 64
	for s := size; s > 1; s >>= 1 {
		t.shift--
	}
	for _, s := range old {
		if s.key != 0 {
			t.insert(s.key, s.val)
		}
	}
}

// each calls f for every entry, in slot order (tests and invariant checks only: the order is not
// part of any result).
func (t *hashTable) each(f func(Hash, BlockID)) {
	for _, s := range t.slots {
		if s.key != 0 {
			f(s.key, s.val)
		}
	}
}

// keyTable maps a content key to the index of its pending list: a hashTable (the keys are
// content ids, spread by its Fibonacci hashing), with key 0, which hashTable reserves, apart.
// FindHit asks it for every admission attempt, most often for keys without a list.
type keyTable struct {
	t    hashTable
	zero int32 // key 0's list plus one; 0 for none
}

func (k *keyTable) get(key uint64) (int32, bool) {
	if key == 0 {
		return k.zero - 1, k.zero != 0
	}
	i, ok := k.t.get(Hash(key))
	return int32(i), ok
}

func (k *keyTable) put(key uint64, i int32) {
	if key == 0 {
		k.zero = i + 1
		return
	}
	k.t.set(Hash(key), BlockID(i))
}

func (k *keyTable) del(key uint64) {
	if key == 0 {
		k.zero = 0
		return
	}
	k.t.del(Hash(key))
}

// each calls f for every key and list, in no meaningful order (tests and invariant checks only).
func (k *keyTable) each(f func(uint64, int32)) {
	if k.zero != 0 {
		f(0, k.zero-1)
	}
	k.t.each(func(h Hash, i BlockID) { f(uint64(h), int32(i)) })
}
