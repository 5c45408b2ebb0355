package tools

import (
	"bytes"
	"slices"
	"unicode/utf8"
)

// quickValid reports whether raw is certainly arguments that Define's
// full path (ParseArgs, Spec.Validate, decodeInto) accepts without
// changing them: one JSON object (whitespace around it allowed) that
// spec finds no violation in, and in which no key would be dropped for
// filling a field of the key node n only through case folding. Then
// decoding is json.Unmarshal of raw itself, which the full path does too,
// and the arguments need no parsed value: quickValid reads raw once,
// without allocating.
//
// false means "not certain", not "invalid": the full path then decides
// and words the violations, so every text stays the full path's. Besides
// everything invalid, these give false: empty text, keys with escapes
// or invalid UTF-8, an enum value that is not a plain UTF-8 string, an
// unknown property type, and an object level of more than 64 properties.
//
// A key given twice in one object gives false: the full path refuses it
// (ParseArgs, duplicateKeys). Keys are compared as raw bytes, which is
// exact since keys with escapes already give false; an object whose keys,
// with those of the objects around it, exceed maxQuickKeys gives false
// too.
func quickValid(raw []byte, spec []NamedProp, n *keyNode) bool {
	s := quickScanner{data: raw}
	return s.args(spec, n)
}

// args is quickValid on s.data.
func (s *quickScanner) args(spec []NamedProp, n *keyNode) bool {
	s.space()
	if s.pos == len(s.data) || s.data[s.pos] != '{' {
		return false
	}
	s.depth = -1
	if !s.object(spec, true, n) {
		return false
	}
	s.space()
	return s.pos == len(s.data)
}

// quickScanner reads JSON text at pos; each method reports false on
// anything it is not certain of, leaving pos anywhere.
type quickScanner struct {
	data  []byte
	pos   int
	depth int // of the object being read; 0 is the arguments object

	// top holds the first len(top) members of the arguments object
	// when capture is set; more set overflow.
	capture  bool
	overflow bool
	ntop     int
	top      [maxFlatFields]member

	// keys holds the bounds in data of the first nkeys keys of the
	// objects being read, outermost first, to find one given twice.
	nkeys int
	keys  [maxQuickKeys][2]int
}

// maxQuickKeys bounds the keys of the open objects (the one being read
// and those around it) that quickValid remembers.
const maxQuickKeys = 64

// member is a key and value of the arguments object, as bounds in data
// (a string value without its quotes).
type member struct {
	key, val [2]int
	kind     byte // '"', '0' (number), 't', 'f', 'n', '{' or '['
	escaped  bool // a string value holds an escape
}

// maxQuickProps bounds the properties of one level that quickValid
// checks (the present ones are a uint64 bit set).
const maxQuickProps = 64

func (s *quickScanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// object reads an object at '{'. validate says whether props are
// checked (a property whose Spec gives no Properties checks only the
// type); n is the key node of the value's Go type (nil: no keys to
// watch), mirroring dropFolded.
func (s *quickScanner) object(props []NamedProp, validate bool, n *keyNode) bool {
	if validate && len(props) > maxQuickProps {
		return false
	}
	s.pos++         // '{'
	var seen uint64 // bit i: props[i] was present
	s.depth++
	base := s.nkeys // this object's keys are keys[base:nkeys]
	defer func() { s.depth--; s.nkeys = base }()
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return !validate || requiredPresent(props, seen)
	}
	for {
		s.space()
		start, end, escaped, ok := s.str()
		if !ok || escaped {
			return false
		}
		key := s.data[start:end]
		if !utf8.Valid(key) || !s.newKey(base, start, end) {
			// Keys of invalid UTF-8 decode to U+FFFD: two different ones
			// may be the same key.
			return false
		}
		s.space()
		if s.pos == len(s.data) || s.data[s.pos] != ':' {
			return false
		}
		s.pos++
		s.space()

		var prop *Prop
		if validate {
			for i := range props {
				if props[i].Name == string(key) {
					prop = &props[i].Prop
					seen |= 1 << i
					break
				}
			}
		}
		var child *keyNode
		watch := true // the value's keys matter to decoding
		if n != nil {
			if n.fields != nil {
				c, exact := n.fields[string(key)]
				if !exact {
					if foldsToAny(string(key), n.names) {
						return false // dropFolded would drop it
					}
					watch = false
				}
				child = c
			} else {
				child = n.elem
			}
		}
		if !watch {
			child = nil
		}
		valStart := s.pos
		if !s.value(prop, child) {
			return false
		}
		if s.capture && s.depth == 0 {
			s.note(start, end, valStart)
		}
		s.space()
		if s.pos == len(s.data) {
			return false
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return !validate || requiredPresent(props, seen)
		default:
			return false
		}
	}
}

