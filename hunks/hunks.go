package hunks

import "errors"

// Context is the number of unchanged lines shown before and after a change.
// Two changes separated by at most 2*Context unchanged lines share a hunk.
const Context = 3

// NoNewlineMarker is the line GNU diff prints after a line that lacks the
// final newline. It is appended to a hunk's text only to make a
// final-newline-only change visible (see the package doc).
const NoNewlineMarker = `\ No newline at end of file`

// ErrBinary is returned by Compute when either side has a NUL byte or is not
// valid UTF-8. No text hunks exist for such input.
var ErrBinary = errors.New("hunks: binary or non-UTF-8 input")

// Line is one line of a hunk body, as a unified diff prints it.
type Line struct {
	// Kind is ' ' for context, '-' for a removed line, '+' for an added line.
	Kind byte
	// Text is the line's bytes without its "\n".
	Text string
	// NoNewline is true when the line is the last line of its file and has
	// no "\n"; a unified diff prints NoNewlineMarker after it. A context line
	// with NoNewline lacks the newline on both sides.
	NoNewline bool
}

// Hunk is one applied hunk. Line numbers are 1-based; counts are in lines.
type Hunk struct {
	// OldStart and OldLines are the old-file range. When OldLines is 0,
	// OldStart is the line before the hunk (0 for an empty old file), as in
	// unified diff headers.
	OldStart, OldLines int
	// NewStart and NewLines are the new-file range, with the same rule.
	NewStart, NewLines int
	// OldText is the old range joined by "\n" without a trailing newline; nil
	// only when OldLines is 0. NewText is the same for the new range ("" when
	// NewLines is 0). Either may end with "\n" + NoNewlineMarker, see the
	// package doc.
	OldText *string
	NewText string
	// FirstChange is the 1-based new-file line of the hunk's first changed
	// line. When the hunk's first change only removes lines it is the line
	// after the removed block (the line now at that place); when nothing
	// follows the removed block it is the new file's last line (1 when the
	// new file is empty).
	FirstChange int
	// Lines is the hunk body in unified-diff order: context, then for each
	// change block its removed lines before its added lines.
	Lines []Line
}

// Compute returns the hunks between before and after, in file order, with
// non-overlapping ranges. Both sides are LF-normalized first ("\r\n" → "\n").
// Identical inputs (after normalization) give no hunks and a nil error.
// Either side with a NUL byte or invalid UTF-8 gives ErrBinary.
// The inputs are not modified and no part of them is retained.
func Compute(before, after []byte) ([]Hunk, error) {
	if isBinary(before) || isBinary(after) {
		return nil, ErrBinary
	}
	a, b := normalizeLF(before), normalizeLF(after)
	w := newWindow(a, b)
	if w == nil {
		return nil, nil
	}
	ca, cb := diffLines(a, w.mid(&w.a), b, w.mid(&w.b), bound(countLines(a), countLines(b)))
	return w.hunks(ca, cb), nil
}

// bound is the largest edit distance D (removed + added lines) for which the
// result is guaranteed minimal: max(1000, 5% of the lines of both sides).
func bound(linesA, linesB int) int {
	return max(1000, (linesA+linesB)/20)
}

// Changed returns how many lines h removes and adds (its '-' and '+'
// lines).
func (h Hunk) Changed() (removed, added int) {
	for _, l := range h.Lines {
		switch l.Kind {
		case '-':
			removed++
		case '+':
			added++
		}
	}
	return removed, added
}

// ChangeLines returns, for each change block of h (a run of removed and
// added lines between context lines), the 1-based new-file line of its
// first changed line, by the rule of FirstChange: the first added line,
// or for a block that only removes lines the line now at its place (the
// new file's last line when nothing follows it, 1 when the new file is
// empty). The first entry is h.FirstChange. Two changes a few lines
// apart share a hunk (see Context) but get a line each, so a card can
// point at both.
func (h Hunk) ChangeLines() []int {
	// next is the new-file line of the next new-side line.
	next := h.NewStart
	if h.NewLines == 0 {
		next++
	}
	last := max(1, h.NewStart+h.NewLines-1) // the hunk's last new line
	var out []int
	inBlock := false
	for _, l := range h.Lines {
		if l.Kind == ' ' {
			inBlock = false
			next++
			continue
		}
		if !inBlock {
			// A block with no new line after it in the hunk ends the
			// file (a hunk keeps Context lines after every change).
			out = append(out, min(next, last))
			inBlock = true
		}
		if l.Kind == '+' {
			next++
		}
	}
	return out
}
