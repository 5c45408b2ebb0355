package hunks

import (
	"bytes"
	"unicode/utf8"
)

// isBinary reports whether b has a NUL byte or is not valid UTF-8.
func isBinary(b []byte) bool {
	return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b)
}

// normalizeLF returns b with every "\r\n" replaced by "\n". It returns b
// itself when there is no "\r" and a new slice otherwise (b is never written).
func normalizeLF(b []byte) []byte {
	if bytes.IndexByte(b, '\r') < 0 {
		return b
	}
	return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
}

// countLines returns the number of lines of b: its "\n" count, plus one when
// b is not empty and does not end in "\n".
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// commonPrefix returns the length in bytes of the common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	const chunk = 512
	for i+chunk <= n && bytes.Equal(a[i:i+chunk], b[i:i+chunk]) {
		i += chunk
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix returns the length in bytes of the common suffix of a and b.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	const chunk = 512
	for i+chunk <= n && bytes.Equal(a[len(a)-i-chunk:len(a)-i], b[len(b)-i-chunk:len(b)-i]) {
		i += chunk
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// span is one line of a buffer: bytes [start, end) without the "\n"; nl
// tells whether a "\n" follows at end.
type span struct {
	start, end int
	nl         bool
}

// key returns the line's bytes including its "\n" when it has one: the
// identity used to compare lines.
func (s span) key(buf []byte) []byte {
	if s.nl {
		return buf[s.start : s.end+1]
	}
	return buf[s.start:s.end]
}

// splitLines appends the lines of buf[from:to] to dst. from must be 0 or
// follow a "\n"; to must be len(buf) or follow a "\n".
func splitLines(dst []span, buf []byte, from, to int) []span {
	for from < to {
		i := bytes.IndexByte(buf[from:to], '\n')
		if i < 0 {
			return append(dst, span{from, to, false})
		}
		dst = append(dst, span{from, from + i, true})
		from += i + 1
	}
	return dst
}

// side is the part of one file that hunks can touch: the lines that differ
// from the other file plus up to Context unchanged lines on either side.
type side struct {
	buf   []byte
	lines []span // the window's lines, in file order
	first int    // 0-based file line number of lines[0]
	// post is the number of unchanged lines after the middle (at most
	// Context); atEOF is true when the window reaches the end of the file.
	post  int
	atEOF bool
}

// window holds both files' windows. Both windows start with the same pre
// unchanged lines; mid returns the lines between the common prefix and the
// common suffix, which the diff core compares.
type window struct {
	a, b side
	pre  int
}

// mid returns s's lines between the common prefix and the common suffix.
func (w *window) mid(s *side) []span {
	return s.lines[w.pre : len(s.lines)-s.post]
}

// newWindow trims the common leading and trailing lines of a and b and
// returns the window around the rest, or nil when a and b are equal.
func newWindow(a, b []byte) *window {
	if bytes.Equal(a, b) {
		return nil
	}
	// Common prefix, backed up to the start of the line where they differ.
	p := commonPrefix(a, b)
	p = bytes.LastIndexByte(a[:p], '\n') + 1
	// Common suffix of what is left, moved forward to a line start on both.
	s := commonSuffix(a[p:], b[p:])
	ea, eb := len(a)-s, len(b)-s
	if s > 0 && !(lineStart(a, ea, p) && lineStart(b, eb, p)) {
		i := bytes.IndexByte(a[ea:], '\n')
		if i < 0 {
			ea, eb = len(a), len(b)
		} else {
			ea, eb = ea+i+1, eb+i+1
		}
	}
	// Up to Context lines before the middle (identical on both sides).
	start := p
	pre := 0
	for pre < Context && start > 0 {
		start = bytes.LastIndexByte(a[:start-1], '\n') + 1
		pre++
	}
	first := bytes.Count(a[:start], []byte{'\n'})
	w := &window{pre: pre}
	w.a = newSide(a, start, ea, first)
	w.b = newSide(b, start, eb, first)
	return w
}

// lineStart reports whether offset i of buf starts a line, given that p (the
// end of the common prefix) does.
func lineStart(buf []byte, i, p int) bool {
	return i == p || buf[i-1] == '\n'
}

// newSide splits buf from start (the window start) through the end e of the
// middle and up to Context lines after it.
func newSide(buf []byte, start, e, first int) side {
	end, post := e, 0
	for post < Context && end < len(buf) {
		i := bytes.IndexByte(buf[end:], '\n')
		if i < 0 {
			end = len(buf)
		} else {
			end += i + 1
		}
		post++
	}
	lines := splitLines(make([]span, 0, bytes.Count(buf[start:end], []byte{'\n'})+1), buf, start, end)
	return side{buf: buf, lines: lines, first: first, post: post, atEOF: end == len(buf)}
}
