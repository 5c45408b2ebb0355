package toolstest_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/tools/toolstest"
)

type editArgs struct {
	Path    string   `json:"file_path"`
	Old     string   `json:"old_string"`
	New     string   `json:"new_string"`
	All     bool     `json:"replace_all"`
	Line    *float64 `json:"line"`
	Options struct {
		Mode string `json:"mode"`
	} `json:"options"`
}

var editSpec = tools.Spec{
	{Name: "file_path", Prop: tools.Prop{Type: tools.TypeString, Required: true}},
	{Name: "old_string", Prop: tools.Prop{Type: tools.TypeString, Required: true}},
	{Name: "new_string", Prop: tools.Prop{Type: tools.TypeString, Required: true}},
	{Name: "replace_all", Prop: tools.Prop{Type: tools.TypeBoolean}},
	{Name: "line", Prop: tools.Prop{Type: tools.TypeNumber}},
	{Name: "options", Prop: tools.Prop{Type: tools.TypeObject, Properties: []tools.NamedProp{
		{Name: "mode", Prop: tools.Prop{Type: tools.TypeString, Enum: []string{"a", "b"}}},
	}}},
}

// goodDef is a well-behaved tool with every presenter and a preview; tests
// break one thing at a time.
func goodDef() tools.Def[editArgs] {
	return tools.Def[editArgs]{
		Name: "edit", Description: "Replace text in a file.", Spec: editSpec,
		Execute: func(context.Context, *tools.Exec, editArgs) (tools.Output, error) {
			panic("Execute must never run in the conformance suite")
		},
		PresentCall: func(a editArgs) tools.ToolCallView {
			if a.Path == "" {
				return nil
			}
			old := a.Old
			return tools.DiffCall{Title: "Edit " + a.Path, Diffs: []tools.FileDiff{{Path: "/w/" + a.Path, OldText: &old, NewText: a.New}},
				Locations: []tools.FileLocation{{Path: "/w/" + a.Path}}}
		},
		PresentResult: func(a editArgs, r tools.ResultInput) tools.ToolResultView {
			if r.IsError {
				return tools.GenericResult{Title: "Edit failed", Content: r.Content}
			}
			var meta struct {
				Before *string `json:"before"`
			}
			if json.Unmarshal(r.Meta, &meta) != nil || meta.Before == nil || a.Path == "" {
				return nil
			}
			return tools.DiffResult{Title: a.Path, Diffs: []tools.FileDiff{{Path: "/w/" + a.Path, OldText: meta.Before, NewText: "x"}}}
		},
		PresentStart: func(a editArgs) tools.ToolCallView {
			if a.Path == "" {
				return nil
			}
			return tools.DiffCall{Title: "Edit " + a.Path, Locations: []tools.FileLocation{{Path: "/w/" + a.Path}}}
		},
		Preview: func(context.Context, *tools.Exec, editArgs) (tools.ToolCallView, error) { return nil, nil },
	}
}

var samples = []json.RawMessage{
	json.RawMessage(`{"file_path":"a.txt","old_string":"x","new_string":"y"}`),
	json.RawMessage(`{"file_path":"b.txt","old_string":"","new_string":"y","replace_all":true,"options":{"mode":"a"}}`),
}

func TestGoodToolPasses(t *testing.T) {
	toolstest.Run(t, tools.Define(goodDef()), toolstest.Config{
		Samples: samples,
		Results: []tools.ResultInput{{Content: []tools.Content{tools.Text("ok")}, Meta: json.RawMessage(`{"before":"x"}`)}},
	})
}

