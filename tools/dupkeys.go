package tools

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Arguments whose JSON text gives one object the same key twice (at any
// depth, the keys compared as decoded, exactly: "a" and "\u0061" are the
// same key, "path" and "PATH" are not) are invalid. encoding/json would
// keep the last value while a reader of the streamed text (the early card,
// ArgsScanner) has already shown the first: refusing them is the only
// way every reader sees the same arguments.

// maxDupViolations bounds the duplicate-key violations one text reports.
const maxDupViolations = 8

// duplicateKeys returns a violation text for each key given twice in one
// object of data, which must be valid JSON (as ParseArgs has decoded it),
// in text order, each key of each object once, at most maxDupViolations:
//
//	duplicate key "<key>" in arguments      (the arguments object)
//	duplicate key "<key>" in "<path>"       (a nested object, e.g. servers[1])
//
// The key is quoted as in the other violation texts (no escaping). nil
// means no key is repeated.
func duplicateKeys(data []byte) []string {
	d := dupScanner{data: data, steps: make([]dupStep, 0, 8)}
	d.value()
	return d.out
}

// dupStep is one step from a value to the one it is in: a member's key,
// or (key nil) an array element's index.
type dupStep struct {
	key   []byte
	index int
}

// place renders the steps to the value being read as the violation
// texts name places: a.b, a[2] ("" for the arguments object).
func (d *dupScanner) place() string {
	path := ""
	for _, st := range d.steps {
		if st.key == nil {
			path += "[" + strconv.Itoa(st.index) + "]"
		} else {
			path = joinKey(path, string(st.key))
		}
	}
	return path
}

// dupScanner walks valid JSON text, looking only at object keys.
type dupScanner struct {
	data  []byte
	pos   int
	steps []dupStep // to the value being read
	out   []string
}

func (d *dupScanner) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// value reads the value at pos (after blanks), which d.steps lead to.
func (d *dupScanner) value() {
	d.space()
	if d.pos == len(d.data) {
		return
	}
	switch d.data[d.pos] {
	case '{':
		d.object()
	case '[':
		d.pos++
		for i := 0; ; i++ {
			d.space()
			if d.pos == len(d.data) || d.data[d.pos] == ']' {
				d.pos++
				return
			}
			d.steps = append(d.steps, dupStep{index: i})
			d.value()
			d.steps = d.steps[:len(d.steps)-1]
			d.space()
			if d.pos < len(d.data) && d.data[d.pos] == ',' {
				d.pos++
			}
		}
	case '"':
		d.str()
	default: // a number, true, false or null
		for d.pos < len(d.data) {
			switch d.data[d.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			d.pos++
		}
	}
}

// object reads an object at '{'.
func (d *dupScanner) object() {
	d.pos++ // '{'
	var small [16][]byte
	keys := small[:0]
	var many map[string]bool // once keys outgrows small
	var reported map[string]bool
	for {
		d.space()
		if d.pos == len(d.data) {
			return
		}
		switch d.data[d.pos] {
		case '}':
			d.pos++
			return
		case ',':
			d.pos++
			continue
		}
		start, end, escaped := d.str()
		key := d.data[start:end]
		if escaped || !utf8.Valid(key) {
			// Compare the key as encoding/json decodes it.
			var s string
			if json.Unmarshal(d.data[start-1:end+1], &s) == nil {
				key = []byte(s)
			}
		}
		dup := false
		if many != nil {
			dup = many[string(key)]
			many[string(key)] = true
		} else {
			for _, k := range keys {
				if bytes.Equal(k, key) {
					dup = true
					break
				}
			}
			if !dup {
				keys = append(keys, key)
				if len(keys) > len(small) {
					many = make(map[string]bool, 2*len(keys))
					for _, k := range keys {
						many[string(k)] = true
					}
				}
			}
		}
		if dup && !reported[string(key)] && len(d.out) < maxDupViolations {
			if reported == nil {
				reported = map[string]bool{}
			}
			reported[string(key)] = true
			where := "arguments"
			if len(d.steps) > 0 {
				where = `"` + d.place() + `"`
			}
			d.out = append(d.out, `duplicate key "`+string(key)+`" in `+where)
		}
		d.space()
		if d.pos < len(d.data) && d.data[d.pos] == ':' {
			d.pos++
		}
		d.steps = append(d.steps, dupStep{key: key})
		d.value()
		d.steps = d.steps[:len(d.steps)-1]
	}
}

// str reads a string at '"' and returns the bounds of its contents and
// whether they hold an escape.
func (d *dupScanner) str() (start, end int, escaped bool) {
	d.pos++ // '"'
	start = d.pos
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case '"':
			end = d.pos
			d.pos++
			return start, end, escaped
		case '\\':
			escaped = true
			d.pos += 2
		default:
			d.pos++
		}
	}
	return start, len(d.data), escaped
}
