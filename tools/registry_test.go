package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// echoArgs is the argument type of the test tools.
type echoArgs struct {
	Text string `json:"text"`
}

// echoTool returns a Define tool that answers its text, or runs run.
func echoTool(name string, run func(ctx context.Context, ex *tools.Exec, a echoArgs) (tools.Output, error)) tools.Tool {
	if run == nil {
		run = func(_ context.Context, _ *tools.Exec, a echoArgs) (tools.Output, error) {
			return tools.Output{Content: []tools.Content{tools.Text(a.Text)}}, nil
		}
	}
	return tools.Define(tools.Def[echoArgs]{
		Name:        name,
		Description: "Echo the text.",
		Spec:        tools.Spec{{Name: "text", Prop: tools.Prop{Type: tools.TypeString, Required: true}}},
		Execute:     run,
	})
}

func mustRegister(t testing.TB, r *tools.Registry, ts ...tools.Tool) {
	t.Helper()
	for _, tool := range ts {
		if err := r.Register(tool); err != nil {
			t.Fatalf("Register(%s): %v", tool.Name, err)
		}
	}
}

func marshal(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func failing(err error) func(context.Context, *tools.Exec, echoArgs) (tools.Output, error) {
	return func(context.Context, *tools.Exec, echoArgs) (tools.Output, error) { return tools.Output{}, err }
}

// TestExecuteResults pins the wire shape of results (reference §10
// "Registry" 1, 2, 4 and 5, plus panics, invalid arguments and meta).
func TestExecuteResults(t *testing.T) {
	tests := []struct {
		name string
		tool tools.Tool // registered under its name; nil for none
		mw   tools.Middleware
		call tools.Exec
		want string
	}{
		{"unknown tool", tools.Tool{}, nil, tools.Exec{CallID: "c1", Name: "nope"},
			`{"callId":"c1","content":[{"type":"text","text":"Error: unknown tool \"nope\""}],"isError":true,"error":{"name":"ToolNotFoundError","code":"UNKNOWN_TOOL"}}`},
		{"plain error gives text only", echoTool("t", failing(errors.New("boom"))), nil, tools.Exec{CallID: "c2", Name: "t", Args: json.RawMessage(`{"text":"x"}`)},
			`{"callId":"c2","content":[{"type":"text","text":"Error: boom"}],"isError":true}`},
		{"coded error gives name and code", echoTool("t", failing(&tools.Error{Code: "SOME_CODE", Message: "coded"})), nil, tools.Exec{CallID: "c3", Name: "t", Args: json.RawMessage(`{"text":"x"}`)},
			`{"callId":"c3","content":[{"type":"text","text":"Error: coded"}],"isError":true,"error":{"name":"HarnessError","code":"SOME_CODE"}}`},
		{"wrapped coded error", echoTool("t", failing(fmt.Errorf("reading a.txt: %w", &tools.Error{Name: "FsError", Code: "FS_NOT_FOUND", Message: "not found"}))), nil,
			tools.Exec{CallID: "c4", Name: "t", Args: json.RawMessage(`{"text":"x"}`)},
			`{"callId":"c4","content":[{"type":"text","text":"Error: reading a.txt: not found"}],"isError":true,"error":{"name":"FsError","code":"FS_NOT_FOUND"}}`},
		{"error with empty message", echoTool("t", failing(errors.New(""))), nil, tools.Exec{CallID: "c5", Name: "t", Args: json.RawMessage(`{"text":"x"}`)},
			`{"callId":"c5","content":[{"type":"text","text":"Error: (no message)"}],"isError":true}`},
		{"middleware error veto", echoTool("t", nil), func(_ context.Context, ex *tools.Exec, _ tools.Next) tools.Result {
			return tools.ErrorResult(ex.CallID, errors.New("permission hook broke"))
		}, tools.Exec{CallID: "c6", Name: "t", Args: json.RawMessage(`{"text":"x"}`)},
			`{"callId":"c6","content":[{"type":"text","text":"Error: permission hook broke"}],"isError":true}`},
		{"no meta key without meta", echoTool("t", nil), nil, tools.Exec{CallID: "c7", Name: "t", Args: json.RawMessage(`{"text":"hi"}`)},
			`{"callId":"c7","content":[{"type":"text","text":"hi"}],"isError":false}`},
		{"meta attached", echoTool("t", func(context.Context, *tools.Exec, echoArgs) (tools.Output, error) {
			return tools.Output{Content: []tools.Content{tools.Text("ok")}, Meta: json.RawMessage(`{"before":null}`)}, nil
		}), nil, tools.Exec{CallID: "c8", Name: "t", Args: json.RawMessage(`{"text":"x"}`)},
			`{"callId":"c8","content":[{"type":"text","text":"ok"}],"isError":false,"meta":{"before":null}}`},
		{"invalid meta is an error", echoTool("t", func(context.Context, *tools.Exec, echoArgs) (tools.Output, error) {
			return tools.Output{Content: []tools.Content{tools.Text("ok")}, Meta: json.RawMessage(`{`)}, nil
		}), nil, tools.Exec{CallID: "c9", Name: "t", Args: json.RawMessage(`{"text":"x"}`)},
			`{"callId":"c9","content":[{"type":"text","text":"Error: tool \"t\" returned meta that is not valid JSON"}],"isError":true}`},
		{"nil content becomes []", echoTool("t", func(context.Context, *tools.Exec, echoArgs) (tools.Output, error) { return tools.Output{}, nil }), nil,
			tools.Exec{CallID: "c10", Name: "t", Args: json.RawMessage(`{"text":"x"}`)},
			`{"callId":"c10","content":[],"isError":false}`},
		{"tool panic", echoTool("t", func(context.Context, *tools.Exec, echoArgs) (tools.Output, error) { panic("kaboom") }), nil,
			tools.Exec{CallID: "c11", Name: "t", Args: json.RawMessage(`{"text":"x"}`)},
			`{"callId":"c11","content":[{"type":"text","text":"Error: tool \"t\" panicked: kaboom"}],"isError":true}`},
		{"middleware panic", echoTool("t", nil), func(context.Context, *tools.Exec, tools.Next) tools.Result { panic(errors.New("mw bug")) },
			tools.Exec{CallID: "c12", Name: "t", Args: json.RawMessage(`{"text":"x"}`)},
			`{"callId":"c12","content":[{"type":"text","text":"Error: middleware panicked: mw bug"}],"isError":true}`},
		{"invalid arguments", echoTool("t", nil), nil, tools.Exec{CallID: "c13", Name: "t", Args: json.RawMessage(`{"text":1,"TEXT":"x"}`)},
			`{"callId":"c13","content":[{"type":"text","text":"Error: invalid arguments: \"text\" must be a string"}],"isError":true,"error":{"name":"ToolArgsError","code":"INVALID_ARGS"}}`},
		{"arguments not JSON", echoTool("t", nil), nil, tools.Exec{CallID: "c14", Name: "t", Args: json.RawMessage(`{"text":`)},
			`{"callId":"c14","content":[{"type":"text","text":"Error: invalid arguments: \"arguments\" must be an object"}],"isError":true,"error":{"name":"ToolArgsError","code":"INVALID_ARGS"}}`},
		{"empty arguments mean {}", echoTool("t", nil), nil, tools.Exec{CallID: "c15", Name: "t"},
			`{"callId":"c15","content":[{"type":"text","text":"Error: invalid arguments: missing required property \"text\""}],"isError":true,"error":{"name":"ToolArgsError","code":"INVALID_ARGS"}}`},
		{"callId is always the caller's, error meta dropped", echoTool("t", nil), func(ctx context.Context, ex *tools.Exec, next tools.Next) tools.Result {
			return tools.Result{CallID: "forged", Content: []tools.Content{tools.Text("denied")}, IsError: true, Meta: json.RawMessage(`{}`)}
		}, tools.Exec{CallID: "c16", Name: "t"},
			`{"callId":"c16","content":[{"type":"text","text":"denied"}],"isError":true}`},
		{"unknown tool still seen by middleware", tools.Tool{}, func(ctx context.Context, ex *tools.Exec, next tools.Next) tools.Result {
			res := next(ctx, ex)
			res.Content = append(res.Content, tools.Text("seen "+ex.Name))
			return res
		}, tools.Exec{CallID: "c17", Name: "ghost"},
			`{"callId":"c17","content":[{"type":"text","text":"Error: unknown tool \"ghost\""},{"type":"text","text":"seen ghost"}],"isError":true,"error":{"name":"ToolNotFoundError","code":"UNKNOWN_TOOL"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tools.NewRegistry()
			if tt.tool.Name != "" {
				mustRegister(t, r, tt.tool)
			}
			if tt.mw != nil {
				r.Use(tt.mw)
			}
			call := tt.call
			if got := marshal(t, r.Execute(context.Background(), &call)); got != tt.want {
				t.Errorf("Execute\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestMiddlewareOrder pins reference §10 "Registry" 3: first registered is
// outermost; a veto skips the rest.
func TestMiddlewareOrder(t *testing.T) {
	var log []string
	logging := func(name string) tools.Middleware {
		return func(ctx context.Context, ex *tools.Exec, next tools.Next) tools.Result {
			log = append(log, name+":before")
			res := next(ctx, ex)
			log = append(log, name+":after")
			res.Content = append(res.Content, tools.Text(name))
			return res
		}
	}
	r := tools.NewRegistry()
	mustRegister(t, r, echoTool("echo", nil))
	r.Use(logging("first"))
	r.Use(logging("second"))
	res := r.Execute(context.Background(), &tools.Exec{CallID: "c", Name: "echo", Args: json.RawMessage(`{"text":"x"}`)})
	if want := []string{"first:before", "second:before", "second:after", "first:after"}; !reflect.DeepEqual(log, want) {
		t.Errorf("order %v, want %v", log, want)
	}
	if got, want := marshal(t, res.Content), `[{"type":"text","text":"x"},{"type":"text","text":"second"},{"type":"text","text":"first"}]`; got != want {
		t.Errorf("content %s, want %s", got, want)
	}

	log = nil
	ran := false
	r2 := tools.NewRegistry()
	mustRegister(t, r2, echoTool("echo", func(context.Context, *tools.Exec, echoArgs) (tools.Output, error) {
		ran = true
		return tools.Output{}, nil
	}))
	r2.Use(logging("outer"))
	r2.Use(func(ctx context.Context, ex *tools.Exec, next tools.Next) tools.Result {
		return tools.Result{CallID: ex.CallID, Content: []tools.Content{tools.Text("vetoed")}}
	})
	r2.Use(logging("never"))
	res = r2.Execute(context.Background(), &tools.Exec{CallID: "c", Name: "echo", Args: json.RawMessage(`{"text":"x"}`)})
	if ran || !reflect.DeepEqual(log, []string{"outer:before", "outer:after"}) {
		t.Errorf("veto: tool ran %v, log %v", ran, log)
	}
	if got, want := marshal(t, res), `{"callId":"c","content":[{"type":"text","text":"vetoed"},{"type":"text","text":"outer"}],"isError":false}`; got != want {
		t.Errorf("veto result %s, want %s", got, want)
	}
}

// TestMiddlewareRewritesCall shows a middleware passing a changed call on.
func TestMiddlewareRewritesCall(t *testing.T) {
	r := tools.NewRegistry()
	mustRegister(t, r, echoTool("echo", nil))
	r.Use(func(ctx context.Context, ex *tools.Exec, next tools.Next) tools.Result {
		changed := *ex
		changed.Args = json.RawMessage(`{"text":"rewritten"}`)
		return next(ctx, &changed)
	})
	res := r.Execute(context.Background(), &tools.Exec{CallID: "c", Name: "echo", Args: json.RawMessage(`{"text":"x"}`)})
	if res.IsError || res.Content[0].Text != "rewritten" {
		t.Errorf("got %+v", res)
	}
}

func TestRegister(t *testing.T) {
	noop := func(context.Context, *tools.Exec) (tools.Output, error) { return tools.Output{}, nil }
	raw := func(name, params string) tools.Tool {
		return tools.Tool{Name: name, Description: "d", Parameters: json.RawMessage(params), Execute: noop}
	}
	tests := []struct {
		name    string
		tool    tools.Tool
		wantErr string
	}{
		{"raw ok", raw("r", `{"type":"object","properties":{"a":{"type":"integer"}}}`), ""},
		{"no name", raw("", `{"type":"object"}`), "must have a name"},
		{"no execute", tools.Tool{Name: "x", Parameters: json.RawMessage(`{"type":"object"}`)}, "has no Execute"},
		{"nil parameters", raw("x", ``), "parameters are not JSON"},
		{"array parameters", raw("x", `[]`), "must be a JSON object"},
		{"string schema", raw("x", `{"type":"string"}`), `"type":"object"`},
		{"untyped schema", raw("x", `{"properties":{}}`), `"type":"object"`},
		{"schema that does not compile", raw("x", `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`), "invalid parameters schema"},
		{"keyword of the wrong shape", raw("x", `{"type":"object","properties":{"a":{"minimum":"1"}}}`), "invalid parameters schema"},
		{"external ref refused", raw("x", `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`), "invalid parameters schema"},
		{"define with bad spec", tools.Define(tools.Def[map[string]any]{Name: "x", Spec: tools.Spec{{Name: "a", Prop: tools.Prop{Type: "int"}}},
			Execute: func(context.Context, *tools.Exec, map[string]any) (tools.Output, error) { return tools.Output{}, nil }}), `unknown type "int"`},
		{"define without execute", tools.Define(tools.Def[map[string]any]{Name: "x"}), "has no Execute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tools.NewRegistry()
			err := r.Register(tt.tool)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Register: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Register = %v, want error containing %q", err, tt.wantErr)
			}
			if len(r.Schemas()) != 0 {
				t.Errorf("a refused tool was registered")
			}
		})
	}
}

func TestRegisterDuplicateChangesNothing(t *testing.T) {
	r := tools.NewRegistry()
	first := echoTool("a", nil)
	mustRegister(t, r, first, echoTool("b", nil))
	dup := echoTool("a", failing(errors.New("second")))
	dup.Description = "the duplicate"
	err := r.Register(dup)
	if err == nil || err.Error() != `tools: tool "a" is already registered` {
		t.Fatalf("duplicate Register = %v", err)
	}
	var names []string
	for _, s := range r.Schemas() {
		names = append(names, s.Name+"/"+s.Description)
	}
	if want := []string{"a/Echo the text.", "b/Echo the text."}; !reflect.DeepEqual(names, want) {
		t.Errorf("schemas %v, want %v", names, want)
	}
	res := r.Execute(context.Background(), &tools.Exec{CallID: "c", Name: "a", Args: json.RawMessage(`{"text":"first"}`)})
	if res.IsError || res.Content[0].Text != "first" {
		t.Errorf("the original tool was replaced: %+v", res)
	}
	if !r.Unregister("a") || r.Unregister("a") {
		t.Errorf("Unregister should succeed once")
	}
	mustRegister(t, r, dup)
	if got := marshal(t, r.Schemas()); !strings.Contains(got, `"name":"b"`) || strings.Index(got, `"name":"b"`) > strings.Index(got, `"name":"a"`) {
		t.Errorf("re-registered tool should come last: %s", got)
	}
}

// TestSchemas pins reference §10 "Registry" 6 and the allowlist.
func TestSchemas(t *testing.T) {
	r := tools.NewRegistry()
	strict := false
	tool := echoTool("echo", nil)
	tool.Strict = &strict
	tool.PresentCall = func(json.RawMessage) tools.ToolCallView { return nil }
	mustRegister(t, r, tool, tools.Tool{
		Name: "raw", Description: "raw tool",
		Parameters: json.RawMessage("{ \"type\": \"object\",\n \"properties\": {} }"),
		Execute:    func(context.Context, *tools.Exec) (tools.Output, error) { return tools.Output{}, nil },
	})
	strict = true // the registry keeps its own copy
	want := `[{"name":"echo","description":"Echo the text.","parameters":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},"strict":false},` +
		`{"name":"raw","description":"raw tool","parameters":{"type":"object","properties":{}}}]`
	s := r.Schemas()
	if got := marshal(t, s); got != want {
		t.Fatalf("Schemas\n got %s\nwant %s", got, want)
	}
	s[0].Parameters[0] = '['
	*s[0].Strict = true
	s[1].Name = "changed"
	if got := marshal(t, r.Schemas()); got != want {
		t.Errorf("Schemas after mutating a copy\n got %s\nwant %s", got, want)
	}
	got, ok := r.Get("echo")
	if !ok || got.Execute == nil || got.PresentCall == nil {
		t.Fatalf("Get lost the functions: %+v", got)
	}
	got.Parameters[0] = '['
	if marshal(t, r.Schemas()) != want {
		t.Errorf("mutating Get's Parameters changed the registry")
	}
	if _, ok := r.Get("missing"); ok {
		t.Errorf("Get(missing) found a tool")
	}
}

// TestRawSchemaTool checks that a raw JSON-Schema tool is validated with the
// library's message for the first violation it finds (each case has one:
// with several, which comes first is the library's map order).
func TestRawSchemaTool(t *testing.T) {
	ran := 0
	r := tools.NewRegistry()
	mustRegister(t, r, tools.Tool{
		Name: "mcp_tool", Description: "d",
		Parameters: json.RawMessage(`{"type":"object","properties":{
			"n":{"type":"integer","minimum":1},
			"list":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"}}}},
			"mode":{"enum":["a","b"]},"z":{}},
			"required":["n","z"],"additionalProperties":false}`),
		Execute: func(context.Context, *tools.Exec) (tools.Output, error) {
			ran++
			return tools.Output{Content: []tools.Content{tools.Text("ran")}}, nil
		},
	})
	tests := []struct{ args, want string }{
		{`{"n":2,"z":0}`, "ran"},
		{`[]`, `Error: invalid arguments: "arguments" must be an object`},
		{`nope`, `Error: invalid arguments: "arguments" must be an object`},
		{`{"n":0,"z":1,"list":[{"id":"a"},{"id":"b"},{},{},{},{},{},{},{},{"id":"j"}]}`,
			`Error: invalid arguments: /properties/n: minimum: 0/1 is less than 1.000000`},
		{`{"n":1,"z":1,"list":[{"id":"a"},{"id":3}]}`,
			`Error: invalid arguments: /properties/list/items/properties/id: type: 3 has type "integer", want "string"`},
		{`{"n":1.5,"z":0}`, `Error: invalid arguments: /properties/n: type: 1.5 has type "number", want "integer"`},
		{`{"n":1,"mode":"a"}`, `Error: invalid arguments: required: missing properties: ["z"]`},
		{`{"n":1,"z":0,"extra":1}`, `Error: invalid arguments: unexpected additional properties ["extra"]`},
		{`{"mode":"c","z":0,"n":3}`,
			`Error: invalid arguments: /properties/mode: enum: c does not equal any of: [a b]`},
		// A key given twice is refused before the schema (which would see
		// only the last value) and before the tool gets the text.
		{`{"n":2,"z":0,"n":0}`, `Error: invalid arguments: duplicate key "n" in arguments`},
		{`{"n":2,"z":0,"list":[{"id":"a","id":"b"}]}`, `Error: invalid arguments: duplicate key "id" in "list[0]"`},
	}
	for _, tt := range tests {
		res := r.Execute(context.Background(), &tools.Exec{CallID: "c", Name: "mcp_tool", Args: json.RawMessage(tt.args)})
		if got := res.Content[0].Text; got != tt.want {
			t.Errorf("args %s\n got %s\nwant %s", tt.args, got, tt.want)
		}
		if tt.want != "ran" && (res.Error == nil || res.Error.Code != tools.CodeInvalidArgs) {
			t.Errorf("args %s: error info %+v", tt.args, res.Error)
		}
	}
	if ran != 1 {
		t.Errorf("tool ran %d times, want 1", ran)
	}
}

// TestRawSchemaOtherDraft: a schema of draft-04 (whose boolean
// exclusiveMinimum the library cannot read) registers, and its calls reach
// the tool unchecked by the registry (the MCP server validates them);
// only a non-object is still refused.
func TestRawSchemaOtherDraft(t *testing.T) {
	r := tools.NewRegistry()
	mustRegister(t, r, tools.Tool{
		Name: "old", Description: "d",
		Parameters: json.RawMessage(`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object",
			"properties":{"n":{"type":"integer","minimum":1,"exclusiveMinimum":true}},"required":["n"]}`),
		Execute: func(_ context.Context, ex *tools.Exec) (tools.Output, error) {
			return tools.Output{Content: []tools.Content{tools.Text("ran " + string(ex.Args))}}, nil
		},
	})
	for args, want := range map[string]string{
		`{"n":0}`: `ran {"n":0}`,
		`{}`:      `ran {}`,
		`[1]`:     `Error: invalid arguments: "arguments" must be an object`,
	} {
		res := r.Execute(context.Background(), &tools.Exec{CallID: "c", Name: "old", Args: json.RawMessage(args)})
		if got := res.Content[0].Text; got != want {
			t.Errorf("args %s: got %q, want %q", args, got, want)
		}
	}
}

func TestExecuteNilExec(t *testing.T) {
	res := tools.NewRegistry().Execute(context.Background(), nil)
	if !res.IsError || res.Content[0].Text != "Error: tools: no call to execute" {
		t.Errorf("got %+v", res)
	}
}

// TestRegistryConcurrent runs calls, registrations and Use in parallel
// (meaningful under -race).
func TestRegistryConcurrent(t *testing.T) {
	r := tools.NewRegistry()
	mustRegister(t, r, echoTool("echo", nil))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				switch {
				case i == 0 && j%10 == 0:
					r.Use(func(ctx context.Context, ex *tools.Exec, next tools.Next) tools.Result { return next(ctx, ex) })
				case i == 1 && j%10 == 0:
					_ = r.Register(echoTool(fmt.Sprintf("t%d", j), nil))
				default:
					res := r.Execute(context.Background(), &tools.Exec{CallID: "c", Name: "echo", Args: json.RawMessage(`{"text":"x"}`)})
					if res.IsError || res.Content[0].Text != "x" {
						t.Errorf("got %+v", res)
						return
					}
					_ = r.Schemas()
				}
			}
		}()
	}
	wg.Wait()
	if n := len(r.Schemas()); n != 6 {
		t.Errorf("%d tools, want 6", n)
	}
}

// TestSchemasDescribe: a tool's Describe, when set, is what the model is
// told (asked at each Schemas call), and Description stays the tool's own.
func TestSchemasDescribe(t *testing.T) {
	r := tools.NewRegistry()
	calls := 0
	tool := echoTool("echo", nil)
	tool.Describe = func() string { calls++; return fmt.Sprintf("Echo the text (%d).", calls) }
	mustRegister(t, r, tool)
	for i := 1; i <= 2; i++ {
		if got, want := r.Schemas()[0].Description, fmt.Sprintf("Echo the text (%d).", i); got != want {
			t.Errorf("Schemas #%d description %q, want %q", i, got, want)
		}
	}
	if got, _ := r.Get("echo"); got.Description != "Echo the text." {
		t.Errorf("Description %q", got.Description)
	}
}
