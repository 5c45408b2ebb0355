package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// servers is a spec with nesting, arrays, enums and required keys at every
// level, used by the validation tests and the fuzz target.
var serversSpec = Spec{
	{"name", Prop{Type: TypeString, Required: true}},
	{"count", Prop{Type: TypeNumber}},
	{"verbose", Prop{Type: TypeBoolean}},
	{"color", Prop{Type: TypeString, Enum: []string{"red", "green"}}},
	{"level", Prop{Type: TypeNumber, Enum: []string{"1", "2"}}},
	{"servers", Prop{Type: TypeArray, Items: &Prop{Type: TypeObject, Properties: []NamedProp{
		{"host", Prop{Type: TypeString, Required: true}},
		{"port", Prop{Type: TypeNumber}},
		{"tags", Prop{Type: TypeArray, Items: &Prop{Type: TypeString}}},
	}}}},
	{"opts", Prop{Type: TypeObject, Properties: []NamedProp{
		{"mode", Prop{Type: TypeString, Required: true, Enum: []string{"fast", "safe"}}},
		{"inner", Prop{Type: TypeObject, Properties: []NamedProp{{"deep", Prop{Type: TypeBoolean, Required: true}}}}},
	}}},
	{"free", Prop{Type: TypeObject}},
	{"list", Prop{Type: TypeArray}},
}

