package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// fakeEditor answers permission requests with a fixed option.
type fakeEditor struct {
	nopClient
	option string
	asked  int
	last   acp.RequestPermissionRequest
}

func (f *fakeEditor) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	f.asked++
	f.last = p
	if f.option == "cancelled" {
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: acp.OutcomeCancelled}}, nil
	}
	return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: acp.OutcomeSelected, OptionID: f.option}}, nil
}

// TestPermissionMiddlewareTable runs mode × tool × inside/outside × answer
// through the registry's execute chain.
func TestPermissionMiddlewareTable(t *testing.T) {
	cwd := t.TempDir()
	outside := filepath.Join(t.TempDir(), "x.txt")
	inside := filepath.Join(cwd, "x.txt")
	argsFor := func(tool, path string) string {
		switch tool {
		case "bash":
			if path == outside {
				return fmt.Sprintf(`{"command":"make","description":"d","workdir":%q}`, filepath.Dir(outside))
			}
			return `{"command":"make","description":"d"}`
		case "todo_write":
			return `{"todos":[]}`
		}
		return fmt.Sprintf(`{"file_path":%q}`, path)
	}
	// want: "run", "ask", or "refuse" for mode × tool × where.
	type key struct{ mode, tool, where string }
	want := map[key]string{}
	for _, mode := range []string{"default", "acceptEdits", "plan", "bypassPermissions"} {
		for _, tool := range []string{"read", "write", "edit", "bash", "todo_write"} {
			for _, where := range []string{"inside", "outside"} {
				w := "ask"
				switch {
				case tool == "todo_write":
					w = "run"
				case mode == "plan" && tool != "read":
					w = "refuse"
				case where == "outside":
					w = "ask"
				case tool == "read":
					w = "run"
				case mode == "bypassPermissions":
					w = "run"
				case mode == "acceptEdits" && tool != "bash":
					w = "run"
				}
				want[key{mode, tool, where}] = w
			}
		}
	}
	for k, w := range want {
		for _, option := range []string{"allow-once", "reject-once"} {
			name := fmt.Sprintf("%s/%s/%s/%s", k.mode, k.tool, k.where, option)
			reg := tools.NewRegistry()
			ran := 0
			for tn, class := range testClasses {
				_ = reg.Register(tools.Tool{Name: tn, Class: class, Parameters: json.RawMessage(`{"type":"object"}`),
					Execute: func(context.Context, *tools.Exec) (tools.Output, error) {
						ran++
						return tools.Output{Content: []tools.Content{tools.Text("ok")}}, nil
					},
					Access: testAccess})
			}
			fe := &fakeEditor{option: option}
			b := New(Config{Tools: reg, Mode: k.mode})
			reg.Use(b.Permission)
			b.client = fe
			s := b.openSession("s1", cwd, nil)
			path := inside
			if k.where == "outside" {
				path = outside
			}
			res := reg.Execute(context.Background(), &tools.Exec{CallID: "c1", Name: k.tool, Args: json.RawMessage(argsFor(k.tool, path)), Session: s.agent.Tools})
			asked := fe.asked == 1
			text := tools.JoinText(res.Content)
			switch {
			case w == "run" && (asked || ran != 1 || res.IsError):
				t.Errorf("%s: want run, got asked=%v ran=%d %q", name, asked, ran, text)
			case w == "refuse" && (asked || ran != 0 || !strings.Contains(text, "plan mode")):
				t.Errorf("%s: want refuse, got asked=%v ran=%d %q", name, asked, ran, text)
			case w == "ask" && !asked:
				t.Errorf("%s: want ask, not asked (ran=%d %q)", name, ran, text)
			case w == "ask" && option == "allow-once" && (ran != 1 || res.IsError):
				t.Errorf("%s: allowed but ran=%d %q", name, ran, text)
			case w == "ask" && option == "reject-once" && (ran != 0 || !res.IsError || !strings.Contains(text, "rejected")):
				t.Errorf("%s: rejected but ran=%d %q", name, ran, text)
			}
			if asked && (fe.last.ToolCall.Status != acp.StatusPending || fe.last.ToolCall.ToolCallID != "c1" || len(fe.last.Options) != 4) {
				t.Errorf("%s: permission request %+v", name, fe.last)
			}
		}
	}
}

// TestPermissionSkipsHopelessCalls: a call whose Preview fails (the edit
// cannot apply) and a call of an unknown tool fail at once, without a
// permission prompt and without running anything.
func TestPermissionSkipsHopelessCalls(t *testing.T) {
	reg := tools.NewRegistry()
	ran := 0
	_ = reg.Register(tools.Tool{Name: "edit", Class: tools.ClassEdit, Parameters: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, *tools.Exec) (tools.Output, error) { ran++; return tools.Output{}, nil },
		Preview: func(context.Context, *tools.Exec) (tools.ToolCallView, error) {
			return nil, fmt.Errorf("old_string was not found")
		}})
	fe := &fakeEditor{option: "allow-once"}
	b := New(Config{Tools: reg, Mode: "default"})
	reg.Use(b.Permission)
	b.client = fe
	s := b.openSession("s1", t.TempDir(), nil)
	for name, want := range map[string]string{"edit": "old_string was not found", "grep": `unknown tool "grep"`} {
		res := reg.Execute(context.Background(), &tools.Exec{CallID: "c", Name: name, Args: json.RawMessage(`{"file_path":"a.txt"}`), Session: s.agent.Tools})
		if text := tools.JoinText(res.Content); !res.IsError || !strings.Contains(text, want) {
			t.Errorf("%s: result %q, want an error containing %q", name, text, want)
		}
	}
	if fe.asked != 0 || ran != 0 {
		t.Errorf("asked %d times, ran %d times; want 0 and 0", fe.asked, ran)
	}
}

// testClasses are the classes the real tools of these names declare.
var testClasses = map[string]tools.Class{
	"read": tools.ClassReadOnly, "write": tools.ClassEdit, "edit": tools.ClassEdit,
	"bash": tools.ClassExecute, "todo_write": tools.ClassAgentState,
}

// testAccess reads file_path, workdir and command like the real tools
// declare them.
func testAccess(args json.RawMessage) (tools.Access, bool) {
	var a struct {
		FilePath string `json:"file_path"`
		Workdir  string `json:"workdir"`
		Command  string `json:"command"`
	}
	if json.Unmarshal(args, &a) != nil {
		return tools.Access{}, false
	}
	acc := tools.Access{Command: a.Command}
	for _, p := range []string{a.FilePath, a.Workdir} {
		if p != "" {
			acc.Paths = append(acc.Paths, p)
		}
	}
	return acc, true
}
