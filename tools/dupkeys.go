package tools

import (
	"bytes"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
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
// means no key is repeated. The text is read with jsontext's tokenizer
// (duplicate names allowed, so that every one is found; invalid UTF-8
// read as U+FFFD, as encoding/json decodes it).
func duplicateKeys(data []byte) []string {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var stack []*dupFrame
	var out []string
	for len(out) < maxDupViolations {
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		var top *dupFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.name && tok.Kind() == '"' {
			if v, dup := top.add(tok.String()); dup {
				out = append(out, v+dupPlace(stack))
			}
			continue
		}
		switch tok.Kind() {
		case '{', '[':
			stack = append(stack, &dupFrame{object: tok.Kind() == '{', name: true})
			continue
		case '}', ']':
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return out
			}
			top = stack[len(stack)-1]
		}
		if top == nil {
			return out // a scalar at the top: no object
		}
		top.valueDone()
	}
	return out
}

// dupFrame is one object or array being read.
type dupFrame struct {
	object bool
	// name: the next token of an object is a member's name.
	name bool
	// key is the name of the object's member being read; index the
	// array's element being read.
	key   string
	index int
	// seen and reported are the object's names so far and those already
	// reported as repeated.
	seen, reported map[string]bool
}

// add records the name key of the object's next member, and returns the
// start of its violation when the object already has it (once per key).
func (f *dupFrame) add(key string) (string, bool) {
	f.key, f.name = key, false
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	if !f.seen[key] {
		f.seen[key] = true
		return "", false
	}
	if f.reported[key] {
		return "", false
	}
	if f.reported == nil {
		f.reported = map[string]bool{}
	}
	f.reported[key] = true
	return `duplicate key "` + key + `" in `, true
}

// valueDone moves the frame past the value just read.
func (f *dupFrame) valueDone() {
	if f.object {
		f.name = true
	} else {
		f.index++
	}
}

// dupPlace names the object on top of stack as the violation texts name
// places: "arguments" for the arguments object, else its path in quotes
// (a.b, a[2]).
func dupPlace(stack []*dupFrame) string {
	if len(stack) == 1 {
		return "arguments"
	}
	path := ""
	for _, f := range stack[:len(stack)-1] {
		if f.object {
			path = joinKey(path, f.key)
		} else {
			path += "[" + strconv.Itoa(f.index) + "]"
		}
	}
	return `"` + path + `"`
}
