package tools

import (
	"encoding/json"
	"strings"
)

// ArgsMemberLimit is the largest member an ArgsScanner keeps, in bytes
// of its raw JSON text (key and value): a longer member (the content of
// a large write) is seen through and left out of Members, so a scanner
// holds at most about this much whatever the size of the arguments.
const ArgsMemberLimit = 64 << 10

// ArgsMembersMax is the most members an ArgsScanner keeps: a tool has a
// few arguments, and a start card needs the first of them. The members
// after them are seen through like a long one, so the members a caller
// copies for every piece that completes one stay bounded (at most
// ArgsMembersMax copies of at most ArgsMemberLimit bytes in all) however
// many the model streams.
const ArgsMembersMax = 32

// ArgsScanner reads the arguments of a tool call while the model streams
// them, in pieces that break anywhere (`{"fi`, `le_path": "a`, `.txt"`),
// and tells which top-level members of the JSON object are complete, so
// a card can name the file long before a large content has streamed.
// Each byte is looked at once. The zero value is ready to use; not safe
// for concurrent use.
//
// A member is complete when its value is: a string at its closing quote,
// an object or array at its closing bracket, a number, true, false or
// null at the delimiter after it. Members holds only complete members
// whose text is valid JSON, the first ArgsMembersMax of them that fit in
// ArgsMemberLimit bytes together. Once
// the text stops being a JSON object (the first non-blank byte is not
// "{", a key is not a string, ...) the scanner stops: Members keeps what
// it had, Done stays false.
type ArgsScanner struct {
	state   scanState
	depth   int  // nesting depth inside a container value
	esc     bool // the previous byte of a string was a backslash
	big     bool // the current member is over ArgsMemberLimit
	cur     []byte
	keyEnd  int    // len(cur) when the key ended (cur holds `"key":value`)
	members []byte // complete members, comma-separated, without braces
	kept    int    // how many members holds
}

type scanState uint8

const (
	scanStart    scanState = iota // before the opening brace
	scanFirstKey                  // after "{": a key or "}"
	scanKey                       // after ",": a key
	scanInKey                     // inside a key string
	scanColon                     // after a key
	scanValue                     // after ":": a value starts
	scanInString                  // inside a string value
	scanInNested                  // inside an object or array value
	scanScalar                    // inside a number, true, false or null
	scanAfter                     // after a value: "," or "}"
	scanDone                      // after the closing brace
	scanBad                       // not a JSON object
)

// Write feeds the next piece of the arguments text and reports whether a
// member became complete in it.
func (s *ArgsScanner) Write(piece string) (changed bool) {
	for i := 0; i < len(piece); i++ {
		if s.state == scanDone || s.state == scanBad {
			return changed
		}
		var done bool
		i, done = s.step(piece, i)
		changed = done || changed
	}
	return changed
}

// step takes piece[i] and, inside a key or a value, the rest of the run
// it starts; it returns the index of the last byte taken (one before i
// when the byte is to be looked at again) and whether a member was
// completed (commit's answer).
func (s *ArgsScanner) step(piece string, i int) (int, bool) {
	switch s.state {
	case scanStart, scanFirstKey, scanKey, scanColon, scanAfter:
		s.between(piece[i])
	case scanValue:
		s.valueStart(piece, i)
	case scanInKey:
		j := s.stringEnd(piece, i)
		s.keep(piece[i:j])
		if j < len(piece) {
			s.keep("\":")
			s.keyEnd = len(s.cur)
			s.state = scanColon
		}
		return j, false
	case scanInString:
		j := s.stringEnd(piece, i)
		s.keep(piece[i:j])
		if j < len(piece) {
			s.keep("\"")
			return j, s.commit()
		}
		return j, false
	case scanInNested:
		j := s.nestedEnd(piece, i)
		s.keep(piece[i:j])
		if j < len(piece) {
			s.keep(piece[j : j+1])
			return j, s.commit()
		}
		return j, false
	case scanScalar:
		if b := piece[i]; isBlank(b) || b == ',' || b == '}' {
			// The delimiter ends the value; it is looked at again.
			return i - 1, s.commit()
		}
		s.keep(piece[i : i+1])
	case scanDone, scanBad:
	}
	return i, false
}

