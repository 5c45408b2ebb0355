package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// decodeInto decodes the arguments text raw (empty means {}) into *dst
// with go-json-experiment's decoder, which matches object keys to struct
// fields case-sensitively: a key that only folds to a field's name (e.g.
// "PATH" for "path") fills nothing, like any key the type does not name.
// Invalid UTF-8 is read as U+FFFD (as ParseArgs reads it); repeated keys
// were refused by ParseArgs before. A decoding failure is an *ArgsError.
func decodeInto(dst any, raw json.RawMessage) error {
	data := []byte(raw)
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	if err := jsonv2.Unmarshal(data, dst, jsontext.AllowInvalidUTF8(true)); err != nil {
		return &ArgsError{Violations: []string{decodeViolation(err)}, Err: err}
	}
	return nil
}

// decodeViolation words a decoding error as a violation text, e.g.
// `"offset" cannot be decoded: number 1.5 into Go type int` (the member's
// path with dots, the JSON value's kind, a number's text, the Go type).
func decodeViolation(err error) string {
	var se *jsonv2.SemanticError
	if errors.As(err, &se) && se.GoType != nil && len(se.JSONPointer) > 0 {
		var field []string
		for tok := range se.JSONPointer.Tokens() {
			if !isIndex(tok) {
				field = append(field, tok)
			}
		}
		if len(field) > 0 {
			return `"` + strings.Join(field, ".") + `" cannot be decoded: ` + kindText(se.JSONKind, se.JSONValue) + " into Go type " + se.GoType.String()
		}
	}
	return "cannot decode arguments: " + strings.TrimPrefix(err.Error(), "json: ")
}

// kindText names a JSON value as the violation texts do: "number 1.5",
// "string", "bool", "object", "array", "null".
func kindText(k jsontext.Kind, v jsontext.Value) string {
	switch k {
	case '0':
		return "number " + string(v)
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case '{':
		return "object"
	case '[':
		return "array"
	case 'n':
		return "null"
	}
	return "value"
}

// isIndex reports whether a JSON pointer token is an array index.
func isIndex(tok string) bool {
	if tok == "" {
		return false
	}
	for _, c := range tok {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
