// This file decodes a message into a tree that keeps every member in its
// order and each string as written, so that a redacted message differs
// from the original only where a secret was.

package wiretap

import (
	"bytes"
	"encoding/json"
)

// node is a JSON value decoded with its member order.
type node struct {
	kind byte
	keys []string // objects
	vals []*node  // objects (one per key) and arrays
	str  string   // strings
	lit  string   // numbers, true, false, null as written
}

const (
	kindString byte = iota
	kindLiteral
	kindArray
	kindObject
)

// maxDepth bounds the nesting decodeNode follows.
const maxDepth = 1000

var errDepth = &json.UnsupportedValueError{Str: "nested too deeply"}

func decodeNode(d *json.Decoder, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: kindObject}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeNode(d, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, k), append(n.vals, v)
			}
			_, err := d.Token()
			return n, err
		case '[':
			n := &node{kind: kindArray}
			for d.More() {
				v, err := decodeNode(d, depth+1)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, v)
			}
			_, err := d.Token()
			return n, err
		}
		return nil, &json.SyntaxError{}
	case string:
		return &node{kind: kindString, str: t}, nil
	case json.Number:
		return &node{kind: kindLiteral, lit: t.String()}, nil
	case bool:
		if t {
			return &node{kind: kindLiteral, lit: "true"}, nil
		}
		return &node{kind: kindLiteral, lit: "false"}, nil
	case nil:
		return &node{kind: kindLiteral, lit: "null"}, nil
	}
	return nil, &json.SyntaxError{}
}

func (n *node) encode(b *bytes.Buffer) {
	switch n.kind {
	case kindString:
		writeString(b, n.str)
	case kindLiteral:
		b.WriteString(n.lit)
	case kindArray:
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			v.encode(b)
		}
		b.WriteByte(']')
	case kindObject:
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			n.vals[i].encode(b)
		}
		b.WriteByte('}')
	}
}

// writeString writes s as a JSON string, without HTML escaping.
func writeString(b *bytes.Buffer, s string) {
	var tmp bytes.Buffer
	e := json.NewEncoder(&tmp)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)
	b.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
}
