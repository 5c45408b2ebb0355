package hunks

// block is one change block in window line indexes: a.lines[a0:a1] removed
// and b.lines[b0:b1] added, with equal lines before and after it.
type block struct{ a0, a1, b0, b1 int }

// blocks lists the change blocks, given the marks on the middle lines.
func (w *window) blocks(ca, cb []bool) []block {
	var out []block
	i, j := 0, 0
	for i < len(ca) || j < len(cb) {
		if (i < len(ca) && ca[i]) || (j < len(cb) && cb[j]) {
			i0, j0 := i, j
			for i < len(ca) && ca[i] {
				i++
			}
			for j < len(cb) && cb[j] {
				j++
			}
			out = append(out, block{w.pre + i0, w.pre + i, w.pre + j0, w.pre + j})
			continue
		}
		i, j = i+1, j+1
	}
	return out
}

// hunks groups the change blocks into hunks with Context lines around them.
func (w *window) hunks(ca, cb []bool) []Hunk {
	bs := w.blocks(ca, cb)
	var out []Hunk
	for len(bs) > 0 {
		n := 1
		for n < len(bs) && bs[n].a0-bs[n-1].a1 <= 2*Context {
			n++
		}
		out = append(out, w.hunk(bs[:n]))
		bs = bs[n:]
	}
	return out
}

// hunk builds one hunk from blocks that share it.
func (w *window) hunk(bs []block) Hunk {
	first, last := bs[0], bs[len(bs)-1]
	// The lines before the first block are unchanged and as many on both
	// sides (all of them before the first hunk, at least 2*Context+1 since
	// the previous hunk's last block otherwise).
	k := min(Context, first.a0, first.b0)
	aLo, bLo := first.a0-k, first.b0-k
	aHi := min(len(w.a.lines), last.a1+Context)
	bHi := min(len(w.b.lines), last.b1+Context)
	h := Hunk{
		OldLines: aHi - aLo,
		NewLines: bHi - bLo,
	}
	h.OldStart = startLine(w.a.first, aLo, h.OldLines)
	h.NewStart = startLine(w.b.first, bLo, h.NewLines)
	oldText, oldBase := joined(w.a, aLo, aHi)
	newText, newBase := joined(w.b, bLo, bHi)

	h.FirstChange = w.b.first + first.b0 + 1
	if first.b0 == len(w.b.lines) && w.b.atEOF {
		h.FirstChange = max(1, w.b.first+len(w.b.lines))
	}

	text := func(s side, base int, t string, i int) Line {
		l := s.lines[i]
		return Line{Text: t[l.start-base : l.end-base], NoNewline: !l.nl}
	}
	lines := make([]Line, 0, h.OldLines+last.b1-first.b0)
	ctx := func(from, to int) {
		for i := from; i < to; i++ {
			l := text(w.a, oldBase, oldText, i)
			l.Kind = ' '
			lines = append(lines, l)
		}
	}
	ctx(aLo, first.a0)
	for n, bl := range bs {
		if n > 0 {
			ctx(bs[n-1].a1, bl.a0)
		}
		for i := bl.a0; i < bl.a1; i++ {
			l := text(w.a, oldBase, oldText, i)
			l.Kind = '-'
			lines = append(lines, l)
		}
		for i := bl.b0; i < bl.b1; i++ {
			l := text(w.b, newBase, newText, i)
			l.Kind = '+'
			lines = append(lines, l)
		}
	}
	ctx(last.a1, aHi)
	h.Lines = lines

	if h.OldLines > 0 && oldText == newText {
		// Only the final newline differs: mark the side that lacks it.
		switch {
		case h.NewLines == 0:
			newText = NoNewlineMarker
		case !w.b.lines[bHi-1].nl:
			newText += "\n" + NoNewlineMarker
		default:
			oldText += "\n" + NoNewlineMarker
		}
	}
	if h.OldLines > 0 {
		h.OldText = &oldText
	}
	h.NewText = newText
	return h
}

// startLine returns the unified-diff start line of a range of count lines
// beginning at window index lo: its 1-based number, or the number of the
// line before it when count is 0.
func startLine(first, lo, count int) int {
	if count == 0 {
		return first + lo
	}
	return first + lo + 1
}

// joined returns the lines s.lines[lo:hi] joined by "\n" (one copy of the
// bytes) and the buffer offset the text starts at.
func joined(s side, lo, hi int) (string, int) {
	if lo >= hi {
		return "", 0
	}
	from, to := s.lines[lo].start, s.lines[hi-1].end
	return string(s.buf[from:to]), from
}