func TestRawToolPasses(t *testing.T) {
	toolstest.Run(t, tools.Tool{
		Name: "mcp_search", Description: "Search.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":["integer","null"]}},"required":["q"]}`),
		Execute:    func(context.Context, *tools.Exec) (tools.Output, error) { panic("must not run") },
	}, toolstest.Config{})
}

func TestBrokenToolsFail(t *testing.T) {
	withDef := func(f func(d *tools.Def[editArgs])) tools.Tool {
		d := goodDef()
		f(&d)
		return tools.Define(d)
	}
	var calls atomic.Int64
	tests := []struct {
		name string
		tool tools.Tool
		want string // a substring of the joined failures
	}{
		{"bad name", withDef(func(d *tools.Def[editArgs]) { d.Name = "edit file" }), `definition: name "edit file" does not match`},
		{"no description", withDef(func(d *tools.Def[editArgs]) { d.Description = " " }), "definition: description is empty"},
		{"tampered parameters", func() tools.Tool {
			tool := tools.Define(goodDef())
			tool.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
			return tool
		}(), "differ from the Spec's schema"},
		{"non-object schema", tools.Tool{Name: "x", Description: "d", Parameters: json.RawMessage(`{"type":"string"}`),
			Execute: func(context.Context, *tools.Exec) (tools.Output, error) { return tools.Output{}, nil }}, `schema: tool.Parameters {"type":"string"} are not a JSON object`},
		{"validation skipped", tools.Tool{Name: "x", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`),
			Execute: func(context.Context, *tools.Exec) (tools.Output, error) { return tools.Output{}, nil }}, "", // raw tools are validated by the registry: passes
		},
		{"panicking start presenter", withDef(func(d *tools.Def[editArgs]) {
			d.PresentStart = func(a editArgs) tools.ToolCallView {
				if a.Path != "" && a.Old == "" {
					panic("no old string yet")
				}
				return nil
			}
		}), "presenters: PresentStart("},
		{"panicking presenter", withDef(func(d *tools.Def[editArgs]) {
			d.PresentCall = func(a editArgs) tools.ToolCallView { return tools.GenericCall{Title: a.Path[:1]} }
		}), "presenters: PresentCall(" /* panics on "" */},
		{"impure presenter", withDef(func(d *tools.Def[editArgs]) {
			d.PresentCall = func(a editArgs) tools.ToolCallView {
				return tools.GenericCall{Title: a.Path, Content: []tools.Content{tools.Text(string(rune('a' + calls.Add(1)%20)))}}
			}
		}), "not pure"},
		{"pointer view", withDef(func(d *tools.Def[editArgs]) {
			d.PresentCall = func(a editArgs) tools.ToolCallView { return &tools.GenericCall{Title: a.Path} }
		}), "returned *tools.GenericCall, not a GenericCall, TerminalCall or DiffCall value"},
		{"typed nil view", withDef(func(d *tools.Def[editArgs]) {
			d.PresentCall = func(a editArgs) tools.ToolCallView { var g *tools.GenericCall; return g }
		}), "returned a nil *tools.GenericCall instead of a nil view"},
		{"bad kind", withDef(func(d *tools.Def[editArgs]) {
			d.PresentCall = func(a editArgs) tools.ToolCallView { return tools.GenericCall{Title: "t", Kind: "think"} }
		}), `GenericCall.Kind "think" is not a known kind`},
		{"negative line", withDef(func(d *tools.Def[editArgs]) {
			d.PresentCall = func(a editArgs) tools.ToolCallView {
				return tools.GenericCall{Title: "t", Locations: []tools.FileLocation{{Path: "/a", Line: -1}}}
			}
		}), "is negative"},
		{"diff without path", withDef(func(d *tools.Def[editArgs]) {
			d.PresentCall = func(a editArgs) tools.ToolCallView {
				return tools.DiffCall{Title: "t", Diffs: []tools.FileDiff{{Path: a.Path}}}
			}
		}), "diffs[0] has no path"},
		{"exit code and signal", withDef(func(d *tools.Def[editArgs]) {
			d.PresentResult = func(a editArgs, r tools.ResultInput) tools.ToolResultView {
				code := 1
				return tools.TerminalResult{ExitCode: &code, Signal: "SIGTERM"}
			}
		}), "both exit code 1 and signal"},
		{"mutates result", withDef(func(d *tools.Def[editArgs]) {
			d.PresentResult = func(a editArgs, r tools.ResultInput) tools.ToolResultView {
				if len(r.Content) > 0 {
					r.Content[0].Text = "changed"
				}
				return nil
			}
		}), "modified its inputs"},
		{"raw presenter mutates args", func() tools.Tool {
			tool := tools.Define(goodDef())
			tool.PresentCall = func(args json.RawMessage) tools.ToolCallView {
				if len(args) > 0 {
					args[0] = ' '
				}
				return nil
			}
			return tool
		}(), "modified its arguments"},
		{"preview without validation", func() tools.Tool {
			tool := tools.Define(goodDef())
			tool.Preview = func(context.Context, *tools.Exec) (tools.ToolCallView, error) {
				return tools.GenericCall{Title: "t"}, nil
			}
			return tool
		}(), "preview: arguments \"[]\": Preview returned a view for arguments that are not an object"},
		{"invalid arguments reach the tool", func() tools.Tool {
			tool := tools.Define(goodDef())
			tool.Execute = func(context.Context, *tools.Exec) (tools.Output, error) { return tools.Output{}, nil }
			return tool
		}(), "invalid-arguments: arguments \"[]\": not an error result"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := toolstest.Check(tt.tool, toolstest.Config{Samples: samples, Rounds: 100})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Check failed: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check = %v\nwant a failure containing %q", err, tt.want)
			}
		})
	}
}
