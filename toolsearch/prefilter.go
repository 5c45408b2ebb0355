package toolsearch

import (
	"bytes"
	"regexp/syntax"
	"unicode/utf8"
)

// A prefilter finds the lines worth matching: Go's regexp scans text
// fast only for a literal prefix, and a pattern like `^\s*// TODO` or
// `(?i)needle` would otherwise run its automaton over every byte of the
// tree. The pattern's syntax tree gives a few literals, one of which
// every match must contain; only lines holding one are matched with the
// full pattern, which still decides. A pattern with no such literal is
// matched as before.

// maxNeedles bounds the literals of an alternation taken as a prefilter.
const maxNeedles = 8

// needle is one required literal.
type needle struct {
	lit []byte
	// fold: match ASCII letters in either case (the pattern folds case;
	// lit then holds only bytes whose case variants are ASCII, so a byte
	// search finds every place).
	fold bool
	// anchor is the offset in lit of the byte searched for (a non-letter
	// when there is one), and alt its other case (same as lit[anchor]
	// when it has none).
	anchor   int
	alt      byte
	nextA    int // cached: the next place of lit[anchor] from a position, -1 none
	nextB    int // cached: the next place of alt
	searched int // the position the caches are valid from
}

// prefilter is a set of needles; any match holds one of them.
type prefilter struct{ needles []needle }

// newPrefilter returns the prefilter of the pattern src (with its
// flags, as compiled), or nil when there is no useful one: the pattern is
// a plain literal (regexp already searches it fast) or requires no
// literal.
func newPrefilter(src string) *prefilter {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	set := required(re)
	if len(set) == 0 {
		return nil
	}
	p := &prefilter{}
	for _, n := range set {
		p.needles = append(p.needles, n.prepare())
	}
	return p
}

// required returns literals one of which every match of re contains, or
// nil when it cannot tell.
func required(re *syntax.Regexp) []needle {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		lit := []byte(string(re.Rune))
		if fold {
			lit = longestFoldSafe(re.Rune)
			if len(lit) == 0 {
				return nil
			}
		}
		return []needle{{lit: lit, fold: fold}}
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []needle
		for _, s := range re.Sub {
			if set := required(s); set != nil && better(set, best) {
				best = set
			}
		}
		return best
	case syntax.OpAlternate:
		var all []needle
		for _, s := range re.Sub {
			set := required(s)
			if set == nil {
				return nil
			}
			all = append(all, set...)
		}
		if len(all) > maxNeedles {
			return nil
		}
		return all
	}
	return nil
}

// better reports whether set a is a better prefilter than b: a longer
// shortest literal, then fewer literals.
func better(a, b []needle) bool {
	if b == nil {
		return true
	}
	ma, mb := minLen(a), minLen(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func minLen(set []needle) int {
	m := -1
	for _, n := range set {
		if m < 0 || len(n.lit) < m {
			m = len(n.lit)
		}
	}
	return m
}

// longestFoldSafe returns the longest run of rs whose case variants are
// all ASCII (letters other than k and s, which fold to the Kelvin sign
// and the long s, digits, punctuation), as bytes; any substring of a
// required literal is required too.
func longestFoldSafe(rs []rune) []byte {
	best, start := []rune(nil), 0
	for i := 0; i <= len(rs); i++ {
		if i == len(rs) || !foldSafe(rs[i]) {
			if i-start > len(best) {
				best = rs[start:i]
			}
			start = i + 1
		}
	}
	return []byte(string(best))
}

func foldSafe(r rune) bool {
	if r >= utf8.RuneSelf {
		return false
	}
	switch r {
	case 'k', 'K', 's', 'S':
		return false
	}
	return true
}

// other returns c's other ASCII case, or c.
func other(c byte) byte {
	switch {
	case c >= 'a' && c <= 'z':
		return c - 'a' + 'A'
	case c >= 'A' && c <= 'Z':
		return c - 'A' + 'a'
	}
	return c
}

// prepare picks the searched byte: for a folding needle a byte without
// case if there is one, else its first letter in both cases.
func (n needle) prepare() needle {
	n.anchor = 0
	if n.fold {
		for i, c := range n.lit {
			if other(c) == c {
				n.anchor = i
				break
			}
		}
	}
	n.alt = n.lit[n.anchor]
	if n.fold {
		n.alt = other(n.lit[n.anchor])
	}
	n.searched = -1
	return n
}

// reset forgets the cached places (a new piece of text).
func (p *prefilter) reset() {
	for i := range p.needles {
		p.needles[i].searched = -1
	}
}

// next returns the offset of the first place at or after pos where a
// needle may start in h, or -1.
func (p *prefilter) next(h []byte, pos int) int {
	best := -1
	for i := range p.needles {
		if c := p.needles[i].next(h, pos); c >= 0 && (best < 0 || c < best) {
			best = c
		}
	}
	return best
}

// next returns the first place of n at or after pos in h, or -1. The
// places found are cached, so that calls with rising pos read h once
// (an alternation asks every needle at every step).
func (n *needle) next(h []byte, pos int) int {
	if !n.fold {
		if n.searched >= 0 && pos >= n.searched && (n.nextA == -1 || n.nextA >= pos) {
			return n.nextA
		}
		n.searched = pos
		n.nextA = -1
		if i := bytes.Index(h[pos:], n.lit); i >= 0 {
			n.nextA = pos + i
		}
		return n.nextA
	}
	for {
		a := n.scan(h, pos)
		if a < 0 {
			return -1
		}
		start := a - n.anchor
		if start+len(n.lit) <= len(h) && bytes.EqualFold(h[start:start+len(n.lit)], n.lit) {
			return start
		}
		pos = start + 1
		if pos+len(n.lit) > len(h) {
			return -1
		}
	}
}

// scan returns the first place at or after pos+anchor of the anchor byte
// in either case, keeping the next place of each case so that the text is
// read once.
func (n *needle) scan(h []byte, pos int) int {
	from := pos + n.anchor
	if from >= len(h) {
		return -1
	}
	if n.searched < 0 || from < n.searched {
		n.nextA, n.nextB = -2, -2
	}
	n.searched = from
	find := func(cached int, c byte) int {
		if cached == -1 || cached >= from {
			return cached
		}
		if i := bytes.IndexByte(h[from:], c); i >= 0 {
			return from + i
		}
		return -1
	}
	n.nextA = find(n.nextA, n.lit[n.anchor])
	if n.alt == n.lit[n.anchor] {
		return n.nextA
	}
	n.nextB = find(n.nextB, n.alt)
	switch {
	case n.nextA < 0:
		return n.nextB
	case n.nextB < 0:
		return n.nextA
	}
	return min(n.nextA, n.nextB)
}

// clone returns a copy with its own caches.
func (p *prefilter) clone() *prefilter {
	if p == nil {
		return nil
	}
	return &prefilter{needles: append([]needle(nil), p.needles...)}
}
