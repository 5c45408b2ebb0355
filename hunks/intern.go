package hunks

import (
	"bytes"
	"hash/maphash"
	"math/bits"
)

// interner gives each distinct line key a small integer id, in order of
// first appearance (so ids never depend on the hash seed). It is an
// open-addressing table with linear probing; it never shrinks.
type interner struct {
	seed   maphash.Seed
	slots  []int32 // id+1 per slot, 0 when empty; len is a power of two
	hashes []uint64
	keys   [][]byte
}

// newInterner returns an interner sized for up to n distinct keys without
// growing.
func newInterner(n int) *interner {
	size := 1 << bits.Len(uint(2*n+16))
	return &interner{
		seed:   maphash.MakeSeed(),
		slots:  make([]int32, size),
		hashes: make([]uint64, 0, n),
		keys:   make([][]byte, 0, n),
	}
}

// id returns key's id, adding key when it is new.
func (t *interner) id(key []byte) int32 {
	if 2*len(t.keys) >= len(t.slots) {
		t.grow()
	}
	h := maphash.Bytes(t.seed, key)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			id := int32(len(t.keys))
			t.slots[i] = id + 1
			t.hashes = append(t.hashes, h)
			t.keys = append(t.keys, key)
			return id
		}
		if t.hashes[s-1] == h && bytes.Equal(t.keys[s-1], key) {
			return s - 1
		}
	}
}

// grow doubles the table and re-inserts every id.
func (t *interner) grow() {
	t.slots = make([]int32, 2*len(t.slots))
	mask := uint64(len(t.slots) - 1)
	for id, h := range t.hashes {
		i := h & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = int32(id) + 1
	}
}

// count returns the number of distinct keys seen.
func (t *interner) count() int { return len(t.keys) }

// internAll returns the ids of a and of b, sharing one id space, and the
// number of distinct ids.
func internAll(a, b [][]byte) (ia, ib []int32, n int) {
	t := newInterner(len(a) + len(b))
	ia = make([]int32, len(a))
	for i, k := range a {
		ia[i] = t.id(k)
	}
	ib = make([]int32, len(b))
	for i, k := range b {
		ib[i] = t.id(k)
	}
	return ia, ib, t.count()
}
