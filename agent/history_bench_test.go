package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// BenchmarkStepRequest is what a step of a long session pays for its
// request: one step more is logged (a read call and its 2 KiB result)
// and the next request is built (system prompt, history, tool schemas),
// on a session of 1,000 tool-call turns. Run it with a fixed count
// (-benchtime=200x) so the session's length is the same for every
// build compared.
func BenchmarkStepRequest(b *testing.B) {
	a := New(Config{Client: newInstantSummary(), Tools: tools.NewRegistry(), System: func(string, ClientPrompt) string { return "You are a test." }})
	s := NewSession(benchSession(1000), tools.NewSession("s", b.TempDir()))
	t := &turnRun{a: a, s: s, turn: 1001, open: map[string]bool{}}
	s.Store.Emit(session.TurnStart{Turn: 1001})
	s.Store.Emit(session.UserMessage{Turn: 1001, Content: []tools.Content{tools.Text("read them all")}})
	t.request()
	result := strings.Repeat("a line of the file that was read\n", 64)
	b.ReportAllocs()
	step := 0
	for b.Loop() {
		step++
		id := fmt.Sprintf("call_s%d", step)
		for _, d := range []session.Data{
			session.StepStart{Turn: 1001, Step: step},
			session.AssistantMessage{Turn: 1001, Step: step, Reasoning: "The next one.", ToolCalls: []session.ToolCallRef{{CallID: id, Name: "read", Arguments: `{"file_path":"a.go"}`}}},
			session.ToolCall{Turn: 1001, Step: step, CallID: id, Name: "read", Arguments: `{"file_path":"a.go"}`},
			session.ToolResult{Turn: 1001, Step: step, CallID: id, Content: []tools.Content{tools.Text(result)}},
			session.StepEnd{Turn: 1001, Step: step},
		} {
			s.Store.Emit(d)
		}
		if req, _ := t.request(); len(req.Messages) < 4000 {
			b.Fatalf("%d messages", len(req.Messages))
		}
	}
}
