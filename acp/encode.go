package acp

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// This file holds the byte-level helpers of the hand-written encoder of
// session updates (encode_update.go). Their output is byte for byte what
// encoding/json writes for the same value: a string escaped the same way
// (with or without HTML escaping), a raw JSON value compacted the same way.

const hexDigits = "0123456789abcdef"

// plainByte[b] is true for the ASCII bytes that a JSON string holds as
// they are even with HTML escaping; htmlByte[b] for the three bytes (<, >,
// &) that are kept only without it. Every other byte below 0x80 is
// escaped.
var plainByte, htmlByte [utf8.RuneSelf]bool

func init() {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		plainByte[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	htmlByte['<'], htmlByte['>'], htmlByte['&'] = true, true, true
}

// appendString appends s as a JSON string, escaped exactly as
// encoding/json escapes it: `"` and `\` with a backslash; \b, \f, \n, \r
// and \t in short form; other bytes below 0x20 as \u00XX; with html, also
// <, > and & as \u003c, \u003e and \u0026; U+2028 and U+2029 always as
// \u2028 and \u2029; each byte of invalid UTF-8 as \ufffd.
func appendString(dst []byte, s string, html bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if plainByte[b] || (!html && htmlByte[b]) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// JSONString returns s as a JSON string value, escaped exactly as
// json.Marshal escapes it (HTML escaping included, invalid UTF-8 as
// U+FFFD).
func JSONString(s string) json.RawMessage {
	return appendString(make([]byte, 0, len(s)+2), s, true)
}

// errInvalidRaw is returned for a raw JSON field that is not one valid
// JSON value.
var errInvalidRaw = errors.New("acp: raw JSON field is not valid JSON")

// appendRaw appends the raw JSON value raw, compacted (whitespace outside
// strings removed) as encoding/json compacts a json.RawMessage; with html,
// <, >, & and U+2028/U+2029 are escaped too. Invalid JSON gives
// errInvalidRaw and dst unchanged.
func appendRaw(dst []byte, raw json.RawMessage, html bool) ([]byte, error) {
	if !json.Valid(raw) {
		return dst, errInvalidRaw
	}
	start, inString, escaped := 0, false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case html && (c == '<' || c == '>' || c == '&'):
				dst = append(dst, raw[start:i]...)
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
				start = i + 1
			case html && c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
				dst = append(dst, raw[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xF])
				i += 2
				start = i + 1
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...), nil
}

// appendKey appends `"name":` after a comma when the object already has
// a member; first reports whether it is the first member and is set to
// false. Names are constant ASCII and need no escaping.
func appendKey(dst []byte, first *bool, name string) []byte {
	if !*first {
		dst = append(dst, ',')
	}
	*first = false
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

// appendStringMember appends the member name: s, escaped with HTML
// escaping.
func appendStringMember(dst []byte, first *bool, name, s string) []byte {
	return appendString(appendKey(dst, first, name), s, true)
}

// appendIntPtr appends *n, or null when n is nil.
func appendIntPtr(dst []byte, n *int) []byte {
	if n == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, int64(*n), 10)
}

// appendStringPtr appends *s (escaped with HTML escaping), or null when s
// is nil.
func appendStringPtr(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return appendString(dst, *s, true)
}