// newKey remembers the key data[start:end] of the object whose keys
// start at keys[base], and reports false when that object already has it
// or there is no room left to remember it.
func (s *quickScanner) newKey(base, start, end int) bool {
	key := s.data[start:end]
	for _, k := range s.keys[base:s.nkeys] {
		if bytes.Equal(s.data[k[0]:k[1]], key) {
			return false
		}
	}
	if s.nkeys == len(s.keys) {
		return false
	}
	s.keys[s.nkeys] = [2]int{start, end}
	s.nkeys++
	return true
}

// note records the member whose key is data[kstart:kend] and whose value
// was read from vstart to pos.
func (s *quickScanner) note(kstart, kend, vstart int) {
	if s.ntop == len(s.top) {
		s.overflow = true
		return
	}
	m := member{key: [2]int{kstart, kend}, val: [2]int{vstart, s.pos}, kind: s.data[vstart]}
	switch {
	case m.kind == '"':
		m.val = [2]int{vstart + 1, s.pos - 1}
		m.escaped = bytes.IndexByte(s.data[vstart+1:s.pos-1], '\\') >= 0
	case m.kind == '-' || (m.kind >= '0' && m.kind <= '9'):
		m.kind = '0'
	}
	s.top[s.ntop] = m
	s.ntop++
}

// requiredPresent reports whether every required property of props is
// in seen.
func requiredPresent(props []NamedProp, seen uint64) bool {
	for i := range props {
		if props[i].Prop.Required && seen&(1<<i) == 0 {
			return false
		}
	}
	return true
}

// value reads one value. prop, when non-nil, is what Spec.Validate
// checks it against; n is its key node.
func (s *quickScanner) value(prop *Prop, n *keyNode) bool {
	if s.pos == len(s.data) {
		return false
	}
	c := s.data[s.pos]
	if prop != nil {
		// The value must have the property's type, and an enum allows
		// only strings.
		want := byte(0)
		switch prop.Type {
		case TypeString:
			want = '"'
		case TypeNumber:
			want = '0'
		case TypeBoolean:
			want = 't'
		case TypeObject:
			want = '{'
		case TypeArray:
			want = '['
		default:
			return false
		}
		got := c
		switch {
		case c == '-' || (c >= '0' && c <= '9'):
			got = '0'
		case c == 'f':
			got = 't'
		}
		if got != want || (prop.Enum != nil && want != '"') {
			return false
		}
	}
	switch {
	case c == '"':
		start, end, escaped, ok := s.str()
		if !ok {
			return false
		}
		if prop != nil && prop.Enum != nil {
			v := s.data[start:end]
			return !escaped && utf8.Valid(v) && slices.Contains(prop.Enum, string(v))
		}
		return true
	case c == '{':
		if prop != nil {
			return s.object(prop.Properties, prop.Properties != nil, n)
		}
		return s.object(nil, false, n)
	case c == '[':
		var items *Prop
		if prop != nil {
			items = prop.Items
		}
		var elem *keyNode
		if n != nil {
			elem = n.elem
		}
		return s.array(items, elem)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return false
}

// array reads an array at '['; items, when non-nil, checks every element.
func (s *quickScanner) array(items *Prop, n *keyNode) bool {
	s.pos++ // '['
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return true
	}
	for {
		s.space()
		if !s.value(items, n) {
			return false
		}
		s.space()
		if s.pos == len(s.data) {
			return false
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return true
		default:
			return false
		}
	}
}

// str reads a string at '"' and returns the bounds of its contents and
// whether they hold an escape.
func (s *quickScanner) str() (start, end int, escaped, ok bool) {
	if s.pos == len(s.data) || s.data[s.pos] != '"' {
		return 0, 0, false, false
	}
	s.pos++
	start = s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			end = s.pos
			s.pos++
			return start, end, escaped, true
		case c == '\\':
			escaped = true
			if s.pos+1 == len(s.data) {
				return 0, 0, false, false
			}
			switch s.data[s.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos += 2
			case 'u':
				if s.pos+6 > len(s.data) {
					return 0, 0, false, false
				}
				for _, h := range s.data[s.pos+2 : s.pos+6] {
					if !isHex(h) {
						return 0, 0, false, false
					}
				}
				s.pos += 6
			default:
				return 0, 0, false, false
			}
		case c < 0x20:
			return 0, 0, false, false
		default:
			s.pos++
		}
	}
	return 0, 0, false, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (s *quickScanner) literal(word string) bool {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		return false
	}
	s.pos += len(word)
	return true
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *quickScanner) number() bool {
	if s.data[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(s.data) && s.data[s.pos] == '0':
		s.pos++
	case s.pos < len(s.data) && s.data[s.pos] >= '1' && s.data[s.pos] <= '9':
		s.digits()
	default:
		return false
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if !s.digits() {
			return false
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits reads one or more decimal digits.
func (s *quickScanner) digits() bool {
	start := s.pos
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
	}
	return s.pos > start
}
