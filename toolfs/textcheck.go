package toolfs

import (
	"bytes"
	"unicode/utf8"
)

// textCheck validates a byte stream written to it in pieces: it notes a NUL
// byte in the first sniffLen bytes and any invalid UTF-8, also across
// piece boundaries.
type textCheck struct {
	n     int64  // bytes seen
	carry []byte // the start of a rune cut by the last piece (at most 3 bytes)
	nul   bool   // a NUL byte in the first sniffLen bytes
	bad   bool   // invalid UTF-8 seen
}

// Write checks p; it never fails.
func (c *textCheck) Write(p []byte) (int, error) {
	n := len(p)
	if c.n < sniffLen && bytes.IndexByte(p[:min(int64(len(p)), sniffLen-c.n)], 0) >= 0 {
		c.nul = true
	}
	c.n += int64(n)
	if c.bad {
		return n, nil
	}
	if len(c.carry) > 0 {
		tmp := c.carry
		i := 0
		for i < len(p) && !utf8.FullRune(tmp) {
			tmp = append(tmp, p[i])
			i++
		}
		if !utf8.FullRune(tmp) {
			c.carry = tmp
			return n, nil
		}
		r, size := utf8.DecodeRune(tmp)
		if r == utf8.RuneError && size <= 1 || size != len(tmp) {
			c.bad = true
			return n, nil
		}
		c.carry = c.carry[:0]
		p = p[i:]
	}
	// Keep a rune cut at the end of p for the next piece.
	start := len(p)
	for k := len(p) - 1; k >= 0 && k >= len(p)-utf8.UTFMax; k-- {
		if p[k]&0xC0 != 0x80 {
			start = k
			break
		}
	}
	if start < len(p) && !utf8.FullRune(p[start:]) {
		c.carry = append(c.carry[:0], p[start:]...)
		p = p[:start]
	}
	if !utf8.Valid(p) {
		c.bad = true
	}
	return n, nil
}

// problem is textProblem for everything written: "" for text, else
// "binary file" or "invalid UTF-8 text". A rune cut by the end of the
// stream is invalid.
func (c *textCheck) problem() string {
	switch {
	case c.nul:
		return "binary file"
	case c.bad || len(c.carry) > 0:
		return "invalid UTF-8 text"
	}
	return ""
}
