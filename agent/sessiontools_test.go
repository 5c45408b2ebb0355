package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

func toolNames(req llm.Request) string {
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	return strings.Join(names, ",")
}

// TestSessionToolsPerRequest: each request names the shared tools and
// the session's own, as they are at that request; a tool that joins
// during a turn is offered from the next request on and runs; another
// session never sees it.
func TestSessionToolsPerRequest(t *testing.T) {
	reg := tools.NewRegistry()
	late := tools.Tool{Name: "mcp__srv__late", Description: "joined late", Class: tools.ClassReadOnly,
		Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`),
		Execute: func(_ context.Context, ex *tools.Exec) (tools.Output, error) {
			return tools.Output{Content: []tools.Content{tools.Text("late:" + string(ex.Args))}}, nil
		}}
	tsA := tools.NewSession("a", t.TempDir())
	// "join" stands for the server becoming ready mid-turn: it adds a
	// tool to the session's registry.
	if err := reg.Register(tools.Tool{Name: "join", Parameters: json.RawMessage(`{"type":"object"}`),
		Execute: func(_ context.Context, ex *tools.Exec) (tools.Output, error) {
			return tools.Output{Content: []tools.Content{tools.Text("joined")}}, tools.SessionTools(ex.Session).Register(late)
		}}); err != nil {
		t.Fatal(err)
	}
	if err := tools.SessionTools(tsA).Register(tools.Tool{Name: "mcp__srv__early", Parameters: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, *tools.Exec) (tools.Output, error) { return tools.Output{}, nil }}); err != nil {
		t.Fatal(err)
	}
	client := &scripted{resps: []*llm.Response{
		{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "join", Arguments: `{}`}}, FinishReason: "tool_calls"},
		{ToolCalls: []llm.ToolCall{{ID: "c2", Name: "mcp__srv__late", Arguments: `{"q":"x"}`}}, FinishReason: "tool_calls"},
		{Text: "done", FinishReason: "stop"},
	}}
	a := New(Config{Client: client, Tools: reg})
	var evs []session.Event
	sa := NewSession(session.NewStore(func(ev session.Event) { evs = append(evs, ev) }), tsA)
	if out := a.Turn(context.Background(), sa, []tools.Content{tools.Text("go")}, ""); out.Err != nil || out.StopReason != session.EndTurn {
		t.Fatalf("turn: %+v", out)
	}
	if len(client.reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(client.reqs))
	}
	if got := toolNames(client.reqs[0]); got != "join,mcp__srv__early" {
		t.Errorf("request 1 tools = %s", got)
	}
	for i := 1; i < 3; i++ {
		if got := toolNames(client.reqs[i]); got != "join,mcp__srv__early,mcp__srv__late" {
			t.Errorf("request %d tools = %s", i+1, got)
		}
	}
	var lateResult *session.ToolResult
	for _, ev := range evs {
		if r, ok := ev.Data.(session.ToolResult); ok && r.CallID == "c2" {
			lateResult = &r
		}
	}
	if lateResult == nil || lateResult.IsError || tools.JoinText(lateResult.Content) != `late:{"q":"x"}` {
		t.Errorf("the late tool's result = %+v", lateResult)
	}

	// Session b shares the agent and the registry, not a's tools.
	clientB := &scripted{resps: []*llm.Response{
		{ToolCalls: []llm.ToolCall{{ID: "b1", Name: "mcp__srv__late", Arguments: `{"q":"x"}`}}, FinishReason: "tool_calls"},
		{Text: "done", FinishReason: "stop"},
	}}
	b := New(Config{Client: clientB, Tools: reg})
	var evsB []session.Event
	sb := NewSession(session.NewStore(func(ev session.Event) { evsB = append(evsB, ev) }), tools.NewSession("b", t.TempDir()))
	b.Turn(context.Background(), sb, []tools.Content{tools.Text("go")}, "")
	if got := toolNames(clientB.reqs[0]); got != "join" {
		t.Errorf("session b was offered %s", got)
	}
	for _, ev := range evsB {
		if r, ok := ev.Data.(session.ToolResult); ok && (!r.IsError || r.Error == nil || r.Error.Code != tools.CodeUnknownTool) {
			t.Errorf("session b ran a's tool: %+v", r)
		}
	}
}
