package hunks

// slide moves each run of changed lines on one side (ids, ch) to a canonical
// place among the equally short scripts. A run [start, end) can move up by
// one line when the line before it equals its last line, and down by one
// when its first line equals the line after it; either move leaves the
// unchanged lines, in order, exactly as they were, so the script stays valid
// and as short. Each run is moved up as far as it goes (merging with runs it
// meets), then down as far as it goes (merging again), repeated until it
// stops growing; then it is moved back up to the last place where its end
// met a change on the other side (och), if it passed one, so that removed
// and added lines end up in one block.
//
// j tracks the line of the other side paired with the unchanged line at
// end; the run ends "aligned" when the line of och just before j is
// changed.
func slide(ids []int32, ch, och []bool) {
	n := len(ch)
	other := func(j int) bool { return j >= 0 && j < len(och) && och[j] }
	end, j := 0, 0
	for {
		// Find the next run, keeping j paired with end.
		for end < n && !ch[end] {
			for other(j) {
				j++
			}
			end, j = end+1, j+1
		}
		if end == n {
			return
		}
		start := end
		for end < n && ch[end] {
			end++
		}
		for other(j) {
			j++
		}
		aligned := n // none yet
		for {
			size := end - start
			for start > 0 && ids[start-1] == ids[end-1] {
				start, end = start-1, end-1
				ch[start], ch[end] = true, false
				for start > 0 && ch[start-1] {
					start--
				}
				j--
				for other(j) {
					j--
				}
			}
			aligned = n
			if other(j - 1) {
				aligned = end
			}
			for end < n && ids[start] == ids[end] {
				ch[start], ch[end] = false, true
				start, end = start+1, end+1
				for end < n && ch[end] {
					end++
				}
				j++
				for other(j) {
					aligned = end
					j++
				}
			}
			if end-start == size {
				break
			}
		}
		for aligned < end {
			start, end = start-1, end-1
			ch[start], ch[end] = true, false
			j--
			for other(j) {
				j--
			}
		}
	}
}
