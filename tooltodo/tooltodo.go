// Package tooltodo is the todo_write tool: the model keeps a task list
// for the session by sending the whole list on every call. Each write is
// reported as a plan (tools.Progress{Plan}); the agent logs it as a
// session.Plan event and the bridge shows it as an ACP `plan` update
// while the call runs, between its tool_call and its final update.
package tooltodo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dsh-acp/dsh-acp/tools"
)

// Name is the tool's name.
const Name = "todo_write"

// The statuses a todo may have (the ACP plan entry statuses).
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
)

// Todo is one item of the list.
type Todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// Args are the tool's arguments: the whole list, in order.
type Args struct {
	Todos []Todo `json:"todos"`
}

const description = `Keep a task list for the current piece of work, shown to the user as a plan.

Use it when a request needs several distinct steps (about three or more), when the user gives a list of things to do, or when new steps turn up along the way. Skip it for a single, simple step or a question that needs no work.

Rules:
- Every call replaces the whole list: always send all items, including the finished ones, not only the changes.
- Each item has a short, specific content (unique within the list) and a status: pending, in_progress or completed.
- At most one item is in_progress at a time. Mark an item in_progress before you start it, and completed as soon as it is fully done (not when it is only partly done or failed); then move to the next one.
- Add, remove or reword items as your understanding changes.`

// spec is the argument schema.
var spec = tools.Spec{
	{Name: "todos", Prop: tools.Prop{
		Type: tools.TypeArray, Required: true,
		Description: "The complete, updated task list, in order.",
		Items: &tools.Prop{Type: tools.TypeObject, Properties: []tools.NamedProp{
			{Name: "content", Prop: tools.Prop{Type: tools.TypeString, Required: true, Description: "What the task is, in a few words."}},
			{Name: "status", Prop: tools.Prop{Type: tools.TypeString, Required: true, Enum: []string{StatusPending, StatusInProgress, StatusCompleted},
				Description: "pending, in_progress (at most one item) or completed."}},
		}},
	}},
}

// New returns the todo_write tool.
func New() tools.Tool {
	return tools.Define(tools.Def[Args]{
		Name:        Name,
		Description: description,
		// It changes only the session's plan.
		Class:       tools.ClassAgentState,
		Spec:        spec,
		Execute:     execute,
		PresentCall: presentCall,
	})
}

// execute checks the list, reports it as a plan and returns the counts:
// `Updated todo list: P pending, I in progress, C completed.`
func execute(_ context.Context, ex *tools.Exec, a Args) (tools.Output, error) {
	if ex == nil || ex.Progress == nil {
		return tools.Output{}, errors.New("todo_write requires an owning agent session")
	}
	entries, err := Check(a.Todos)
	if err != nil {
		return tools.Output{}, err
	}
	ex.Report(tools.Progress{Plan: entries})
	var p, i, c int
	for _, e := range entries {
		switch e.Status {
		case StatusPending:
			p++
		case StatusInProgress:
			i++
		case StatusCompleted:
			c++
		}
	}
	text := fmt.Sprintf("Updated todo list: %d pending, %d in progress, %d completed.", p, i, c)
	return tools.Output{Content: []tools.Content{tools.Text(text)}}, nil
}

// Check applies the rules the schema cannot express and returns the plan
// (contents trimmed; never nil). Errors, in the order checked:
// "invalid todo: `content` must be a non-empty string" (after trimming),
// `invalid todos: duplicate content "<x>"`,
// "invalid todos: at most one task may be in_progress, got N".
func Check(todos []Todo) ([]tools.PlanEntry, error) {
	entries := make([]tools.PlanEntry, 0, len(todos))
	seen := make(map[string]bool, len(todos))
	inProgress := 0
	for _, t := range todos {
		content := strings.TrimSpace(t.Content)
		if content == "" {
			return nil, errors.New("invalid todo: `content` must be a non-empty string")
		}
		entries = append(entries, tools.PlanEntry{Content: content, Status: t.Status})
	}
	for _, e := range entries {
		if seen[e.Content] {
			return nil, fmt.Errorf("invalid todos: duplicate content %q", e.Content)
		}
		seen[e.Content] = true
		if e.Status == StatusInProgress {
			inProgress++
		}
	}
	if inProgress > 1 {
		return nil, fmt.Errorf("invalid todos: at most one task may be in_progress, got %d", inProgress)
	}
	return entries, nil
}

// presentCall is a generic card "Update todo list" of kind other whose
// salient input is the list.
func presentCall(a Args) tools.ToolCallView {
	raw, err := json.Marshal(a.Todos)
	if err != nil || a.Todos == nil {
		raw = json.RawMessage("[]")
	}
	return tools.GenericCall{Title: "Update todo list", Kind: tools.KindOther, RawInput: raw}
}
