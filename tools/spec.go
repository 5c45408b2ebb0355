package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The property types a Spec can use.
const (
	TypeString  = "string"
	TypeNumber  = "number"
	TypeBoolean = "boolean"
	TypeObject  = "object"
	TypeArray   = "array"
)

// Prop is one property of a Spec.
//
//   - Type is "string", "number", "boolean", "object" or "array".
//   - Required marks the property as required in its object (ignored on an
//     array's Items).
//   - Description is emitted only when non-empty.
//   - Enum, when non-nil, lists the allowed strings; a non-string value is
//     never a member.
//   - Default, when non-nil, is emitted into the schema only; validation
//     never applies it.
//   - Properties (objects, ordered) and Items (arrays) describe nested
//     values; without them only the type is checked.
type Prop struct {
	Type        string
	Required    bool
	Description string
	Enum        []string
	Default     any
	Properties  []NamedProp
	Items       *Prop
}

// NamedProp is a property with its name; order is declaration order.
type NamedProp struct {
	Name string
	Prop Prop
}

// Spec is the author-facing description of a tool's arguments: the ordered
// top-level properties of the arguments object. Extra keys are allowed.
type Spec []NamedProp

// JSONSchema converts s to standard JSON Schema with keys in a fixed order:
// {"type":"object","properties":{…},"required":[…]}, "required" omitted when
// empty. Each property is {"type", "description"?, "enum"?, "default"?,
// "properties"?, "required"?, "items"?}: "properties" (and a non-empty nested
// "required") only for an object with Properties, "items" only for an array
// with Items. There is no "additionalProperties". An empty Spec gives
// {"type":"object","properties":{}}. A Default that cannot be marshalled is
// left out (Check reports it).
func (s Spec) JSONSchema() json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object",`)
	writeObjectBody(&b, s)
	b.WriteByte('}')
	return json.RawMessage(b.Bytes())
}

// writeObjectBody writes `"properties":{…}` and, when some are required,
// `,"required":[…]`.
func writeObjectBody(b *bytes.Buffer, props []NamedProp) {
	b.WriteString(`"properties":{`)
	var required []string
	for i, np := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(b, np.Name)
		b.WriteByte(':')
		writeProp(b, np.Prop)
		if np.Prop.Required {
			required = append(required, np.Name)
		}
	}
	b.WriteByte('}')
	if len(required) > 0 {
		b.WriteString(`,"required":[`)
		for i, name := range required {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, name)
		}
		b.WriteByte(']')
	}
}

func writeProp(b *bytes.Buffer, p Prop) {
	b.WriteString(`{"type":`)
	writeJSONString(b, p.Type)
	if p.Description != "" {
		b.WriteString(`,"description":`)
		writeJSONString(b, p.Description)
	}
	if p.Enum != nil {
		b.WriteString(`,"enum":`)
		writeStringList(b, p.Enum)
	}
	if p.Default != nil {
		if d, err := marshalJS(p.Default); err == nil {
			b.WriteString(`,"default":`)
			b.Write(d)
		}
	}
	if p.Type == TypeObject && p.Properties != nil {
		b.WriteByte(',')
		writeObjectBody(b, p.Properties)
	}
	if p.Type == TypeArray && p.Items != nil {
		b.WriteString(`,"items":`)
		writeProp(b, *p.Items)
	}
	b.WriteByte('}')
}

// Check reports the first problem that makes s unusable, or nil: a property
// without a name, a name used twice in one object, an unknown type,
// Properties on a non-object, Items on a non-array, or a Default that cannot
// be marshalled to JSON. The error names the property's path.
func (s Spec) Check() error {
	return checkProps(s, "")
}

func checkProps(props []NamedProp, path string) error {
	seen := make(map[string]bool, len(props))
	for _, np := range props {
		p := joinKey(path, np.Name)
		if np.Name == "" {
			return fmt.Errorf("tools: spec: property without a name in %q", objectLabel(path))
		}
		if seen[np.Name] {
			return fmt.Errorf("tools: spec: property %q declared twice", p)
		}
		seen[np.Name] = true
		if err := checkProp(np.Prop, p); err != nil {
			return err
		}
	}
	return nil
}

func checkProp(pr Prop, path string) error {
	switch pr.Type {
	case TypeString, TypeNumber, TypeBoolean, TypeObject, TypeArray:
	default:
		return fmt.Errorf("tools: spec: property %q has unknown type %q", path, pr.Type)
	}
	if pr.Properties != nil && pr.Type != TypeObject {
		return fmt.Errorf("tools: spec: property %q has properties but type %q", path, pr.Type)
	}
	if pr.Items != nil && pr.Type != TypeArray {
		return fmt.Errorf("tools: spec: property %q has items but type %q", path, pr.Type)
	}
	if pr.Default != nil {
		if _, err := marshalJS(pr.Default); err != nil {
			return fmt.Errorf("tools: spec: property %q: default: %w", path, err)
		}
	}
	if pr.Properties != nil {
		if err := checkProps(pr.Properties, path); err != nil {
			return err
		}
	}
	if pr.Items != nil {
		return checkProp(*pr.Items, path+"[]")
	}
	return nil
}

func objectLabel(path string) string {
	if path == "" {
		return "arguments"
	}
	return path
}

// joinKey appends key to a validation path: "a" at the top, "a.b" below.
func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
