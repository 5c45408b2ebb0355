package hunks

import (
	"bytes"
	"hash/maphash"
	"math/bits"
)

// interner gives each distinct line key a small integer id, in order of
// first appearance (so ids never depend on the hash seed). It is an
// open-addressing table with linear probing, kept at most half full.
//
// A slot packs id+1 in its low idBits bits (0 means empty) and the top bits
// of the key's hash above them, so most mismatches are rejected without
// touching the keys; 4-byte slots keep the table small for the cache.
type interner struct {
	seed   maphash.Seed
	slots  []uint32 // len is a power of two
	idBits uint
	hashes []uint64 // per id
	keys   [][]byte // per id
}

// newInterner returns an interner for up to n distinct keys.
func newInterner(n int) *interner {
	t := &interner{
		seed:   maphash.MakeSeed(),
		idBits: uint(bits.Len(uint(n + 1))),
		hashes: make([]uint64, 0, n),
		keys:   make([][]byte, 0, n),
	}
	t.slots = make([]uint32, 1<<bits.Len(uint(n+16)))
	return t
}

// tag returns the part of a slot derived from hash h.
func (t *interner) tag(h uint64) uint32 {
	if t.idBits >= 32 {
		return 0
	}
	return uint32(h>>32) &^ (1<<t.idBits - 1)
}

// id returns key's id, adding key when it is new. At most n distinct keys
// (the newInterner argument) may be added.
func (t *interner) id(key []byte) int32 {
	if 2*len(t.keys) >= len(t.slots) {
		t.grow()
	}
	h := maphash.Bytes(t.seed, key)
	tag, idMask := t.tag(h), uint32(1<<t.idBits-1)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			id := int32(len(t.keys))
			t.slots[i] = tag | uint32(id+1)
			t.hashes = append(t.hashes, h)
			t.keys = append(t.keys, key)
			return id
		}
		if s&^idMask == tag {
			if id := int32(s&idMask) - 1; bytes.Equal(t.keys[id], key) {
				return id
			}
		}
	}
}

// grow doubles the table and re-inserts every id.
func (t *interner) grow() {
	t.slots = make([]uint32, 2*len(t.slots))
	mask := uint64(len(t.slots) - 1)
	for id, h := range t.hashes {
		i := h & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = t.tag(h) | uint32(id+1)
	}
}

// count returns the number of distinct keys seen.
func (t *interner) count() int { return len(t.keys) }

// internAll returns the ids of the lines la of bufA and lb of bufB, sharing
// one id space, and the number of distinct ids.
func internAll(bufA []byte, la []span, bufB []byte, lb []span) (ia, ib []int32, n int) {
	t := newInterner(len(la) + len(lb))
	ia = make([]int32, len(la))
	for i, l := range la {
		ia[i] = t.id(l.key(bufA))
	}
	ib = make([]int32, len(lb))
	for i, l := range lb {
		ib[i] = t.id(l.key(bufB))
	}
	return ia, ib, t.count()
}
