package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
)

// keyNode says which object keys a Go type accepts, so that decoding can be
// case-sensitive: encoding/json matches field names case-insensitively, so a
// key that only folds to a field's name (e.g. "PATH" for "path") is dropped
// before decoding. A nil *keyNode means "no filtering below here".
type keyNode struct {
	// fields maps the exact JSON names of a struct's fields to their nodes;
	// nil for a slice, array or map node.
	fields map[string]*keyNode
	// names lists the struct's JSON field names, for the fold comparison.
	names []string
	// elem is the node of a slice's, array's or map's elements.
	elem *keyNode
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// buildKeyNode returns the key node of t, or nil when t needs no filtering.
func buildKeyNode(t reflect.Type) *keyNode {
	return buildNode(t, map[reflect.Type]*keyNode{})
}

func buildNode(t reflect.Type, seen map[reflect.Type]*keyNode) *keyNode {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	if n, ok := seen[t]; ok {
		return n
	}
	switch t.Kind() {
	case reflect.Struct:
		n := &keyNode{fields: map[string]*keyNode{}}
		seen[t] = n
		addFields(n, t, seen, map[reflect.Type]bool{t: true})
		return n
	case reflect.Slice, reflect.Array, reflect.Map:
		seen[t] = nil // a recursive container is filtered from its first visit only
		elem := buildNode(t.Elem(), seen)
		if elem == nil {
			return nil
		}
		n := &keyNode{elem: elem}
		seen[t] = n
		return n
	}
	return nil
}

// addFields adds the JSON-visible fields of struct type t to n, promoting the
// fields of untagged embedded structs as encoding/json does.
func addFields(n *keyNode, t reflect.Type, seen map[reflect.Type]*keyNode, embedding map[reflect.Type]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if !embedding[ft] {
					embedding[ft] = true
					addFields(n, ft, seen, embedding)
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := n.fields[name]; dup {
			continue
		}
		n.fields[name] = buildNode(f.Type, seen)
		n.names = append(n.names, name)
	}
}

// dropFolded returns v without the keys that would fill a struct field only
// through case folding, and whether anything was dropped. v is not modified;
// changed parts are copied.
func dropFolded(v any, n *keyNode) (any, bool) {
	if n == nil {
		return v, false
	}
	switch x := v.(type) {
	case map[string]any:
		var out map[string]any
		for k, val := range x {
			var child *keyNode
			if n.fields != nil {
				c, exact := n.fields[k]
				if !exact {
					if foldsToAny(k, n.names) {
						out = copyOnce(out, x)
						delete(out, k)
					}
					continue
				}
				child = c
			} else {
				child = n.elem
			}
			if nv, changed := dropFolded(val, child); changed {
				out = copyOnce(out, x)
				out[k] = nv
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		if n.elem == nil {
			return v, false
		}
		var out []any
		for i, el := range x {
			if nv, changed := dropFolded(el, n.elem); changed {
				if out == nil {
					out = append([]any(nil), x...)
				}
				out[i] = nv
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

func copyOnce(out, src map[string]any) map[string]any {
	if out != nil {
		return out
	}
	out = make(map[string]any, len(src))
	for k, v := range src {
		out[k] = v
	}
	return out
}

func foldsToAny(key string, names []string) bool {
	for _, name := range names {
		if strings.EqualFold(key, name) {
			return true
		}
	}
	return false
}

// decodeInto decodes the arguments into *dst case-sensitively: raw is the
// arguments text (empty means {}), parsed its value from ParseArgs, n the key
// node of dst's type. A decoding failure is an *ArgsError.
func decodeInto(dst any, raw json.RawMessage, parsed any, n *keyNode) error {
	data := []byte(raw)
	if cleaned, changed := dropFolded(parsed, n); changed {
		var err error
		if data, err = json.Marshal(cleaned); err != nil {
			return &ArgsError{Violations: []string{"cannot decode arguments: " + err.Error()}, Err: err}
		}
	} else if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return &ArgsError{Violations: []string{decodeViolation(err)}, Err: err}
	}
	return nil
}

// decodeViolation words a decoding error as a violation text, e.g.
// `"offset" cannot be decoded: number 1.5 into Go type int`.
func decodeViolation(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return `"` + te.Field + `" cannot be decoded: ` + te.Value + " into Go type " + te.Type.String()
	}
	return "cannot decode arguments: " + strings.TrimPrefix(err.Error(), "json: ")
}
