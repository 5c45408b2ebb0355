package toolfs

import (
	"bytes"
	"unicode/utf8"
)

// sniffLen is how many leading bytes read looks at for a NUL byte.
const sniffLen = 8192

// bom is the UTF-8 byte order mark.
var bom = []byte{0xEF, 0xBB, 0xBF}

// textProblem returns "" when b reads as text, else why not: "binary file"
// (a NUL byte in the first 8 KiB) or "invalid UTF-8 text".
func textProblem(b []byte) string {
	if bytes.IndexByte(b[:min(len(b), sniffLen)], 0) >= 0 {
		return "binary file"
	}
	if !utf8.Valid(b) {
		return "invalid UTF-8 text"
	}
	return ""
}

// editProblem is textProblem for a file about to be edited: a NUL byte
// anywhere makes it binary.
func editProblem(b []byte) string {
	if bytes.IndexByte(b, 0) >= 0 {
		return "binary file"
	}
	if !utf8.Valid(b) {
		return "invalid UTF-8 text"
	}
	return ""
}

// usesCRLF reports whether text's line ending style is CRLF: in its first
// 4096 bytes, "\r\n" pairs outnumber bare "\n".
func usesCRLF(text []byte) bool {
	head := text[:min(len(text), 4096)]
	crlf := bytes.Count(head, []byte("\r\n"))
	return crlf > bytes.Count(head, []byte{'\n'})-crlf
}

// toLF returns s with every "\r\n" replaced by "\n".
func toLF(s string) string {
	if !containsCR(s) {
		return s
	}
	return string(bytes.ReplaceAll([]byte(s), []byte("\r\n"), []byte("\n")))
}

func containsCR(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' {
			return true
		}
	}
	return false
}

// lfView is a text with its "\r\n" pairs read as "\n", with the means to
// map positions back to the original bytes, so an edit found in the
// normalized text can be applied to the original and leave every other
// byte as it was.
type lfView struct {
	raw []byte
	lf  []byte
	// dropped lists, ascending, the positions in lf of the "\n" of every
	// "\r\n" pair of raw (whose "\r" lf lacks).
	dropped []int
}

// newLFView builds the view of raw.
func newLFView(raw []byte) *lfView {
	v := &lfView{raw: raw}
	if !bytes.Contains(raw, []byte("\r\n")) {
		v.lf = raw
		return v
	}
	v.lf = make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\r' && i+1 < len(raw) && raw[i+1] == '\n' {
			v.dropped = append(v.dropped, len(v.lf))
			continue
		}
		v.lf = append(v.lf, raw[i])
	}
	return v
}

// rawPos maps a position of lf to raw: the "\r" of a pair belongs to the
// "\n" after it, so a boundary before that "\n" is also before the "\r".
func (v *lfView) rawPos(i int) int {
	// count of dropped positions < i
	lo, hi := 0, len(v.dropped)
	for lo < hi {
		m := (lo + hi) / 2
		if v.dropped[m] < i {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return i + lo
}

// replace returns raw with the lf ranges [starts[k], starts[k]+n) replaced
// by repl; ranges are ascending and disjoint.
func (v *lfView) replace(starts []int, n int, repl []byte) []byte {
	out := make([]byte, 0, len(v.raw)+len(starts)*(len(repl)-n))
	prev := 0
	for _, s := range starts {
		rs, re := v.rawPos(s), v.rawPos(s+n)
		out = append(out, v.raw[prev:rs]...)
		out = append(out, repl...)
		prev = re
	}
	return append(out, v.raw[prev:]...)
}

// crlfText returns s (LF-normalized) with every "\n" written as "\r\n".
func crlfText(s string) string {
	return string(bytes.ReplaceAll([]byte(s), []byte{'\n'}, []byte("\r\n")))
}
