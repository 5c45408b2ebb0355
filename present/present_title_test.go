package present

import (
	"encoding/json"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// TestResultTitleFallsBackToCallPath: a result card with a title but no
// locations or diffs is relativized with the call card's path, so it
// does not undo the relativized call title.
func TestResultTitleFallsBackToCallPath(t *testing.T) {
	lookup := fakeLookup{"touch": {Name: "touch",
		PresentCall: func(json.RawMessage) tools.ToolCallView {
			return tools.GenericCall{Title: "Touch /proj/src/a.go", Locations: []tools.FileLocation{{Path: "/proj/src/a.go"}}}
		},
		PresentResult: func(json.RawMessage, tools.ResultInput) tools.ToolResultView {
			return tools.GenericResult{Title: "Touched /proj/src/a.go"}
		}}}
	p := NewPresenter(View{Cwd: "/proj", LineBase: 1}, lookup)
	call := p.Updates(session.Event{Data: session.ToolCall{CallID: "c", Name: "touch", Arguments: "{}"}})
	res := p.Updates(session.Event{Data: session.ToolResult{CallID: "c", Content: []tools.Content{tools.Text("ok")}}})
	if len(call) != 1 || call[0].(acp.ToolCall).Title != "Touch src/a.go" {
		t.Fatalf("call title = %+v", call)
	}
	if len(res) != 1 {
		t.Fatalf("result = %+v", res)
	}
	if u := res[0].(acp.ToolCallUpdate); u.Title == nil || *u.Title != "Touched src/a.go" {
		t.Errorf("result title = %v", u.Title)
	}
}
