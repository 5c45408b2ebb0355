// This file scans a JSON-RPC message piece by piece for its top-level
// members, keeping only the id: what the oversized-line reader and the
// set-aside step need without decoding the whole message.

package acp

import (
	"bytes"
	"encoding/json"
)

// msgScan finds, in the bytes of a JSON object fed piece by piece, which
// top-level members it has ("method", "result", "error") and the raw
// value of "id" (at most maxIDBytes), keeping nothing else: a
// streaming scan of strings, escapes and nesting.
type msgScan struct {
	state int // see the scan* constants
	depth int // nesting inside the current value
	inStr bool
	esc   bool
	key   []byte
	keyOK bool // key is short enough to be one we look for
	isID  bool // the value being read is "id"'s
	val   []byte
	valOK bool

	id                       json.RawMessage
	idSeen                   bool
	method, result, errorKey bool

	// pos counts the bytes fed, at is the index of the byte being
	// scanned; [bodyStart, bodyEnd) is the value of the top-level
	// "params" or "result" when it is a string, object or array
	// (bodyEnd 0 until it has ended).
	pos, at            int64
	isBody             bool
	bodyStart, bodyEnd int64
}

// maxIDBytes bounds the raw id kept.
const maxIDBytes = 128

const (
	scanStart   = iota // before '{'
	scanKey            // before a key (or '}')
	scanInKey          // inside a key string
	scanColon          // after a key
	scanValue          // before a value
	scanInValue        // inside a value
	scanComma          // after a value
	scanDone           // the object ended, or it is not one
)

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func (m *msgScan) feed(b []byte) {
	base := m.pos
	m.pos += int64(len(b))
	for i := 0; i < len(b); i++ {
		m.at = base + int64(i)
		if m.state == scanDone {
			return
		}
		if m.state == scanInValue && m.inStr && !m.esc && !m.isID {
			// Inside a string only a quote or a backslash matters: skip
			// to it (a big message is one long string, mostly).
			k := bytes.IndexAny(b[i:], `"\`)
			if k < 0 {
				m.at = base + int64(len(b)-1)
				return
			}
			i += k
			m.at = base + int64(i)
		}
		m.step(b[i])
	}
}

// step takes the message's next byte c.
func (m *msgScan) step(c byte) {
	switch m.state {
	case scanStart:
		m.expect(c, '{', scanKey)
	case scanKey:
		if m.expect(c, '"', scanInKey) {
			m.key, m.keyOK, m.esc = m.key[:0], true, false
		}
	case scanInKey:
		m.keyByte(c)
	case scanColon:
		if m.expect(c, ':', scanValue) {
			m.keyDone()
		}
	case scanValue:
		if !isSpace(c) {
			m.valueStart(c)
		}
	case scanInValue:
		m.valueByte(c)
	case scanComma:
		m.expect(c, ',', scanKey)
	case scanDone:
	}
}

// expect skips blanks; then c must be want, which moves the scan to
// next (true), and anything else ends it (false).
func (m *msgScan) expect(c, want byte, next int) bool {
	if isSpace(c) {
		return false
	}
	m.state = scanDone
	if c == want {
		m.state = next
		return true
	}
	return false
}

// keyByte takes a byte of a top-level member's key.
func (m *msgScan) keyByte(c byte) {
	switch {
	case m.esc:
		m.esc = false
	case c == '\\':
		m.esc, m.keyOK = true, false // no key we look for has escapes
	case c == '"':
		m.state = scanColon
		return
	}
	if m.keyOK && len(m.key) < 8 {
		m.key = append(m.key, c)
	} else {
		m.keyOK = false
	}
}

// keyDone notes which member the key just read names.
func (m *msgScan) keyDone() {
	k := ""
	if m.keyOK {
		k = string(m.key)
	}
	m.isID = k == "id"
	m.isBody = k == "params" || k == "result"
	m.idSeen = m.idSeen || m.isID
	m.method = m.method || k == "method"
	m.result = m.result || k == "result"
	m.errorKey = m.errorKey || k == "error"
	m.val, m.valOK = m.val[:0], true
}

// valueStart takes the first byte c of a member's value.
func (m *msgScan) valueStart(c byte) {
	m.state, m.depth, m.inStr, m.esc = scanInValue, 0, false, false
	if m.isBody {
		m.bodyStart = m.at
	}
	switch c {
	case '"':
		m.inStr = true
	case '{', '[':
		m.depth = 1
	}
	m.add(c)
}

// valueByte takes a later byte c of a member's value: inside a string,
// inside an object or array, or of a number, true, false or null.
func (m *msgScan) valueByte(c byte) {
	switch {
	case m.inStr:
		m.add(c)
		switch {
		case m.esc:
			m.esc = false
		case c == '\\':
			m.esc = true
		case c == '"':
			m.inStr = false
			if m.depth == 0 {
				m.valueDone()
			}
		}
	case m.depth > 0:
		m.add(c)
		switch c {
		case '"':
			m.inStr = true
		case '{', '[':
			m.depth++
		case '}', ']':
			if m.depth--; m.depth == 0 {
				m.valueDone()
			}
		}
	case c == ',':
		m.end()
		m.state = scanKey
	case c == '}':
		m.end()
		m.state = scanDone
	case isSpace(c):
		m.end()
		m.state = scanComma
	default:
		m.add(c)
	}
}

// valueDone ends a string, object or array value.
func (m *msgScan) valueDone() {
	m.endBody()
	m.end()
	m.state = scanComma
}

// add keeps c of "id"'s value, up to maxIDBytes.
func (m *msgScan) add(c byte) {
	if !m.isID || !m.valOK {
		return
	}
	if len(m.val) >= maxIDBytes {
		m.valOK = false
		return
	}
	m.val = append(m.val, c)
}

// endBody records the end of "params"' or "result"'s value, which ends
// with the current byte.
func (m *msgScan) endBody() {
	if m.isBody {
		m.bodyEnd = m.at + 1
		m.isBody = false
	}
}

// end closes a value: "id"'s is kept when it fit.
func (m *msgScan) end() {
	if m.isID && m.valOK {
		m.id = append(json.RawMessage(nil), m.val...)
	}
	m.isID = false
}
