package toolbash

import "unicode/utf8"

// incompleteSuffix returns how many bytes at the end of b are the start of
// a valid UTF-8 character whose remaining bytes have not arrived yet (0 to
// 3). Invalid bytes are never held back: they count as complete.
func incompleteSuffix(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-3; i-- {
		c := b[i]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[i:]) {
				return 0
			}
			return len(b) - i
		}
	}
	return 0
}

// runeStartSkip returns how many leading bytes of b to skip so that b
// starts at a character boundary: the continuation bytes at its start, at
// most 3 (more cannot belong to one character).
func runeStartSkip(b []byte) int {
	n := 0
	for n < len(b) && n < 3 && !utf8.RuneStart(b[n]) {
		n++
	}
	if n < len(b) && !utf8.RuneStart(b[n]) {
		return 0 // garbage, not a cut character: keep it
	}
	return n
}

// cutBack returns the largest n' <= n such that cutting b at n' does not
// split a character (b[n'] starts one), backing off at most 3 bytes; when
// no boundary is that close (invalid bytes), n itself.
func cutBack(b []byte, n int) int {
	if n >= len(b) {
		return len(b)
	}
	for i := n; i > 0 && i >= n-3; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return n
}
