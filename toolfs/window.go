package toolfs

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// The read limits: a read returns a window of whole lines.
const (
	// MaxLines is the default and largest number of lines one read returns.
	MaxLines = 2000
	// MaxLineRunes is the number of characters (runes) a returned line is
	// cut to.
	MaxLineRunes = 2000
	// MaxOutputBytes caps the selected lines: the UTF-8 bytes of each
	// (after cutting), plus 1 for every line after the first.
	MaxOutputBytes = 50 << 10
)

// truncSuffix follows a line cut to MaxLineRunes.
const truncSuffix = "... (line truncated to 2000 chars)"

// keepBytes is the longest line prefix a streaming read keeps: enough for
// MaxLineRunes+2 runes of any width, so a kept prefix shorter than the line
// still tells that the line must be cut.
const keepBytes = (MaxLineRunes + 2) * utf8.UTFMax

// windower selects and numbers the lines of a read window, fed one line at
// a time.
type windower struct {
	offset, limit int // 1-based first line; at most this many lines

	seen   int    // lines fed so far
	shown  int    // lines selected
	size   int    // counted bytes of the selected lines
	capped bool   // a line was refused by the byte cap
	out    []byte // "N: text" lines joined by "\n"
}

// want reports whether the next line may be selected: it is not before
// the window, and the window is neither full nor capped.
func (w *windower) want() bool {
	return w.seen+1 >= w.offset && w.shown < w.limit && !w.capped
}

// done reports whether no later line can be selected.
func (w *windower) done() bool { return w.shown >= w.limit || w.capped }

// skip counts a line that is not selected.
func (w *windower) skip(n int) { w.seen += n }

// add feeds the next line: its bytes without "\n" (a trailing "\r" is
// stripped here). complete is false when line is only the line's first
// keepBytes or more bytes (a streaming read dropped the rest). It returns
// false when the byte cap refused the line; the line is then not counted.
func (w *windower) add(line []byte, complete bool) bool {
	if complete && len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	cut := !complete
	if len(line) > MaxLineRunes {
		if i := runeIndex(line, MaxLineRunes); i >= 0 {
			line, cut = line[:i], true
		}
	}
	n := len(line)
	if cut {
		n += len(truncSuffix)
	}
	if w.shown > 0 {
		n++
	}
	if w.size+n > MaxOutputBytes {
		w.capped = true
		return false
	}
	w.seen++
	w.size += n
	if w.shown > 0 {
		w.out = append(w.out, '\n')
	}
	w.shown++
	w.out = strconv.AppendInt(w.out, int64(w.seen), 10)
	w.out = append(w.out, ": "...)
	w.out = append(w.out, line...)
	if cut {
		w.out = append(w.out, truncSuffix...)
	}
	return true
}

// runeIndex returns the byte index where rune number n (0-based) of b
// starts, or -1 when b has at most n runes.
func runeIndex(b []byte, n int) int {
	for i := 0; i < len(b); {
		if n == 0 {
			return i
		}
		n--
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return -1
}

// body is the window's text between <content> and </content>, given the
// total line count (meaningful when not capped): the numbered lines, a
// blank line and the footer, or the footer alone when no line was selected.
func (w *windower) body(total int) string {
	last := w.offset - 1 + w.shown
	var footer string
	o, e := strconv.Itoa(w.offset), strconv.Itoa(last)
	next := strconv.Itoa(last + 1)
	switch {
	case w.capped:
		footer = "(Output capped. Showing lines " + o + "-" + e + ". Use offset=" + next + " to continue.)"
	case last < total:
		footer = "(Showing lines " + o + "-" + e + " of " + strconv.Itoa(total) + ". Use offset=" + next + " to continue.)"
	default:
		footer = "(End of file - total " + strconv.Itoa(total) + " lines)"
	}
	if w.shown == 0 {
		return footer
	}
	return string(w.out) + "\n\n" + footer
}

// windowBytes selects the window of text (whole, already checked to be
// text, BOM removed) and returns the body and the total line count (lines
// scanned, when capped).
func windowBytes(text []byte, offset, limit int) (body string, total int) {
	w := &windower{offset: offset, limit: limit}
	rest := text
	// Skip the lines before the window without looking at them.
	for w.seen+1 < offset && len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			rest = rest[len(rest):]
		} else {
			rest = rest[i+1:]
		}
		w.skip(1)
	}
	for len(rest) > 0 && !w.done() {
		i := bytes.IndexByte(rest, '\n')
		line := rest
		if i >= 0 {
			line = rest[:i]
		}
		if !w.add(line, true) {
			break
		}
		if i < 0 {
			rest = rest[len(rest):]
		} else {
			rest = rest[i+1:]
		}
	}
	total = w.seen
	if !w.capped {
		total += countLines(rest)
	}
	return w.body(total), total
}

// countLines is the number of lines of b: its "\n" count, plus one when b
// does not end in "\n" (an empty b has none).
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
