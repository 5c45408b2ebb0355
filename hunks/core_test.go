package hunks

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// randIDs returns n ids drawn from an alphabet of size k.
func randIDs(r *rand.Rand, n, k int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(r.IntN(k))
	}
	return out
}

// mutate returns a copy of a with about edits random replacements,
// insertions and deletions.
func mutate(r *rand.Rand, a []int32, edits, k int) []int32 {
	b := append([]int32(nil), a...)
	for range edits {
		i := r.IntN(len(b) + 1)
		switch r.IntN(3) {
		case 0:
			if i < len(b) {
				b[i] = int32(r.IntN(k))
			}
		case 1:
			b = append(b[:i], append([]int32{int32(r.IntN(k))}, b[i:]...)...)
		case 2:
			if i < len(b) {
				b = append(b[:i], b[i+1:]...)
			}
		}
	}
	return b
}

// checkMarks checks that the unmarked lines of a and b are equal in order
// and returns the number of marks.
func checkMarks(t *testing.T, a, b []int32, ca, cb []bool) int {
	t.Helper()
	var ka, kb []int32
	d := 0
	for i, c := range ca {
		if c {
			d++
		} else {
			ka = append(ka, a[i])
		}
	}
	for i, c := range cb {
		if c {
			d++
		} else {
			kb = append(kb, b[i])
		}
	}
	if len(ka) != len(kb) {
		t.Fatalf("kept %d lines of a, %d of b", len(ka), len(kb))
	}
	for i := range ka {
		if ka[i] != kb[i] {
			t.Fatalf("kept line %d: %d vs %d", i, ka[i], kb[i])
		}
	}
	return d
}

// TestMyersMinimal compares the core's edit count with the quadratic LCS on
// many small random inputs over small alphabets (which exercise ties and the
// edges of the search box), with and without the discard and slide steps.
func TestMyersMinimal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for it := range 4000 {
		k := 1 + r.IntN(6)
		a := randIDs(r, r.IntN(40), k)
		var b []int32
		if it%2 == 0 {
			b = randIDs(r, r.IntN(40), k)
		} else {
			b = mutate(r, a, 1+r.IntN(8), k)
		}
		want := len(a) + len(b) - 2*lcsLen(a, b)

		m := newMyers(a, b, 1000)
		m.compare(0, len(a), 0, len(b))
		if got := checkMarks(t, a, b, m.ca, m.cb); got != want {
			t.Fatalf("case %d: myers D=%d, LCS gives %d\na=%v\nb=%v", it, got, want, a, b)
		}

		bufA, la := idText(a)
		bufB, lb := idText(b)
		ca, cb := diffLines(bufA, la, bufB, lb, 1000)
		if got := checkMarks(t, a, b, ca, cb); got != want {
			t.Fatalf("case %d: diffLines D=%d, LCS gives %d\na=%v\nb=%v", it, got, want, a, b)
		}
	}
}

// TestMyersBoundFallback checks that a tiny bound still gives a valid
// script, never shorter than the minimum, and that D within the bound stays
// minimal.
func TestMyersBoundFallback(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for it := range 2000 {
		k := 2 + r.IntN(5)
		a := randIDs(r, 10+r.IntN(60), k)
		b := randIDs(r, 10+r.IntN(60), k)
		want := len(a) + len(b) - 2*lcsLen(a, b)
		bound := r.IntN(12)
		m := newMyers(a, b, bound)
		m.compare(0, len(a), 0, len(b))
		got := checkMarks(t, a, b, m.ca, m.cb)
		if got < want || (want <= bound && got != want) {
			t.Fatalf("case %d: bound %d: D=%d, minimum %d", it, bound, got, want)
		}
	}
}

// idText renders ids as one-letter lines and returns the text and its lines.
func idText(ids []int32) ([]byte, []span) {
	var buf []byte
	var ls []span
	for _, v := range ids {
		ls = append(ls, span{len(buf), len(buf) + 1, true})
		buf = append(buf, byte('a'+v), '\n')
	}
	return buf, ls
}

func TestInterner(t *testing.T) {
	const n = 5000
	tab := newInterner(n)
	for round := range 2 {
		for i := range n {
			key := []byte(strings.Repeat("k", i%7) + strconv.Itoa(i))
			if got := tab.id(key); got != int32(i) {
				t.Fatalf("round %d: id(%q) = %d, want %d", round, key, got, i)
			}
		}
	}
	if tab.count() != n {
		t.Fatalf("count %d, want %d", tab.count(), n)
	}
}
