package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// bashArgs mirrors the bash tool's arguments (reference §5.5).
type bashArgs struct {
	Command         string   `json:"command"`
	Description     string   `json:"description"`
	TimeoutMs       *float64 `json:"timeoutMs"`
	Workdir         string   `json:"workdir"`
	RunInBackground bool     `json:"run_in_background"`
}

// bashLike is a test-only tool with bash's schema and a terminal presenter;
// its Execute only echoes the command.
func bashLike() tools.Tool {
	return tools.Define(tools.Def[bashArgs]{
		Name:        "bash",
		Description: "Run a shell command.",
		Terminal:    true,
		Class:       tools.ClassExecute,
		Spec: tools.Spec{
			{Name: "command", Prop: tools.Prop{Type: tools.TypeString, Required: true}},
			{Name: "description", Prop: tools.Prop{Type: tools.TypeString, Required: true, Description: "Clear, concise description (shown in the UI)"}},
			{Name: "timeoutMs", Prop: tools.Prop{Type: tools.TypeNumber}},
			{Name: "workdir", Prop: tools.Prop{Type: tools.TypeString}},
			{Name: "run_in_background", Prop: tools.Prop{Type: tools.TypeBoolean}},
		},
		Execute: func(_ context.Context, ex *tools.Exec, a bashArgs) (tools.Output, error) {
			ex.Report(tools.Progress{Output: "$ " + a.Command + "\n"})
			return tools.Output{Content: []tools.Content{tools.Text(a.Command)}}, nil
		},
		PresentCall: func(a bashArgs) tools.ToolCallView {
			return tools.TerminalCall{Title: a.Command, Description: a.Description, Cwd: a.Workdir}
		},
		PresentResult: func(a bashArgs, r tools.ResultInput) tools.ToolResultView {
			out := ""
			for _, c := range r.Content {
				out += c.Text
			}
			return tools.TerminalResult{Title: a.Command, Output: out}
		},
	})
}

// TestSoftValidation pins reference §10 "Registry" 8 and the soft side of
// Define: presenters give nil (generic fallback) for bad arguments.
func TestSoftValidation(t *testing.T) {
	tool := bashLike()
	tests := []struct {
		name       string
		args       string
		wantCall   tools.ToolCallView
		wantResult tools.ToolResultView
	}{
		{"valid", `{"command":"ls -la","description":"List files","workdir":"src"}`,
			tools.TerminalCall{Title: "ls -la", Description: "List files", Cwd: "src"},
			tools.TerminalResult{Title: "ls -la", Output: "out"}},
		{"missing description (older shape)", `{"command":"ls"}`, nil, nil},
		{"wrong type", `{"command":"ls","description":"d","timeoutMs":"5"}`, nil, nil},
		{"not JSON", `{"command":`, nil, nil},
		{"not an object", `["ls"]`, nil, nil},
		{"empty", ``, nil, nil},
		{"case-folded keys do not count", `{"COMMAND":"ls","Description":"d"}`, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tool.PresentCall(json.RawMessage(tt.args)); !reflect.DeepEqual(got, tt.wantCall) {
				t.Errorf("PresentCall = %#v, want %#v", got, tt.wantCall)
			}
			r := tools.ResultInput{Content: []tools.Content{tools.Text("out")}}
			if got := tool.PresentResult(json.RawMessage(tt.args), r); !reflect.DeepEqual(got, tt.wantResult) {
				t.Errorf("PresentResult = %#v, want %#v", got, tt.wantResult)
			}
		})
	}
	if !tool.Terminal {
		t.Errorf("Terminal flag lost")
	}
	if tool.Class != tools.ClassExecute || tool.ConcurrencySafe {
		t.Errorf("Class, ConcurrencySafe = %v, %v; want Execute, false", tool.Class, tool.ConcurrencySafe)
	}
}

// TestDeclaredDefaults: a tool that declares nothing is ClassUndeclared
// (the zero value, which the permission policy judges strictest) and not
// concurrency-safe; what Define is given reaches the Tool.
func TestDeclaredDefaults(t *testing.T) {
	run := func(context.Context, *tools.Exec, struct{}) (tools.Output, error) { return tools.Output{}, nil }
	plain := tools.Define(tools.Def[struct{}]{Name: "plain", Execute: run})
	if plain.Class != tools.ClassUndeclared || plain.ConcurrencySafe {
		t.Errorf("undeclared tool: Class %v, ConcurrencySafe %v", plain.Class, plain.ConcurrencySafe)
	}
	grep := tools.Define(tools.Def[struct{}]{Name: "grep", Execute: run, Class: tools.ClassReadOnly, ConcurrencySafe: true})
	if grep.Class != tools.ClassReadOnly || !grep.ConcurrencySafe {
		t.Errorf("declared tool: Class %v, ConcurrencySafe %v", grep.Class, grep.ConcurrencySafe)
	}
	for c, want := range map[tools.Class]string{tools.ClassUndeclared: "Undeclared", tools.ClassReadOnly: "ReadOnly",
		tools.ClassAgentState: "AgentState", tools.ClassEdit: "Edit", tools.ClassExecute: "Execute", 9: "Class(9)"} {
		if got := c.String(); got != want {
			t.Errorf("Class(%d).String() = %q, want %q", int(c), got, want)
		}
	}
}

