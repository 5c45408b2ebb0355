package tools

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestSpecJSONSchema(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"empty spec", nil, `{"type":"object","properties":{}}`},
		{"required omitted when empty", Spec{{"a", Prop{Type: TypeString}}},
			`{"type":"object","properties":{"a":{"type":"string"}}}`},
		{"declaration order kept", Spec{
			{"z", Prop{Type: TypeString, Required: true}},
			{"a", Prop{Type: TypeNumber}},
			{"m", Prop{Type: TypeBoolean, Required: true}},
		}, `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"},"m":{"type":"boolean"}},"required":["z","m"]}`},
		{"empty description dropped", Spec{{"a", Prop{Type: TypeString, Description: ""}}},
			`{"type":"object","properties":{"a":{"type":"string"}}}`},
		{"key order type description enum default", Spec{{"color", Prop{
			Type: TypeString, Required: true, Description: "the <color>", Enum: []string{"red", "green"}, Default: "red",
		}}}, `{"type":"object","properties":{"color":{"type":"string","description":"the <color>","enum":["red","green"],"default":"red"}},"required":["color"]}`},
		{"empty enum is emitted", Spec{{"a", Prop{Type: TypeString, Enum: []string{}}}},
			`{"type":"object","properties":{"a":{"type":"string","enum":[]}}}`},
		{"non-string default", Spec{{"n", Prop{Type: TypeNumber, Default: 3}}},
			`{"type":"object","properties":{"n":{"type":"number","default":3}}}`},
		{"nested object with required", Spec{{"server", Prop{Type: TypeObject, Description: "d", Properties: []NamedProp{
			{"host", Prop{Type: TypeString, Required: true}},
			{"port", Prop{Type: TypeNumber}},
		}}}}, `{"type":"object","properties":{"server":{"type":"object","description":"d","properties":{"host":{"type":"string"},"port":{"type":"number"}},"required":["host"]}}}`},
		{"nested object without required", Spec{{"o", Prop{Type: TypeObject, Properties: []NamedProp{{"x", Prop{Type: TypeString}}}}}},
			`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"string"}}}}}`},
		{"nested object with empty properties", Spec{{"o", Prop{Type: TypeObject, Properties: []NamedProp{}}}},
			`{"type":"object","properties":{"o":{"type":"object","properties":{}}}}`},
		{"object without properties emits only type", Spec{{"o", Prop{Type: TypeObject}}},
			`{"type":"object","properties":{"o":{"type":"object"}}}`},
		{"array without items emits only type", Spec{{"l", Prop{Type: TypeArray}}},
			`{"type":"object","properties":{"l":{"type":"array"}}}`},
		{"array items, required flag on items ignored", Spec{{"servers", Prop{Type: TypeArray, Required: true, Items: &Prop{
			Type: TypeObject, Required: true, Properties: []NamedProp{{"host", Prop{Type: TypeString, Required: true}}},
		}}}}, `{"type":"object","properties":{"servers":{"type":"array","items":{"type":"object","properties":{"host":{"type":"string"}},"required":["host"]}}},"required":["servers"]}`},
		{"strings escaped like JSON.stringify", Spec{{"q\"\\", Prop{Type: TypeString, Description: "a\nb\u2028<&>\x01"}}},
			"{\"type\":\"object\",\"properties\":{\"q\\\"\\\\\":{\"type\":\"string\",\"description\":\"a\\nb\u2028<&>\\u0001\"}}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(tt.spec.JSONSchema())
			if got != tt.want {
				t.Errorf("JSONSchema()\n got %s\nwant %s", got, tt.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("not valid JSON: %s", got)
			}
			if _, err := compileSchema("t", []byte(got)); err != nil {
				t.Errorf("does not compile: %v", err)
			}
		})
	}
}

