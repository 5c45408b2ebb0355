package hunks

// diffLines compares the lines la of bufA with the lines lb of bufB (a line
// compares as its text plus its "\n" when present) and returns which lines of
// la are removed (ca) and which lines of lb are added (cb). The lines left
// unmarked are equal, in order, on both sides. The marks are minimal in
// number when the shortest script has at most bound edits (see the package
// doc).
func diffLines(bufA []byte, la []span, bufB []byte, lb []span, bound int) (ca, cb []bool) {
	ia, ib, n := internAll(bufA, la, bufB, lb)
	ca, cb = make([]bool, len(la)), make([]bool, len(lb))
	// A line that never occurs on the other side is always an edit, and
	// leaving it out of the search keeps the search's D and work small
	// without changing what is shortest.
	ra, xa := keepShared(ia, ib, n, ca)
	rb, xb := keepShared(ib, ia, n, cb)
	m := newMyers(ra, rb, bound)
	m.compare(0, len(ra), 0, len(rb))
	for i, c := range m.ca {
		if c {
			ca[xa[i]] = true
		}
	}
	for i, c := range m.cb {
		if c {
			cb[xb[i]] = true
		}
	}
	slide(ia, ca, cb)
	slide(ib, cb, ca)
	return ca, cb
}

// keepShared marks in changed the lines of ids whose id never occurs in
// other, and returns the remaining ids with their indexes in ids.
func keepShared(ids, other []int32, n int, changed []bool) (kept, index []int32) {
	seen := make([]bool, n)
	for _, id := range other {
		seen[id] = true
	}
	kept = make([]int32, 0, len(ids))
	index = make([]int32, 0, len(ids))
	for i, id := range ids {
		if seen[id] {
			kept = append(kept, id)
			index = append(index, int32(i))
		} else {
			changed[i] = true
		}
	}
	return kept, index
}
