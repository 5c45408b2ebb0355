package agent

import (
	"encoding/json"
	"testing"

	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

func evs(ds ...session.Data) []session.Event {
	out := make([]session.Event, len(ds))
	for i, d := range ds {
		out[i] = session.Event{Seq: int64(i), Data: d}
	}
	return out
}

// TestHistory: the model conversation pairs every tool call with its
// result, keeps reasoning on tool-call messages, and drops results of
// calls cut off mid-stream.
func TestHistory(t *testing.T) {
	events := evs(
		session.UserMessage{Content: []tools.Content{tools.Text("read a")}},
		session.AssistantMessage{Reasoning: "need to read", ToolCalls: []session.ToolCallRef{{CallID: "c1", Name: "read", Arguments: `{"file_path":"a"}`}, {CallID: "c2", Name: "read", Arguments: `{}`}}},
		session.ToolResult{CallID: "c1", Content: []tools.Content{tools.Text("1: x")}},
		session.ToolResult{CallID: "orphan", Content: []tools.Content{tools.Text("cut")}},
		session.AssistantMessage{Text: "done", Reasoning: "ok"},
		session.AssistantMessage{},
	)
	b, _ := json.Marshal(History(events))
	want := `[{"role":"user","content":"read a"},` +
		`{"role":"assistant","content":"","reasoning_content":"need to read","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"file_path\":\"a\"}"}},{"id":"c2","type":"function","function":{"name":"read","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"1: x"},` +
		`{"role":"tool","tool_call_id":"c2","content":"Error: tool call interrupted; no result was recorded."},` +
		`{"role":"assistant","content":"done"}]`
	if string(b) != want {
		t.Errorf("history\n got %s\nwant %s", b, want)
	}
}

// TestClaimID: the model's id is used once per session; repeats and empty
// ids get fresh call_ ids.
func TestClaimID(t *testing.T) {
	s := NewSession(session.NewStore(nil), tools.NewSession("s", "/"))
	if got := s.claimID("call_00_a"); got != "call_00_a" {
		t.Errorf("first = %q", got)
	}
	second := s.claimID("call_00_a")
	if second == "call_00_a" || len(second) != len("call_")+24 {
		t.Errorf("repeat = %q", second)
	}
	if got := s.claimID(""); got == "" || got == second {
		t.Errorf("empty = %q", got)
	}
}