// TestDefineExecute checks validation before the author's code, case-
// sensitive decoding and decode failures.
func TestDefineExecute(t *testing.T) {
	type inner struct {
		Deep string `json:"deep"`
	}
	type args struct {
		Path  string           `json:"path"`
		Count int              `json:"count"`
		Opt   *inner           `json:"opt"`
		List  []inner          `json:"list"`
		Map   map[string]inner `json:"map"`
		Raw   json.RawMessage  `json:"raw"`
		Plain string           // no tag: JSON name "Plain"
	}
	var got args
	calls := 0
	tool := tools.Define(tools.Def[args]{
		Name: "t", Description: "d",
		Spec: tools.Spec{
			{Name: "path", Prop: tools.Prop{Type: tools.TypeString}},
			{Name: "count", Prop: tools.Prop{Type: tools.TypeNumber}},
		},
		Execute: func(_ context.Context, _ *tools.Exec, a args) (tools.Output, error) {
			calls++
			got = a
			return tools.Output{}, nil
		},
	})
	tests := []struct {
		name, args string
		want       args
		wantErr    string
	}{
		{"exact keys", `{"path":"p","count":2,"Plain":"x"}`, args{Path: "p", Count: 2, Plain: "x"}, ""},
		{"folded key ignored", `{"PATH":"p","Count":2,"plain":"x"}`, args{}, ""},
		{"exact wins over folded", `{"path":"yes","Path":"no"}`, args{Path: "yes"}, ""},
		{"folded keys dropped at depth", `{"opt":{"DEEP":"no","deep":"yes"},"list":[{"Deep":"no"},{"deep":"x"}],"map":{"k":{"dEEp":"no"}}}`,
			args{Opt: &inner{Deep: "yes"}, List: []inner{{}, {Deep: "x"}}, Map: map[string]inner{"k": {}}}, ""},
		{"raw message kept as is", `{"raw":{"ANY":"Case"}}`, args{Raw: json.RawMessage(`{"ANY":"Case"}`)}, ""},
		{"empty means {}", ``, args{}, ""},
		{"validation first", `{"path":1}`, args{}, `invalid arguments: "path" must be a string`},
		{"fraction into int", `{"count":1.5}`, args{}, `invalid arguments: "count" cannot be decoded: number 1.5 into Go type int`},
		{"duplicate key", `{"path":"a","path":"b"}`, args{}, `invalid arguments: duplicate key "path" in arguments`},
		{"duplicate key, same value", `{"path":"a","count":1,"path":"a"}`, args{}, `invalid arguments: duplicate key "path" in arguments`},
		{"duplicate key at depth", `{"path":"a","list":[{"deep":"x","deep":"y"}]}`, args{}, `invalid arguments: duplicate key "deep" in "list[0]"`},
		{"duplicate key not in the spec", `{"path":"a","Plain":"x","Plain":"y"}`, args{}, `invalid arguments: duplicate key "Plain" in arguments`},
		{"duplicate key under a raw message", `{"raw":{"k":1,"k":2}}`, args{}, `invalid arguments: duplicate key "k" in "raw"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, calls = args{}, 0
			_, err := tool.Execute(context.Background(), &tools.Exec{CallID: "c", Name: "t", Args: json.RawMessage(tt.args)})
			if tt.wantErr != "" {
				var ae *tools.ArgsError
				if err == nil || err.Error() != tt.wantErr || !errors.As(err, &ae) {
					t.Fatalf("err = %v, want ArgsError %q", err, tt.wantErr)
				}
				if calls != 0 {
					t.Errorf("the author's Execute ran on invalid arguments")
				}
				return
			}
			if err != nil || calls != 1 {
				t.Fatalf("err = %v, calls = %d", err, calls)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decoded %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDefineFields(t *testing.T) {
	strict := true
	tool := tools.Define(tools.Def[map[string]any]{
		Name: "m", Description: "desc", Strict: &strict,
		Spec:    tools.Spec{{Name: "a", Prop: tools.Prop{Type: tools.TypeString, Required: true}}},
		Execute: func(context.Context, *tools.Exec, map[string]any) (tools.Output, error) { return tools.Output{}, nil },
	})
	strict = false
	if tool.Strict == nil || !*tool.Strict {
		t.Errorf("Strict not copied: %v", tool.Strict)
	}
	if string(tool.Parameters) != `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}` {
		t.Errorf("Parameters %s", tool.Parameters)
	}
	if spec, ok := tool.Spec(); !ok || len(spec) != 1 || spec[0].Name != "a" {
		t.Errorf("Spec() = %v, %v", spec, ok)
	}
	if _, ok := (tools.Tool{}).Spec(); ok {
		t.Errorf("a raw tool reports a spec")
	}
	if tool.PresentCall != nil || tool.PresentResult != nil || tool.Preview != nil {
		t.Errorf("absent functions should stay nil")
	}
}

// pathArgs is a one-field argument type.
type pathArgs struct {
	Path string `json:"path"`
}

func TestDefinePreview(t *testing.T) {
	old := "a\n"
	tool := tools.Define(tools.Def[pathArgs]{
		Name: "w", Description: "d",
		Spec:    tools.Spec{{Name: "path", Prop: tools.Prop{Type: tools.TypeString, Required: true}}},
		Execute: func(context.Context, *tools.Exec, pathArgs) (tools.Output, error) { return tools.Output{}, nil },
		Preview: func(_ context.Context, _ *tools.Exec, a pathArgs) (tools.ToolCallView, error) {
			return tools.DiffCall{Title: a.Path, Diffs: []tools.FileDiff{{Path: "/w/" + a.Path, OldText: &old, NewText: "b\n"}}}, nil
		},
	})
	v, err := tool.Preview(context.Background(), &tools.Exec{Args: json.RawMessage(`{"path":"f.txt"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := v.(tools.DiffCall); !ok || d.Title != "f.txt" || d.Diffs[0].Path != "/w/f.txt" {
		t.Errorf("preview %#v", v)
	}
	v, err = tool.Preview(context.Background(), &tools.Exec{Args: json.RawMessage(`{}`)})
	if v != nil || err == nil || err.Error() != `invalid arguments: missing required property "path"` {
		t.Errorf("preview of bad args = %v, %v", v, err)
	}
}

// TestDuplicateKeyPresenters: arguments that give a key twice are
// refused by every reader of a Define tool alike: Execute and Preview
// fail with the violation, the call and result cards fall back to the
// generic card (nil), Access touches nothing, and the start card of
// streamed members that repeat a key is nil too (the first value is
// never shown as the call's).
func TestDuplicateKeyPresenters(t *testing.T) {
	ran := false
	tool := tools.Define(tools.Def[pathArgs]{
		Name: "w", Description: "d",
		Spec: tools.Spec{{Name: "path", Prop: tools.Prop{Type: tools.TypeString, Required: true}}},
		Execute: func(context.Context, *tools.Exec, pathArgs) (tools.Output, error) {
			ran = true
			return tools.Output{}, nil
		},
		Preview: func(context.Context, *tools.Exec, pathArgs) (tools.ToolCallView, error) {
			return tools.GenericCall{Title: "p"}, nil
		},
		PresentCall:   func(a pathArgs) tools.ToolCallView { return tools.GenericCall{Title: a.Path} },
		PresentStart:  func(a pathArgs) tools.ToolCallView { return tools.GenericCall{Title: a.Path} },
		PresentResult: func(a pathArgs, _ tools.ResultInput) tools.ToolResultView { return tools.GenericResult{Title: a.Path} },
		Access:        func(a pathArgs) tools.Access { return tools.Access{Paths: []string{a.Path}} },
	})
	const want = `invalid arguments: duplicate key "path" in arguments`
	raw := json.RawMessage(`{"path":"a","path":"b"}`)
	for range 2 { // the second round reads the presenters' cache
		if _, err := tool.Execute(context.Background(), &tools.Exec{Args: raw}); err == nil || err.Error() != want || ran {
			t.Errorf("Execute = %v (ran %v), want %q", err, ran, want)
		}
		if v, err := tool.Preview(context.Background(), &tools.Exec{Args: raw}); v != nil || err == nil || err.Error() != want {
			t.Errorf("Preview = %v, %v; want %q", v, err, want)
		}
		if v := tool.CallView(raw); v != nil {
			t.Errorf("CallView = %#v, want nil", v)
		}
		if v := tool.ResultView(raw, tools.ResultInput{IsError: true}); v != nil {
			t.Errorf("ResultView = %#v, want nil", v)
		}
		if acc, ok := tool.Access(raw); ok {
			t.Errorf("Access = %+v, true; want nothing", acc)
		}
		if v := tool.StartView(raw); v != nil {
			t.Errorf("StartView = %#v, want nil", v)
		}
	}
	if v := tool.StartView(json.RawMessage(`{"path":"a"}`)); v == nil || v.(tools.GenericCall).Title != "a" {
		t.Errorf("StartView of the first member = %#v, want a card for a", v)
	}
}

// TestCallViewSafe checks the panic-safe presenter helpers.
func TestCallViewSafe(t *testing.T) {
	tool := bashLike()
	if v := tool.CallView(json.RawMessage(`{"command":"ls","description":"d"}`)); v == nil {
		t.Errorf("CallView lost the view")
	}
	tool.PresentCall = func(json.RawMessage) tools.ToolCallView { panic("bad presenter") }
	tool.PresentResult = func(json.RawMessage, tools.ResultInput) tools.ToolResultView { panic("bad presenter") }
	if tool.CallView(nil) != nil || tool.ResultView(nil, tools.ResultInput{}) != nil {
		t.Errorf("a panicking presenter should give nil")
	}
	if (tools.Tool{}).CallView(nil) != nil || (tools.Tool{}).ResultView(nil, tools.ResultInput{}) != nil {
		t.Errorf("absent presenters should give nil")
	}
}

func TestProgress(t *testing.T) {
	var got []tools.Progress
	r := tools.NewRegistry()
	mustRegister(t, r, bashLike())
	res := r.Execute(context.Background(), &tools.Exec{
		CallID: "c", Name: "bash", Args: json.RawMessage(`{"command":"echo hi","description":"Say hi"}`),
		Progress: func(p tools.Progress) { got = append(got, p) },
	})
	if res.IsError || len(got) != 1 || got[0].Output != "$ echo hi\n" {
		t.Errorf("result %+v, progress %+v", res, got)
	}
	// Without a sink Report is a no-op; invalid UTF-8 is repaired.
	(&tools.Exec{}).Report(tools.Progress{Output: "x"})
	var nilExec *tools.Exec
	nilExec.Report(tools.Progress{Output: "x"})
	got = nil
	ex := &tools.Exec{Progress: func(p tools.Progress) { got = append(got, p) }}
	ex.Report(tools.Progress{Output: "a\xffb", Plan: []tools.PlanEntry{{Content: "step", Status: "pending"}}})
	if len(got) != 1 || got[0].Output != "a\uFFFDb" || got[0].Plan[0].Status != "pending" {
		t.Errorf("progress %+v", got)
	}
}

func TestErrorTypes(t *testing.T) {
	cause := errors.New("cause")
	e := &tools.Error{Code: "C", Err: cause}
	if e.Error() != "cause" || e.ErrorName() != "HarnessError" || !errors.Is(e, cause) {
		t.Errorf("Error: %q %q", e.Error(), e.ErrorName())
	}
	u := tools.UnknownToolError("x")
	if u.Error() != `unknown tool "x"` || u.ErrorName() != "ToolNotFoundError" || u.ErrorCode() != "UNKNOWN_TOOL" {
		t.Errorf("UnknownToolError: %+v", u)
	}
	a := &tools.ArgsError{Violations: []string{`missing required property "a"`, `"b" must be a number`}}
	if a.Error() != `invalid arguments: missing required property "a"; "b" must be a number` || a.ErrorName() != "ToolArgsError" || a.ErrorCode() != "INVALID_ARGS" {
		t.Errorf("ArgsError: %q", a.Error())
	}
	var ce tools.CodedError = a
	_ = ce
	if got := marshal(t, tools.ErrorResult("id", nil)); got != `{"callId":"id","content":[{"type":"text","text":"Error: (no message)"}],"isError":true}` {
		t.Errorf("ErrorResult(nil) = %s", got)
	}
	if !strings.Contains(marshal(t, tools.FileDiff{Path: "/a", NewText: "x"}), `"oldText":null`) {
		t.Errorf("FileDiff must marshal oldText as null")
	}
	for _, k := range []tools.Kind{tools.KindRead, tools.KindEdit, tools.KindDelete, tools.KindMove, tools.KindSearch, tools.KindExecute, tools.KindFetch, tools.KindOther} {
		if !k.Valid() {
			t.Errorf("%q not valid", k)
		}
	}
	if tools.Kind("think").Valid() || tools.Kind("").Valid() {
		t.Errorf("think or empty should not be valid kinds")
	}
}
