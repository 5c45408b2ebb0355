package tooltodo

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/tools/toolstest"
)

// run executes one call through a registry and returns the result and the
// plans it reported.
func run(t *testing.T, args string, withAgent bool) (tools.Result, [][]tools.PlanEntry) {
	t.Helper()
	reg := tools.NewRegistry()
	if err := reg.Register(New()); err != nil {
		t.Fatal(err)
	}
	var plans [][]tools.PlanEntry
	ex := &tools.Exec{CallID: "c1", Name: Name, Args: json.RawMessage(args), Session: tools.NewSession("s", "/w")}
	if withAgent {
		ex.Progress = func(p tools.Progress) {
			if p.Plan != nil {
				plans = append(plans, p.Plan)
			}
		}
	}
	return reg.Execute(context.Background(), ex), plans
}

func text(r tools.Result) string { return tools.JoinText(r.Content) }

// TestTodoWrite: the reference's texts for a valid list, the value rules
// and a missing agent; only a valid list reports a plan.
func TestTodoWrite(t *testing.T) {
	res, plans := run(t, `{"todos":[{"content":"  Read the code ","status":"completed"},{"content":"Fix the bug","status":"in_progress"},{"content":"Run tests","status":"pending"},{"content":"Write notes","status":"pending"}]}`, true)
	if res.IsError || text(res) != "Updated todo list: 2 pending, 1 in progress, 1 completed." {
		t.Errorf("result = %+v", res)
	}
	want := []tools.PlanEntry{{Content: "Read the code", Status: "completed"}, {Content: "Fix the bug", Status: "in_progress"}, {Content: "Run tests", Status: "pending"}, {Content: "Write notes", Status: "pending"}}
	if len(plans) != 1 || !reflect.DeepEqual(plans[0], want) {
		t.Errorf("plans = %+v", plans)
	}
	res, plans = run(t, `{"todos":[]}`, true)
	if text(res) != "Updated todo list: 0 pending, 0 in progress, 0 completed." || len(plans) != 1 || plans[0] == nil || len(plans[0]) != 0 {
		t.Errorf("empty list: %q, plans %#v", text(res), plans)
	}

	errs := []struct{ args, want string }{
		{`{"todos":[{"content":"   ","status":"pending"}]}`, "Error: invalid todo: `content` must be a non-empty string"},
		{`{"todos":[{"content":"a","status":"pending"},{"content":" a ","status":"completed"}]}`, `Error: invalid todos: duplicate content "a"`},
		{`{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"},{"content":"c","status":"in_progress"}]}`, "Error: invalid todos: at most one task may be in_progress, got 3"},
		{`{"todos":[{"content":"a","status":"done"}]}`, `Error: invalid arguments: "todos[0].status" must be one of ["pending","in_progress","completed"]`},
		{`{"todos":[{"status":"pending"}]}`, `Error: invalid arguments: missing required property "todos[0].content"`},
		{`{}`, `Error: invalid arguments: missing required property "todos"`},
	}
	for _, c := range errs {
		res, plans := run(t, c.args, true)
		if !res.IsError || text(res) != c.want || len(plans) != 0 {
			t.Errorf("%s:\n got %q (plans %v)\nwant %q", c.args, text(res), plans, c.want)
		}
	}
	res, _ = run(t, `{"todos":[]}`, false)
	if !res.IsError || text(res) != "Error: todo_write requires an owning agent session" {
		t.Errorf("without an agent: %q", text(res))
	}
}

// TestPresentCall: a generic "Update todo list" card of kind other whose
// raw input is the list; arguments that do not validate fall back.
func TestPresentCall(t *testing.T) {
	v := New().CallView(json.RawMessage(`{"todos":[{"content":"a","status":"pending"}]}`))
	g, ok := v.(tools.GenericCall)
	if !ok || g.Title != "Update todo list" || g.Kind != tools.KindOther || string(g.RawInput) != `[{"content":"a","status":"pending"}]` {
		t.Errorf("call view = %#v", v)
	}
	if v := New().CallView(json.RawMessage(`{"todos":"x"}`)); v != nil {
		t.Errorf("old shape gives %#v, want the fallback", v)
	}
	if New().PresentResult != nil {
		t.Error("todo_write has a result presenter; the generic card shows its text")
	}
}

// TestConformance runs the tools contract checks.
func TestConformance(t *testing.T) {
	toolstest.Run(t, New(), toolstest.Config{
		Samples: []json.RawMessage{json.RawMessage(`{"todos":[{"content":"a","status":"pending"},{"content":"b","status":"in_progress"}]}`)},
		Results: []tools.ResultInput{{Content: []tools.Content{tools.Text("Updated todo list: 1 pending, 1 in progress, 0 completed.")}}},
	})
}
