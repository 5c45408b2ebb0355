package agent

import (
	"context"
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// TestBoundary: at a step boundary the turn takes the steering messages
// it is handed (logged as numbered user messages after the step's tool
// results, carried by the next request), goes on after a final answer
// when one came, and ends with end_turn where the caller asks it to.
func TestBoundary(t *testing.T) {
	reg := tools.NewRegistry()
	if err := reg.Register(tools.Tool{Name: "echo", Parameters: []byte(`{"type":"object"}`),
		Execute: func(context.Context, *tools.Exec) (tools.Output, error) {
			return tools.Output{Content: []tools.Content{tools.Text("echoed")}}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	call := &llm.Response{ToolCalls: []llm.ToolCall{{ID: "e1", Name: "echo", Arguments: `{}`}}, FinishReason: "tool_calls"}
	client := &scripted{resps: []*llm.Response{call, {Text: "first answer", FinishReason: "stop"}, {Text: "second answer", FinishReason: "stop"},
		{ToolCalls: []llm.ToolCall{{ID: "e2", Name: "echo", Arguments: `{}`}}, FinishReason: "tool_calls"}}}
	a := New(Config{Client: client, Tools: reg, MaxSteps: 8})
	var all []session.Event
	s := NewSession(session.NewStore(func(ev session.Event) { all = append(all, ev) }), tools.NewSession("s", t.TempDir()))
	// Boundary 1 (after the call): a steering message; boundary 2 (the
	// final answer): another; boundary 3 (final): none, the turn ends.
	var finals []bool
	steer := map[int]string{0: "also this", 1: "and this"}
	at := func(final bool) Boundary {
		finals = append(finals, final)
		if text, ok := steer[len(finals)-1]; ok {
			return Boundary{Steer: [][]tools.Content{{tools.Text(text)}}}
		}
		return Boundary{}
	}
	out := a.RunTurn(context.Background(), s, Input{Prompt: []tools.Content{tools.Text("go")}, AtBoundary: at})
	if out.Err != nil || out.StopReason != session.EndTurn || len(client.reqs) != 3 {
		t.Fatalf("outcome %+v after %d requests, want end_turn after 3", out, len(client.reqs))
	}
	if len(finals) != 3 || finals[0] || !finals[1] || !finals[2] {
		t.Errorf("boundaries %v, want [false true true]", finals)
	}
	var steered []session.UserMessage
	for _, ev := range all {
		if m, ok := ev.Data.(session.UserMessage); ok && m.Steer > 0 {
			steered = append(steered, m)
		}
	}
	if len(steered) != 2 || steered[0].ID() != "turn1-user-steer1" || steered[1].ID() != "turn1-user-steer2" {
		t.Fatalf("steering messages %+v", steered)
	}
	msgs := client.reqs[1].Messages
	if last, prev := msgs[len(msgs)-1], msgs[len(msgs)-2]; last.Role != "user" || prev.Role != "tool" {
		t.Errorf("second request ends with %s after %s, want user after tool", last.Role, prev.Role)
	}
	msgs = client.reqs[2].Messages
	if last, prev := msgs[len(msgs)-1], msgs[len(msgs)-2]; last.Role != "user" || prev.Content != "first answer" {
		t.Errorf("third request ends with %s after %q, want the steering message after the first answer", last.Role, prev.Content)
	}

	// End at a boundary that is not final: the turn stops there, the
	// call's result logged, no further request.
	before := len(client.reqs)
	out = a.RunTurn(context.Background(), s, Input{Prompt: []tools.Content{tools.Text("next")},
		AtBoundary: func(bool) Boundary { return Boundary{End: true} }})
	if out.StopReason != session.EndTurn || len(client.reqs) != before+1 {
		t.Errorf("outcome %+v after %d more requests, want end_turn after 1", out, len(client.reqs)-before)
	}
}