func TestValidate(t *testing.T) {
	pathSpec := Spec{{"path", Prop{Type: TypeString, Required: true}}}
	colorSpec := Spec{{"color", Prop{Type: TypeString, Enum: []string{"red", "green"}}}}
	abSpec := Spec{{"a", Prop{Type: TypeString, Required: true}}, {"b", Prop{Type: TypeNumber}}}
	tests := []struct {
		name string
		spec Spec
		args string // JSON; "" means the Go value nil
		want []string
	}{
		// reference §10 "Registry" 7
		{"required key absent", pathSpec, `{}`, []string{`missing required property "path"`}},
		{"enum miss", colorSpec, `{"color":"blue"}`, []string{`"color" must be one of ["red","green"]`}},
		{"enum hit", colorSpec, `{"color":"green"}`, nil},
		{"enum on a number always fails", Spec{{"n", Prop{Type: TypeNumber, Enum: []string{"1"}}}}, `{"n":1}`, []string{`"n" must be one of ["1"]`}},
		{"enum on a boolean always fails", Spec{{"b", Prop{Type: TypeBoolean, Enum: []string{"true"}}}}, `{"b":true}`, []string{`"b" must be one of ["true"]`}},
		{"nested array path", serversSpec, `{"name":"x","servers":[{"host":"a"},{"host":3}]}`, []string{`"servers[1].host" must be a string`}},
		// the reference's joined example, in declaration order
		{"missing and wrong type", abSpec, `{"b":"x"}`, []string{`missing required property "a"`, `"b" must be a number`}},
		// not an object
		{"nil", pathSpec, "", []string{`"arguments" must be an object`}},
		{"null", pathSpec, `null`, []string{`"arguments" must be an object`}},
		{"array", pathSpec, `[]`, []string{`"arguments" must be an object`}},
		{"string", pathSpec, `"x"`, []string{`"arguments" must be an object`}},
		{"number", pathSpec, `1`, []string{`"arguments" must be an object`}},
		// types
		{"null is not a string", pathSpec, `{"path":null}`, []string{`"path" must be a string`}},
		{"all type texts", Spec{
			{"s", Prop{Type: TypeString}}, {"n", Prop{Type: TypeNumber}}, {"b", Prop{Type: TypeBoolean}},
			{"o", Prop{Type: TypeObject}}, {"a", Prop{Type: TypeArray}},
		}, `{"s":1,"n":"1","b":"true","o":[],"a":{}}`, []string{
			`"s" must be a string`, `"n" must be a number`, `"b" must be a boolean`, `"o" must be an object`, `"a" must be an array`,
		}},
		{"null object and array", Spec{{"o", Prop{Type: TypeObject}}, {"a", Prop{Type: TypeArray}}}, `{"o":null,"a":null}`,
			[]string{`"o" must be an object`, `"a" must be an array`}},
		{"optional absent is fine, extra keys allowed", abSpec, `{"a":"x","zzz":[1,2]}`, nil},
		{"key match is case-sensitive", pathSpec, `{"PATH":"x"}`, []string{`missing required property "path"`}},
		{"depth first, declaration order", serversSpec,
			`{"opts":{"inner":{}},"servers":[{"port":"80","tags":["a",2]},"nope"],"count":"3","level":2,"color":5}`,
			[]string{
				`missing required property "name"`,
				`"count" must be a number`,
				`"color" must be a string`,
				`"level" must be one of ["1","2"]`,
				`missing required property "servers[0].host"`,
				`"servers[0].port" must be a number`,
				`"servers[0].tags[1]" must be a string`,
				`"servers[1]" must be an object`,
				`missing required property "opts.mode"`,
				`missing required property "opts.inner.deep"`,
			}},
		{"objects and arrays without shape only type-check", serversSpec, `{"name":"n","free":{"x":[1]},"list":[1,"a",null]}`, nil},
		{"nested enum", serversSpec, `{"name":"n","opts":{"mode":"slow"}}`, []string{`"opts.mode" must be one of ["fast","safe"]`}},
		{"enum text is JSON", Spec{{"e", Prop{Type: TypeString, Enum: []string{`a"b`, "<c>"}}}}, `{"e":"x"}`, []string{`"e" must be one of ["a\"b","<c>"]`}},
		{"unknown type reported", Spec{{"i", Prop{Type: "integer"}}}, `{"i":1}`, []string{`"i" has unsupported type "integer"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args any
			if tt.args != "" {
				var err error
				if args, err = ParseArgs(json.RawMessage(tt.args)); err != nil {
					t.Fatalf("ParseArgs(%s): %v", tt.args, err)
				}
			}
			got := tt.spec.Validate(args)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate(%s)\n got %q\nwant %q", tt.args, got, tt.want)
			}
		})
	}
}

func TestValidateGoValues(t *testing.T) {
	// Values decoded by plain encoding/json (float64) and Go literals work too.
	spec := Spec{{"n", Prop{Type: TypeNumber, Required: true}}, {"l", Prop{Type: TypeArray, Items: &Prop{Type: TypeNumber}}}}
	for _, args := range []any{
		map[string]any{"n": 1.5},
		map[string]any{"n": 3, "l": []any{int64(1), float32(2), uint8(3), json.Number("4")}},
	} {
		if got := spec.Validate(args); got != nil {
			t.Errorf("Validate(%v) = %q, want nil", args, got)
		}
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		raw     string
		want    any
		wantErr bool
	}{
		{"", map[string]any{}, false},
		{" \n\t", map[string]any{}, false},
		{`{"a":1}`, map[string]any{"a": json.Number("1")}, false},
		{`{"a":12345678901234567890}`, map[string]any{"a": json.Number("12345678901234567890")}, false},
		{`[1]`, []any{json.Number("1")}, false},
		{`null`, nil, false},
		{`{`, nil, true},
		{`{"a":1} {"b":2}`, nil, true},
		{`{"a":1} x`, nil, true},
		{"\xff", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseArgs(json.RawMessage(tt.raw))
		if tt.wantErr {
			var ae *ArgsError
			if err == nil || !asArgsError(err, &ae) || err.Error() != `invalid arguments: "arguments" must be an object` || ae.Unwrap() == nil {
				t.Errorf("ParseArgs(%q) error = %v, want an ArgsError wrapping the cause", tt.raw, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseArgs(%q) = %#v, %v; want %#v", tt.raw, got, err, tt.want)
		}
	}
}

func asArgsError(err error, target **ArgsError) bool {
	ae, ok := err.(*ArgsError)
	*target = ae
	return ok
}

// FuzzValidateAgreesWithSchema checks that the spec walker never panics and
// accepts exactly what jsonschema accepts for the generated schema.
func FuzzValidateAgreesWithSchema(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"name":"x"}`, `{"name":1}`, `[]`, `null`, `{"name":"x","servers":[{"host":"a","tags":["x",1]}]}`,
		`{"name":"x","opts":{"mode":"fast","inner":{"deep":true}}}`, `{"name":"x","opts":{"mode":"slow"}}`,
		`{"name":"x","level":"1"}`, `{"name":"x","level":1}`, `{"name":"x","color":"red","free":[],"list":{}}`,
		`{"name":"x","count":1e400}`, `{"name":"x","servers":[null]}`,
	} {
		f.Add([]byte(seed))
	}
	sch, err := compileSchema("fuzz", serversSpec.JSONSchema())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		args, err := ParseArgs(raw)
		if err != nil {
			return
		}
		mine := serversSpec.Validate(args)
		_, isObj := args.(map[string]any)
		theirs := schemaViolations(sch, args)
		if isObj && (len(mine) == 0) != (len(theirs) == 0) {
			t.Fatalf("args %s: spec walker says %q, jsonschema says %v", raw, mine, theirs)
		}
		if !isObj && !reflect.DeepEqual(mine, []string{msgNotObject}) {
			t.Fatalf("args %s: got %q for a non-object", raw, mine)
		}
	})
}

// TestParseArgsDuplicateKeys: a key given twice in one object, at any
// depth, compared exactly as decoded, makes the arguments invalid, with
// one violation naming each repeated key and where it is.
func TestParseArgsDuplicateKeys(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"file_path":"a","file_path":"b"}`, `duplicate key "file_path" in arguments`},
		{` {"file_path" : "a" , "content":"x", "file_path":"a"}`, `duplicate key "file_path" in arguments`},
		{`{"a":1,"\u0061":2}`, `duplicate key "a" in arguments`},
		{`{"a\"b":1,"a\u0022b":2}`, `duplicate key "a"b" in arguments`},
		{`{"x":{"k":1,"j":{},"k":[]}}`, `duplicate key "k" in "x"`},
		{`{"s":[{"h":1},{"h":1,"p":2,"h":3,"h":4}]}`, `duplicate key "h" in "s[1]"`},
		{`[{"a":1},[{"b":{"c":1,"c":2}}]]`, `duplicate key "c" in "[1][0].b"`},
		{`{"a":1,"b":2,"a":3,"b":4,"a":5}`, `duplicate key "a" in arguments; duplicate key "b" in arguments`},
		{`{"a":{"a":1},"b":{"a":1}}`, ""},
		{`{"path":"a","PATH":"b","Path":"c"}`, ""}, // folded keys are the case-folding rule's
		{`{"k":"{\"k\":1,\"k\":2}","v":["k","k"]}`, ""},
		{"{\"\xff\":1,\"\xfe\":2}", `duplicate key "` + "\uFFFD" + `" in arguments`}, // both decode to U+FFFD
	}
	// Many keys in one object (past the small list): the last repeats one.
	var b strings.Builder
	b.WriteString("{")
	for i := range 40 {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	b.WriteString(`"k7":0}`)
	tests = append(tests, struct{ raw, want string }{b.String(), `duplicate key "k7" in arguments`})
	for _, tt := range tests {
		_, err := ParseArgs(json.RawMessage(tt.raw))
		if tt.want == "" {
			if err != nil {
				t.Errorf("ParseArgs(%q) = %v, want no error", tt.raw, err)
			}
			continue
		}
		var ae *ArgsError
		if !errors.As(err, &ae) || err.Error() != "invalid arguments: "+tt.want || ae.ErrorCode() != CodeInvalidArgs {
			t.Errorf("ParseArgs(%q) = %v, want ArgsError %q", tt.raw, err, tt.want)
		}
	}
	// The count of violations is bounded.
	var many strings.Builder
	many.WriteString("{")
	for i := range 20 {
		fmt.Fprintf(&many, `"k%d":1,"k%d":2,`, i, i)
	}
	many.WriteString(`"end":0}`)
	var ae *ArgsError
	if _, err := ParseArgs(json.RawMessage(many.String())); !errors.As(err, &ae) || len(ae.Violations) != maxDupViolations {
		t.Errorf("20 repeated keys: %v, want %d violations", err, maxDupViolations)
	}
}