// between takes a byte outside keys and values: blanks, the braces, the
// colon after a key and the commas between members.
func (s *ArgsScanner) between(b byte) {
	if isBlank(b) {
		return
	}
	next := scanBad
	switch {
	case s.state == scanStart && b == '{':
		next = scanFirstKey
	case (s.state == scanFirstKey || s.state == scanKey) && b == '"':
		s.cur, s.big, s.esc = s.cur[:0], false, false
		s.keep("\"")
		next = scanInKey
	case s.state == scanFirstKey && b == '}', s.state == scanAfter && b == '}':
		next = scanDone
	case s.state == scanColon && b == ':':
		next = scanValue
	case s.state == scanAfter && b == ',':
		next = scanKey
	}
	s.state = next
}

// valueStart takes the first byte of a member's value.
func (s *ArgsScanner) valueStart(piece string, i int) {
	switch b := piece[i]; {
	case isBlank(b):
	case b == '"':
		s.keep("\"")
		s.state = scanInString
	case b == '{' || b == '[':
		s.keep(piece[i : i+1])
		s.depth, s.state = 1, scanInNested
	case b == '}' || b == ',' || b == ']' || b == ':':
		s.state = scanBad
	default:
		s.keep(piece[i : i+1])
		s.state = scanScalar
	}
}

// stringEnd returns the index of the quote that closes the string being
// read from piece[i:], or len(piece) when the piece ends first.
func (s *ArgsScanner) stringEnd(piece string, i int) int {
	for ; i < len(piece); i++ {
		if s.esc {
			s.esc = false
			continue
		}
		// Skip to the next byte that matters.
		k := strings.IndexAny(piece[i:], "\"\\")
		if k < 0 {
			return len(piece)
		}
		i += k
		if piece[i] == '"' {
			return i
		}
		s.esc = true
	}
	return len(piece)
}

// nestedEnd returns the index of the bracket that closes the container
// value being read from piece[i:], or len(piece) when the piece ends
// first.
func (s *ArgsScanner) nestedEnd(piece string, i int) int {
	for ; i < len(piece); i++ {
		b := piece[i]
		if s.depth < 0 { // inside a string in the container (depth negated)
			switch {
			case s.esc:
				s.esc = false
			case b == '\\':
				s.esc = true
			case b == '"':
				s.depth = -s.depth
			}
			continue
		}
		switch b {
		case '"':
			s.depth = -s.depth
		case '{', '[':
			s.depth++
		case '}', ']':
			s.depth--
			if s.depth == 0 {
				return i
			}
		}
	}
	return len(piece)
}

// keep appends text to the current member unless it is too long.
func (s *ArgsScanner) keep(text string) {
	if s.big {
		return
	}
	if len(s.cur)+len(text) > ArgsMemberLimit {
		s.big, s.cur = true, s.cur[:0]
		return
	}
	s.cur = append(s.cur, text...)
}

// commit ends the current member: it joins Members when it is short
// enough, fits beside the members kept, and its key and value are valid
// JSON.
func (s *ArgsScanner) commit() bool {
	s.state = scanAfter
	if s.big || s.kept == ArgsMembersMax || len(s.members)+1+len(s.cur) > ArgsMemberLimit ||
		!json.Valid(s.cur[:s.keyEnd-1]) || !json.Valid(s.cur[s.keyEnd:]) {
		return false
	}
	s.kept++
	if len(s.members) > 0 {
		s.members = append(s.members, ',')
	}
	s.members = append(s.members, s.cur...)
	return true
}

// Members returns the complete members so far as a JSON object text
// (`{"file_path":"a.txt"}`; `{}` when there is none).
func (s *ArgsScanner) Members() json.RawMessage {
	out := make([]byte, 0, len(s.members)+2)
	out = append(out, '{')
	out = append(out, s.members...)
	return append(out, '}')
}

// Done reports whether the closing brace of the object has been read
// (bytes after it are not looked at).
func (s *ArgsScanner) Done() bool { return s.state == scanDone }

// PartialArgs returns the complete top-level members of an arguments
// text that may be cut off (a call the model did not finish) as a JSON
// object text, as an ArgsScanner fed the whole text gives them.
func PartialArgs(text string) json.RawMessage {
	var s ArgsScanner
	s.Write(text)
	return s.Members()
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
