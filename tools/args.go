package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// ParseArgs decodes a tool call's raw arguments text. Empty (or all
// whitespace) text means {} and gives an empty map[string]any. Valid JSON
// gives its value, with numbers as json.Number (exact); it may be a
// non-object, which validation then rejects. Text that is not one JSON value
// gives an *ArgsError whose only violation is `"arguments" must be an object`
// and which wraps the syntax error. Text in which one object gives a key
// twice (at any depth; keys compared exactly, as decoded) gives an
// *ArgsError with one violation per repeated key, e.g.
// `duplicate key "file_path" in arguments` or
// `duplicate key "host" in "servers[1]"` (see duplicateKeys).
func ParseArgs(raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &ArgsError{Violations: []string{msgNotObject}, Err: err}
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("invalid character after top-level value")
		}
		return nil, &ArgsError{Violations: []string{msgNotObject}, Err: err}
	}
	if dups := duplicateKeys(raw); dups != nil {
		return nil, &ArgsError{Violations: dups}
	}
	return v, nil
}
