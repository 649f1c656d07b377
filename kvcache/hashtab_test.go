package kvcache

import (
	"testing"

	"pgregory.net/rapid"
)

// TestHashTableMatchesMap drives hashTable and a Go map with the same random operations on keys
// from a small range, so probe runs collide, wrap around the table's end and are cut by
// deletions; every lookup and the entry count must agree.
func TestHashTableMatchesMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var h hashTable
		ref := map[Hash]BlockID{}
		keys := rapid.Uint64Range(1, 300)
		t.Repeat(map[string]func(*rapid.T){
			"set": func(t *rapid.T) {
				k := Hash(keys.Draw(t, "k"))
				v := BlockID(rapid.IntRange(0, 1000).Draw(t, "v"))
				h.set(k, v)
				ref[k] = v
			},
			"del": func(t *rapid.T) {
				k := Hash(keys.Draw(t, "k"))
				h.del(k)
				delete(ref, k)
			},
			"": func(t *rapid.T) {
				if h.n != len(ref) {
					t.Fatalf("n = %d, want %d", h.n, len(ref))
				}
				for k := Hash(1); k <= 300; k++ {
					got, ok := h.get(k)
					want, wok := ref[k]
					if ok != wok || got != want {
						t.Fatalf("get(%d) = %d %v, want %d %v", k, got, ok, want, wok)
					}
				}
			},
		})
	})
}
