package toolsearch

import (
	"bytes"
	"io"
	"regexp"
	"sync"
)

// Output modes of grep.
const (
	modeFiles   = "files_with_matches"
	modeContent = "content"
	modeCount   = "count"
)

// chunkSize is the read buffer of one file search; a file that fits is
// searched in one piece, a larger one a piece of whole lines at a time.
const chunkSize = 256 << 10

// maxLineBuffer bounds the buffer grown for one very long line; a file
// with a longer line is left out like a binary file.
const maxLineBuffer = 64 << 20

var bufPool = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// outLine is one line of content-mode output.
type outLine struct {
	n     int  // 1-based line number; 0 for a "--" separator
	match bool // a matching line (else a context line)
	// start is the byte offset of the first match in text (matching
	// lines only), for showing a window of a long line.
	start int
	text  []byte // the line without its line end (a copy)
}

// fileResult is what one file's search found.
type fileResult struct {
	// count is the number of matching lines (in files mode, 1 once one
	// was found).
	count int
	// first is the 1-based line of the first match (content and count
	// modes; 0 when unknown).
	first int
	// lines is the content-mode output: at most engine.keep entries.
	lines []outLine
	// more: the search stopped at engine.keep lines with more to show.
	more bool
	// binary: a NUL byte was seen; the file is left out.
	binary bool
}

// engine searches files for one compiled pattern; safe for concurrent
// use (regexp.Regexp is).
type engine struct {
	re      *regexp.Regexp
	mode    string
	context int
	// keep is how many output lines one file may hold in content mode
	// (the head limit plus one, to know that more followed).
	keep int
	// pf, when set, finds the lines worth matching (never changed; each
	// search works on a copy).
	pf *prefilter
	// chunk overrides chunkSize (tests).
	chunk int
}

// search reads r to its end (or to the first match in files mode) and
// returns what it found. A read error is returned with what was found
// before it.
func (e *engine) search(r io.Reader) (fileResult, error) {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	if e.chunk > 0 && e.chunk < len(buf) {
		buf = buf[:e.chunk]
	}
	s := scan{e: e, pf: e.pf.clone()}
	n := 0
	for {
		m, err := r.Read(buf[n:])
		n += m
		eof := err == io.EOF
		if err != nil && !eof {
			return s.res, err
		}
		if !eof && n < len(buf) {
			continue
		}
		piece := buf[:n]
		if !eof {
			cut := bytes.LastIndexByte(piece, '\n')
			if cut < 0 {
				// One line longer than the buffer: grow it.
				if len(buf) >= maxLineBuffer {
					// No text file has such a line: leave it out, like a
					// binary file.
					return fileResult{binary: true}, nil
				}
				nb := make([]byte, 2*len(buf))
				copy(nb, buf[:n])
				buf = nb
				continue
			} else {
				piece = piece[:cut+1]
			}
		}
		if bytes.IndexByte(piece, 0) >= 0 {
			return fileResult{binary: true}, nil
		}
		if s.pf != nil {
			s.pf.reset()
		}
		if s.piece(piece, eof) || eof {
			return s.res, nil
		}
		rest := copy(buf, buf[len(piece):n])
		n = rest
	}
}

// scan is the state of one file's search across pieces.
type scan struct {
	e   *engine
	res fileResult
	// lineNo is the number of lines before the current piece.
	lineNo int
	// lastOut is the last line number written out (content mode).
	lastOut int
	// afterTo is the last line the after-context of a match reaches.
	afterTo int
	// pf is this search's copy of the engine's prefilter (nil: none).
	pf *prefilter
	// ring holds copies of the last context lines of the previous piece
	// (oldest first), for the before-context of a match at the start of
	// the next one.
	ring []outLine
}

var nl = []byte{'\n'}

