package tools

import (
	"context"
	"encoding/json"
	"testing"
)

var (
	benchValid   = json.RawMessage(`{"name":"x","count":3,"color":"red","servers":[{"host":"a","port":80,"tags":["t1","t2"]},{"host":"b"}],"opts":{"mode":"fast","inner":{"deep":true}}}`)
	benchInvalid = json.RawMessage(`{"count":"3","color":"blue","servers":[{"port":"80","tags":[1]},7],"opts":{"inner":{}},"level":1}`)
)

// BenchmarkValidate measures parsing plus the spec walker (what Define's
// Execute does before decoding).
func BenchmarkValidate(b *testing.B) {
	for _, bc := range []struct {
		name       string
		args       json.RawMessage
		violations int
	}{{"valid", benchValid, 0}, {"invalid", benchInvalid, 10}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v, err := ParseArgs(bc.args)
				if err != nil {
					b.Fatal(err)
				}
				if n := len(serversSpec.Validate(v)); n != bc.violations {
					b.Fatalf("%d violations, want %d", n, bc.violations)
				}
			}
		})
	}
}

// BenchmarkValidateRaw measures the raw JSON-Schema path (google/jsonschema-go,
// the first violation) on the same schema and arguments.
func BenchmarkValidateRaw(b *testing.B) {
	sch, err := compileSchema("bench", serversSpec.JSONSchema())
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		args  json.RawMessage
		valid bool
	}{{"valid", benchValid, true}, {"invalid", benchInvalid, false}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v, err := ParseArgs(bc.args)
				if err != nil {
					b.Fatal(err)
				}
				if got := schemaViolations(sch, v); (len(got) == 0) != bc.valid {
					b.Fatalf("violations %q", got)
				}
			}
		})
	}
}

// BenchmarkExecute runs a trivial Define tool through two pass-through
// middlewares, each call resolved afresh (one lookup, one decode).
func BenchmarkExecute(b *testing.B) {
	type args struct {
		Text string `json:"text"`
	}
	r := NewRegistry()
	if err := r.Register(Define(Def[args]{
		Name: "echo", Description: "d",
		Spec: Spec{{"text", Prop{Type: TypeString, Required: true}}},
		Execute: func(_ context.Context, _ *Exec, a args) (Output, error) {
			return Output{Content: []Content{Text(a.Text)}}, nil
		},
	})); err != nil {
		b.Fatal(err)
	}
	for range 2 {
		r.Use(func(ctx context.Context, ex *Exec, next Next) Result { return next(ctx, ex) })
	}
	ex := &Exec{CallID: "c", Name: "echo", Args: json.RawMessage(`{"text":"hello"}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ex.Call = nil
		if res := r.Execute(ctx, ex); res.IsError || res.Content[0].Text != "hello" {
			b.Fatalf("%+v", res)
		}
	}
}

// BenchmarkRegister measures registration, dominated by compiling the
// schema.
func BenchmarkRegister(b *testing.B) {
	noop := func(context.Context, *Exec) (Output, error) { return Output{}, nil }
	params := serversSpec.JSONSchema()
	b.ReportAllocs()
	for b.Loop() {
		if err := NewRegistry().Register(Tool{Name: "t", Parameters: params, Execute: noop}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseArgs parses an edit's arguments (the duplicate-key check
// included).
func BenchmarkParseArgs(b *testing.B) {
	raw := json.RawMessage(`{"file_path":"src/server/handler.go","old_string":"\treturn nil, err\n","new_string":"\treturn nil, fmt.Errorf(\"handler: %w\", err)\n","replace_all":false}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseArgs(raw); err != nil {
			b.Fatal(err)
		}
	}
}
