package agent

import (
	"context"
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// TestEndTurnOutput: a call whose Output sets EndTurn ends the turn after
// its result: the calls after it in the response are not run (each gets
// NotRunText), the message is streamed and logged as the agent's message
// of that step, no further model request is made, and the stop reason is
// end_turn. The next turn's history carries the message before the
// user's answer.
func TestEndTurnOutput(t *testing.T) {
	reg := tools.NewRegistry()
	ran := map[string]int{}
	for _, name := range []string{"ask", "echo"} {
		if err := reg.Register(tools.Tool{Name: name, Parameters: []byte(`{"type":"object"}`),
			Execute: func(_ context.Context, ex *tools.Exec) (tools.Output, error) {
				ran[name]++
				if name == "ask" {
					return tools.Output{Content: []tools.Content{tools.Text("asked in the conversation")}, EndTurn: "Which one?\n\n1. A\n2. B"}, nil
				}
				return tools.Output{Content: []tools.Content{tools.Text("echoed")}}, nil
			}}); err != nil {
			t.Fatal(err)
		}
	}
	client := &scripted{resps: []*llm.Response{
		{ToolCalls: []llm.ToolCall{{ID: "e1", Name: "echo", Arguments: `{}`}, {ID: "a1", Name: "ask", Arguments: `{}`}, {ID: "e2", Name: "echo", Arguments: `{}`}}, FinishReason: "tool_calls"},
		{Text: "Going with B.", FinishReason: "stop"},
	}}
	a := New(Config{Client: client, Tools: reg, MaxSteps: 5})
	var all []session.Event
	store := session.NewStore(func(ev session.Event) { all = append(all, ev) })
	s := NewSession(store, tools.NewSession("s", t.TempDir()))
	out := a.Turn(context.Background(), s, []tools.Content{tools.Text("pick")}, "")
	if out.Err != nil || out.StopReason != session.EndTurn {
		t.Fatalf("outcome %+v, want end_turn", out)
	}
	if len(client.reqs) != 1 || ran["ask"] != 1 || ran["echo"] != 1 {
		t.Fatalf("%d model requests, runs %v; want 1 request, ask once, echo once (the one before)", len(client.reqs), ran)
	}
	results := map[string]session.ToolResult{}
	var chunk, msg string
	var msgs int
	for _, ev := range all {
		switch d := ev.Data.(type) {
		case session.ToolResult:
			results[d.CallID] = d
		case session.AssistantChunk:
			chunk += d.Text
		case session.AssistantMessage:
			msgs++
			if msgs == 2 {
				msg = d.Text
				if d.Step != 1 || len(d.ToolCalls) != 0 {
					t.Errorf("the question's message %+v, want step 1 without calls", d)
				}
			}
		default:
			// Only results and the assistant's text are checked here.
		}
	}
	if tools.JoinText(results["e1"].Content) != "echoed" || tools.JoinText(results["a1"].Content) != "asked in the conversation" {
		t.Errorf("results %+v", results)
	}
	if r := results["e2"]; !r.IsError || tools.JoinText(r.Content) != NotRunText || r.Cancelled {
		t.Errorf("the call after the question: %+v", r)
	}
	if want := "Which one?\n\n1. A\n2. B"; chunk != want || msg != want || msgs != 2 {
		t.Errorf("streamed %q, logged %q (%d assistant messages); want %q once more", chunk, msg, msgs, want)
	}
	if end := all[len(all)-1].Data.(session.TurnEnd); end.Reason != session.EndTurn {
		t.Errorf("turn end %+v", end)
	}

	// The answer is the next prompt: the model sees its calls, their
	// results, the question as its own message, then the answer.
	if out := a.Turn(context.Background(), s, []tools.Content{tools.Text("B")}, ""); out.StopReason != session.EndTurn {
		t.Fatalf("second turn %+v", out)
	}
	h := client.reqs[1].Messages[1:]
	roles := ""
	for _, m := range h {
		roles += m.Role + " "
	}
	if roles != "user assistant tool tool tool assistant user " || h[5].Content != "Which one?\n\n1. A\n2. B" || h[6].Content != "B" || h[4].Content != NotRunText {
		t.Errorf("history roles %q: %+v", roles, h)
	}
}

// TestEndTurnIgnoredOnError: an error result never ends the turn: the
// registry drops EndTurn from one (here a middleware's veto that set it).
func TestEndTurnIgnoredOnError(t *testing.T) {
	reg := tools.NewRegistry()
	if err := reg.Register(tools.Tool{Name: "ask", Parameters: []byte(`{"type":"object"}`),
		Execute: func(context.Context, *tools.Exec) (tools.Output, error) {
			return tools.Output{EndTurn: "asked"}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	if got := reg.Execute(context.Background(), &tools.Exec{CallID: "c", Name: "ask"}); got.IsError || got.EndTurn != "asked" {
		t.Fatalf("success %+v, want EndTurn carried", got)
	}
	reg.Use(func(_ context.Context, ex *tools.Exec, _ tools.Next) tools.Result {
		return tools.Result{CallID: ex.CallID, IsError: true, EndTurn: "vetoed", Content: []tools.Content{tools.Text("Error: no")}}
	})
	if got := reg.Execute(context.Background(), &tools.Exec{CallID: "c", Name: "ask"}); !got.IsError || got.EndTurn != "" {
		t.Errorf("error result %+v, want no EndTurn", got)
	}
}
