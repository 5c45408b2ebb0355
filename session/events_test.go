package session

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// TestEventRoundTrip: every event type survives JSON and keeps its
// concrete type.
func TestEventRoundTrip(t *testing.T) {
	datas := []Data{
		TurnStart{Turn: 1},
		TurnEnd{Turn: 1, Reason: EndError, Message: "boom", Code: "RATE_LIMIT"},
		StepStart{Turn: 1, Step: 2},
		StepEnd{Turn: 1, Step: 2},
		UserMessage{Turn: 1, Content: []tools.Content{tools.Text("hi")}},
		UserMessage{Turn: 2, Content: []tools.Content{tools.Text("Review: ...")}, Typed: []tools.Content{tools.Text("/review")}},
		UserMessage{Turn: 3, Content: []tools.Content{tools.Text("/compact")}, Local: true},
		AssistantChunk{Turn: 1, Step: 1, Kind: ChunkReasoning, Text: "hm"},
		AssistantMessage{Turn: 1, Step: 1, Text: "ok", Reasoning: "r", ToolCalls: []ToolCallRef{{CallID: "c", Name: "read", Arguments: `{"a":1}`}}, FinishReason: "tool_calls", Usage: &Usage{PromptTokens: 3}},
		ToolStart{Turn: 1, Step: 1, CallID: "c", Name: "read"},
		ToolInput{Turn: 1, Step: 1, CallID: "c", Arguments: `{"a":1}`, Complete: true},
		ToolCall{Turn: 1, Step: 1, CallID: "c", Name: "read", Arguments: `{"a":1}`},
		ToolPreview{CallID: "c", Preview: tools.DiffCall{Title: "Edit a", Diffs: []tools.FileDiff{{Path: "/a", NewText: "x"}}, Locations: []tools.FileLocation{{Path: "/a", Line: 2}}}},
		ToolExec{CallID: "c"},
		ToolResult{Turn: 1, Step: 1, CallID: "c", Content: []tools.Content{tools.Text("x")}, IsError: true, Error: &tools.ErrorInfo{Name: "FsError", Code: "FS_NOT_FOUND"}, Meta: json.RawMessage(`{"k":1}`)},
		ToolResult{Turn: 1, Step: 1, CallID: "d", Content: []tools.Content{tools.Text("Error: cancelled by the user")}, IsError: true, Cancelled: true, NotRun: true},
		Plan{Entries: []tools.PlanEntry{{Content: "a", Status: "pending"}}},
		Title{Title: "t"},
		Title{Title: "Fix the parser", Source: TitleFromModel},
		Compaction{ID: "cmp_1", Turn: 2, Status: CompactionCompleted, Before: 7, Summary: "s", Auto: true, Usage: &Usage{PromptTokens: 9, CompletionTokens: 2}},
		Compaction{ID: "cmp_2", Turn: 3, Status: CompactionFailed, Before: 9, Focus: "tests", Error: "boom"},
		CompactionStart{ID: "cmp_1", Turn: 2, Auto: true},
		CompactionChunk{ID: "cmp_1", Text: "piece"},
		ModeChange{ModeID: "plan"},
		Directories{Dirs: []string{"/a", "/b"}},
		Notice{Severity: "warning", Title: "t", Description: "d"},
		ConfigChange{ConfigID: "model", Value: "deepseek-v4-pro"},
		ContextUsage{Turn: 1, Step: 2, Model: "deepseek-flash", Used: 352, Size: 1 << 20, Cost: &Cost{Amount: 4.6218e-05, Currency: "USD"}},
		ContextUsage{Turn: 1, Step: 3, Used: 10, Size: 128000},
		ToolDefinition{CallID: "c", Name: "mcp__notes__read", Source: "mcp", Definition: json.RawMessage(`{"server":"notes","tool":"read","title":"Read"}`)},
	}
	for i, d := range datas {
		ev := Event{Seq: int64(i), Time: 1700000000000, Data: d}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("%T: %v", d, err)
		}
		var back Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%T: %v (%s)", d, err, b)
		}
		if !reflect.DeepEqual(back, ev) {
			t.Errorf("%T round trip:\n got %#v\nwant %#v", d, back, ev)
		}
	}
	var ev Event
	if err := json.Unmarshal([]byte(`{"type":"nope","seq":0,"time":0,"data":{}}`), &ev); err == nil {
		t.Error("an unknown event type was accepted")
	}
}

// TestStoreSeq: logged events get contiguous seq numbers, transient ones
// -1, and the sink sees both in order.
func TestStoreSeq(t *testing.T) {
	var seen []string
	s := NewStore(func(ev Event) { seen = append(seen, ev.Data.EventType()) })
	s.Emit(TurnStart{Turn: 1})
	if ev := s.Emit(AssistantChunk{Text: "x"}); ev.Seq != -1 {
		t.Errorf("transient seq = %d", ev.Seq)
	}
	if ev := s.Emit(TurnEnd{Turn: 1, Reason: EndTurn}); ev.Seq != 1 {
		t.Errorf("seq = %d, want 1", ev.Seq)
	}
	if got := len(s.Events()); got != 2 {
		t.Errorf("logged %d events, want 2", got)
	}
	if want := []string{"turn/start", "assistant/chunk", "turn/end"}; !reflect.DeepEqual(seen, want) {
		t.Errorf("sink saw %v", seen)
	}
}
