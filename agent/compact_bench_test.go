package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// instantSummary answers at once with a 2 KiB summary in 64 pieces:
// what remains of a compaction's time is the agent's own.
type instantSummary struct{ pieces []string }

func newInstantSummary() *instantSummary {
	s := &instantSummary{}
	for i := range 64 {
		s.pieces = append(s.pieces, fmt.Sprintf("- point %02d of the summary, a line.\n", i))
	}
	return s
}

func (s *instantSummary) Stream(_ context.Context, _ llm.Request, on func(llm.Delta)) (*llm.Response, error) {
	for _, p := range s.pieces {
		on(llm.Delta{Kind: llm.DeltaText, Text: p})
	}
	return &llm.Response{Text: strings.Join(s.pieces, ""), FinishReason: "stop", Usage: &llm.Usage{PromptTokens: 90000, CompletionTokens: 600}}, nil
}

// benchSession is a store holding turns turns, each a prompt, a read
// call with a 2 KiB result and an answer.
func benchSession(turns int) *session.Store {
	store := session.NewStore(func(session.Event) {})
	result := strings.Repeat("a line of the file that was read\n", 64)
	for n := 1; n <= turns; n++ {
		id := fmt.Sprintf("call_%d", n)
		for _, d := range []session.Data{
			session.TurnStart{Turn: n},
			session.UserMessage{Turn: n, Content: []tools.Content{tools.Text(fmt.Sprintf("read file %d and tell me", n))}},
			session.StepStart{Turn: n, Step: 1},
			session.AssistantMessage{Turn: n, Step: 1, Reasoning: "I will read it.", ToolCalls: []session.ToolCallRef{{CallID: id, Name: "read", Arguments: `{"file_path":"a.go"}`}}},
			session.ToolCall{Turn: n, Step: 1, CallID: id, Name: "read", Arguments: `{"file_path":"a.go"}`},
			session.ToolResult{Turn: n, Step: 1, CallID: id, Content: []tools.Content{tools.Text(result)}},
			session.StepEnd{Turn: n, Step: 1},
			session.StepStart{Turn: n, Step: 2},
			session.AssistantMessage{Turn: n, Step: 2, Text: "It holds lines.", Usage: &session.Usage{PromptTokens: 1000 * n, CompletionTokens: 50}},
			session.StepEnd{Turn: n, Step: 2},
			session.TurnEnd{Turn: n, Reason: session.EndTurn},
		} {
			store.Emit(d)
		}
	}
	return store
}

// BenchmarkCompaction is a compaction's cost to the agent, the model's
// time excluded (the summary arrives at once): deriving the history of
// a session of N tool-call turns, building the summary request (system
// prompt and tool schemas), streaming the summary's 64 chunks as events
// and logging the compaction.
func BenchmarkCompaction(b *testing.B) {
	for _, turns := range []int{100, 1000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			reg := tools.NewRegistry()
			a := New(Config{Client: newInstantSummary(), Tools: reg, System: func(string, ClientPrompt) string { return "You are a test." }})
			s := NewSession(benchSession(turns), tools.NewSession("s", b.TempDir()))
			events := s.Store.Events()
			before := int64(len(events))
			t := &turnRun{a: a, s: s, turn: turns + 1, open: map[string]bool{}}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if c := t.compact(context.Background(), events, before, true, ""); c.Status != session.CompactionCompleted {
					b.Fatalf("compaction %+v", c)
				}
			}
		})
	}
}

// BenchmarkThresholdCheck is what every step pays to decide whether to
// compact (below the threshold): reading the last usage.
func BenchmarkThresholdCheck(b *testing.B) {
	s := NewSession(benchSession(1000), tools.NewSession("s", b.TempDir()))
	a := New(Config{Client: newInstantSummary(), Tools: tools.NewRegistry(), CompactAt: 0.99, Meter: &llm.Meter{ContextWindow: 1 << 30}})
	t := &turnRun{a: a, s: s, turn: 1001, step: 2, open: map[string]bool{}}
	b.ReportAllocs()
	for b.Loop() {
		t.autoCompact(context.Background())
		if t.compactTried {
			b.Fatal("compacted below the threshold")
		}
	}
}

// BenchmarkHistoryAfterCompaction compares deriving the next request's
// messages from a session of 1000 tool-call turns without and with a
// compaction at its end.
func BenchmarkHistoryAfterCompaction(b *testing.B) {
	store := benchSession(1000)
	plain := store.Events()
	store.Emit(session.Compaction{ID: "cmp_1", Status: session.CompactionCompleted, Before: int64(len(plain)), Summary: strings.Repeat("- a point.\n", 200)})
	store.Emit(session.UserMessage{Turn: 1001, Content: []tools.Content{tools.Text("go on")}})
	compacted := store.Events()
	for _, c := range []struct {
		name   string
		events []session.Event
	}{{"full", plain}, {"compacted", compacted}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(History(c.events, false)) == 0 {
					b.Fatal("no history")
				}
			}
		})
	}
}