// lineEnd returns the index of the '\n' ending the line that holds
// offset i of p, or len(p).
func lineEnd(p []byte, i int) int {
	if j := bytes.IndexByte(p[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(p)
}

// trimCR drops a line's CR before its LF.
func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

// piece searches p, which holds whole lines (the last one may lack its
// line end when final). It reports whether the search of the file is
// over (files mode found a match, or content mode holds enough lines).
func (s *scan) piece(p []byte, final bool) bool {
	e := s.e
	content := e.mode == modeContent
	pos, line := 0, s.lineNo+1
	for pos < len(p) {
		// After-context: the lines following a match are read one by
		// one, since any of them may match too.
		if content && line <= s.afterTo {
			le := lineEnd(p, pos)
			text := p[pos:le]
			if loc := e.re.FindIndex(text); loc != nil {
				s.matchLine(line, text, loc[0])
			} else {
				s.emit(outLine{n: line, text: text})
			}
			if s.full() {
				return true
			}
			pos, line = le+1, line+1
			continue
		}
		ls, le, start, ok := s.find(p, pos)
		if ls < 0 {
			break
		}
		text := p[ls:le]
		// Line numbers are counted only where they are shown: every
		// match in content mode, the first one otherwise (line stays
		// behind after that, unused).
		n := line
		if content || s.res.first == 0 {
			n += bytes.Count(p[pos:ls], nl)
		}
		if !ok {
			pos, line = le+1, n+1
			continue
		}
		switch e.mode {
		case modeFiles:
			s.res.count, s.res.first = 1, n
			return true
		case modeCount:
			if s.res.first == 0 {
				s.res.first = n
			}
			s.res.count++
		default:
			s.before(p, ls, n)
			s.matchLine(n, text, start)
			if s.full() {
				return true
			}
		}
		pos, line = le+1, n+1
	}
	if !final && (content || s.res.first == 0) {
		s.lineNo = line - 1 + bytes.Count(p[min(pos, len(p)):], nl)
		if content {
			s.keepRing(p)
		}
	}
	return false
}

// find looks for the next matching line of p at or after pos (a line
// start). It returns the line's bounds [ls, le) and, when ok, the offset
// of the match in it; ok false means the line at [ls, le) turned out not
// to match (the search goes on after it); ls < 0 means no more match.
func (s *scan) find(p []byte, pos int) (ls, le, start int, ok bool) {
	e := s.e
	if s.pf != nil {
		// Only lines holding a required literal can match.
		c := s.pf.next(p, pos)
		if c < 0 {
			return -1, 0, 0, false
		}
		ls = pos
		if i := bytes.LastIndexByte(p[pos:c], '\n'); i >= 0 {
			ls = pos + i + 1
		}
		le = lineEnd(p, c)
		if loc := e.re.FindIndex(p[ls:le]); loc != nil {
			return ls, le, loc[0], true
		}
		return ls, le, 0, false
	}
	loc := e.re.FindIndex(p[pos:])
	if loc == nil {
		return -1, 0, 0, false
	}
	ms, me := pos+loc[0], pos+loc[1]
	if ms == len(p) && ms > 0 && p[ms-1] == '\n' {
		// An empty match after the last line end ("^$", "x*"): there is
		// no line there.
		return -1, 0, 0, false
	}
	ls = pos
	if i := bytes.LastIndexByte(p[pos:ms], '\n'); i >= 0 {
		ls = pos + i + 1
	}
	le = lineEnd(p, ms)
	if me <= le {
		return ls, le, ms - ls, true
	}
	// The match crossed a line end ("\s", "(?s)."): the line must
	// match on its own.
	if l := e.re.FindIndex(p[ls:le]); l != nil {
		return ls, le, l[0], true
	}
	return ls, le, 0, false
}

// matchLine writes the matching line n (content mode).
func (s *scan) matchLine(n int, text []byte, start int) {
	if s.res.first == 0 {
		s.res.first = n
	}
	s.res.count++
	s.emit(outLine{n: n, match: true, start: start, text: text})
	s.afterTo = n + s.e.context
}

// emit appends one output line (copied), with a "--" separator before it
// when it does not follow the last line written.
func (s *scan) emit(l outLine) {
	if s.e.context > 0 && s.lastOut > 0 && l.n > s.lastOut+1 {
		s.res.lines = append(s.res.lines, outLine{})
	}
	l.text = bytes.Clone(trimCR(l.text))
	if l.text == nil {
		l.text = []byte{}
	}
	s.res.lines = append(s.res.lines, l)
	s.lastOut = l.n
}

// full reports whether the file holds enough output lines; it marks
// the result cut.
func (s *scan) full() bool {
	if len(s.res.lines)-s.separators() >= s.e.keep {
		s.res.more = true
		return true
	}
	return false
}

// separators counts the "--" entries written.
func (s *scan) separators() int {
	k := 0
	for _, l := range s.res.lines {
		if l.n == 0 {
			k++
		}
	}
	return k
}

// before writes the before-context of a match on line n, which starts at
// offset ls of p: up to e.context lines after the last line written,
// from p and, at the start of a piece, from the ring.
func (s *scan) before(p []byte, ls, n int) {
	c := s.e.context
	if c == 0 {
		return
	}
	from := max(n-c, s.lastOut+1, 1)
	if from >= n {
		return
	}
	// Collect the lines from..n-1, walking back from ls.
	type span struct{ a, b int }
	var spans []span
	end := ls - 1 // the '\n' ending line n-1
	k := n - 1
	for k >= from && end >= 0 {
		start := bytes.LastIndexByte(p[:end], '\n') + 1
		spans = append(spans, span{start, end})
		end = start - 1
		k--
	}
	// Lines before the piece come from the ring.
	if k >= from {
		for _, r := range s.ring {
			if r.n >= from && r.n <= k {
				s.emit(outLine{n: r.n, text: r.text})
			}
		}
	}
	for i := len(spans) - 1; i >= 0; i-- {
		s.emit(outLine{n: n - 1 - i, text: p[spans[i].a:spans[i].b]})
	}
}

// keepRing keeps the last context lines seen, p's and, when p holds
// fewer, those of the pieces before it, with their numbers, after
// s.lineNo was advanced past p (which ends with a line end).
func (s *scan) keepRing(p []byte) {
	c := s.e.context
	if c == 0 || len(p) == 0 {
		return
	}
	end := len(p) - 1
	var lines []outLine
	for k := 0; k < c && end >= 0; k++ {
		start := bytes.LastIndexByte(p[:end], '\n') + 1
		lines = append(lines, outLine{n: s.lineNo - k, text: bytes.Clone(p[start:end])})
		end = start - 1
	}
	// lines is newest first; older lines come from the ring.
	keep := s.ring[max(0, len(s.ring)-(c-len(lines))):]
	ring := append([]outLine(nil), keep...)
	for i := len(lines) - 1; i >= 0; i-- {
		ring = append(ring, lines[i])
	}
	s.ring = ring
}