func TestSpecCheck(t *testing.T) {
	tests := []struct {
		name, wantErr string
		spec          Spec
	}{
		{"ok", "", Spec{{"a", Prop{Type: TypeArray, Items: &Prop{Type: TypeObject, Properties: []NamedProp{{"b", Prop{Type: TypeString}}}}}}}},
		{"no name", `property without a name in "arguments"`, Spec{{"", Prop{Type: TypeString}}}},
		{"twice", `property "a" declared twice`, Spec{{"a", Prop{Type: TypeString}}, {"a", Prop{Type: TypeNumber}}}},
		{"unknown type", `property "a" has unknown type "integer"`, Spec{{"a", Prop{Type: "integer"}}}},
		{"missing type", `property "a" has unknown type ""`, Spec{{"a", Prop{}}}},
		{"nested unknown type", `property "a[].b" has unknown type "int"`, Spec{{"a", Prop{Type: TypeArray, Items: &Prop{Type: TypeObject, Properties: []NamedProp{{"b", Prop{Type: "int"}}}}}}}},
		{"properties on string", `property "a" has properties but type "string"`, Spec{{"a", Prop{Type: TypeString, Properties: []NamedProp{}}}}},
		{"items on object", `property "a" has items but type "object"`, Spec{{"a", Prop{Type: TypeObject, Items: &Prop{Type: TypeString}}}}},
		{"bad default", `property "a": default: json: unsupported type: func()`, Spec{{"a", Prop{Type: TypeString, Default: func() {}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Check()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Check() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Check() = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// TestCheckedSpecSchemasCompile backs Register's promise that a Define
// tool's schema needs no compiling: the JSONSchema of every random Spec
// that passes Check compiles as JSON Schema (draft 2020-12), and the
// schemas of Specs Check refuses are never relied on. Names, enums,
// descriptions and defaults take odd values (JSON Schema keywords, quotes,
// control characters, non-ASCII), types every allowed one and some not.
func TestCheckedSpecSchemasCompile(t *testing.T) {
	rnd := rand.New(rand.NewPCG(18, 2))
	words := []string{"a", "path", "$ref", "$id", "type", "properties", "#", "", "q\"\\", "\u2028", "é", "x y", "\x01", "items"}
	types := []string{TypeString, TypeNumber, TypeBoolean, TypeObject, TypeArray}
	var prop func(depth int) Prop
	props := func(depth int) []NamedProp {
		var out []NamedProp
		for range rnd.IntN(4) {
			out = append(out, NamedProp{Name: words[rnd.IntN(len(words))], Prop: prop(depth + 1)})
		}
		return out
	}
	prop = func(depth int) Prop {
		p := Prop{Type: types[rnd.IntN(len(types))], Required: rnd.IntN(2) == 0}
		if rnd.IntN(20) == 0 {
			p.Type = "integer" // refused by Check
		}
		if rnd.IntN(3) == 0 {
			p.Description = words[rnd.IntN(len(words))]
		}
		if rnd.IntN(4) == 0 {
			p.Enum = []string{words[rnd.IntN(len(words))], words[rnd.IntN(len(words))]}
		}
		switch rnd.IntN(6) {
		case 0:
			p.Default = words[rnd.IntN(len(words))]
		case 1:
			p.Default = map[string]any{"$ref": "https://example.com/x.json", "n": 1.5}
		case 2:
			p.Default = []any{nil, true, "x"}
		}
		if depth < 3 && p.Type == TypeObject && rnd.IntN(2) == 0 {
			p.Properties = props(depth)
		}
		if depth < 3 && p.Type == TypeArray && rnd.IntN(2) == 0 {
			it := prop(depth + 1)
			p.Items = &it
		}
		return p
	}
	checked := 0
	for i := range 2000 {
		spec := Spec(props(0))
		if spec.Check() != nil {
			continue
		}
		checked++
		if _, err := compileSchema("t", spec.JSONSchema()); err != nil {
			t.Fatalf("spec %d passes Check but its schema does not compile: %v\n%s", i, err, spec.JSONSchema())
		}
	}
	if checked < 500 {
		t.Fatalf("only %d of 2000 random specs passed Check: the generator tests too little", checked)
	}
}
