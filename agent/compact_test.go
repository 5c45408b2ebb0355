package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// failing answers every request with err (after streaming text, if any).
type failing struct {
	text string
	err  error
	reqs []llm.Request
}

func (f *failing) Stream(_ context.Context, req llm.Request, on func(llm.Delta)) (*llm.Response, error) {
	f.reqs = append(f.reqs, req)
	if f.text != "" && on != nil {
		on(llm.Delta{Kind: llm.DeltaText, Text: f.text})
	}
	return &llm.Response{Text: f.text}, f.err
}

// TestHistoryAfterCompaction: the last completed compaction's summary
// stands for the events before its Before; failed ones and the agent's
// own prompts (Local) are not part of the conversation.
func TestHistoryAfterCompaction(t *testing.T) {
	text := func(s string) []tools.Content { return []tools.Content{tools.Text(s)} }
	events := evs(
		session.TurnStart{Turn: 1},                                                                   // 0
		session.UserMessage{Turn: 1, Content: text("one")},                                           // 1
		session.AssistantMessage{Turn: 1, Text: "first"},                                             // 2
		session.TurnEnd{Turn: 1, Reason: session.EndTurn},                                            // 3
		session.TurnStart{Turn: 2},                                                                   // 4
		session.UserMessage{Turn: 2, Content: text("/compact x"), Local: true},                       // 5
		session.Compaction{ID: "a", Status: session.CompactionCompleted, Before: 4, Summary: "S1"},   // 6
		session.TurnEnd{Turn: 2, Reason: session.EndTurn},                                            // 7
		session.TurnStart{Turn: 3},                                                                   // 8
		session.UserMessage{Turn: 3, Content: text("three")},                                         // 9
		session.Compaction{ID: "b", Status: session.CompactionFailed, Before: 8, Summary: "partial"}, // 10
		session.AssistantMessage{Turn: 3, Text: "third"},                                             // 11
	)
	b, _ := json.Marshal(History(events, false))
	want := `[{"role":"user","content":` + mustQuote(SummaryMessage("S1")) + `},{"role":"user","content":"three"},{"role":"assistant","content":"third"}]`
	if string(b) != want {
		t.Errorf("history\n got %s\nwant %s", b, want)
	}
	if used, ok := contextUsed(events); ok {
		t.Errorf("contextUsed after a compaction without a response = %d", used)
	}
	events = append(events, session.Event{Seq: 12, Data: session.AssistantMessage{Usage: &session.Usage{PromptTokens: 900, CompletionTokens: 100}}})
	if used, ok := contextUsed(events); !ok || used != 1000 {
		t.Errorf("contextUsed = %d, %v", used, ok)
	}
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// compactSession is a session holding one answered turn whose response
// left used tokens of context.
func compactSession(t *testing.T, used int) (*Session, *[]session.Event) {
	t.Helper()
	var all []session.Event
	store := session.NewStore(func(ev session.Event) { all = append(all, ev) })
	for _, d := range []session.Data{
		session.TurnStart{Turn: 1},
		session.UserMessage{Turn: 1, Content: []tools.Content{tools.Text("one")}},
		session.AssistantMessage{Turn: 1, Step: 1, Text: "first", Usage: &session.Usage{PromptTokens: used - 10, CompletionTokens: 10}},
		session.ContextUsage{Turn: 1, Step: 1, Used: int64(used), Size: 1000, Cost: &session.Cost{Currency: "USD"}},
		session.TurnEnd{Turn: 1, Reason: session.EndTurn},
	} {
		store.Emit(d)
	}
	all = all[:0]
	return NewSession(store, tools.NewSession("s", t.TempDir())), &all
}

// TestAutoCompaction: past CompactAt of the window (ContextWindow's),
// the turn compacts first; below it, not; with CompactAt 0, never.
func TestAutoCompaction(t *testing.T) {
	for _, c := range []struct {
		name      string
		used      int
		compactAt float64
		requests  int
	}{
		{"past the threshold", 8000, 0.8, 2},
		{"at the threshold", 8000, 0.8, 2},
		{"below", 7999, 0.8, 1},
		{"off", 10000, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := &scripted{resps: []*llm.Response{{Text: "S", FinishReason: "stop"}, {Text: "answer", FinishReason: "stop"}}}
			if c.requests == 1 {
				client.resps = client.resps[1:]
			}
			a := New(Config{Client: client, Tools: tools.NewRegistry(), CompactAt: c.compactAt,
				Meter: &llm.Meter{ContextWindow: 10000}})
			s, _ := compactSession(t, c.used)
			out := a.Turn(context.Background(), s, []tools.Content{tools.Text("two")}, "")
			if out.Err != nil || out.StopReason != session.EndTurn || len(client.reqs) != c.requests {
				t.Fatalf("outcome %+v, %d requests, want %d", out, len(client.reqs), c.requests)
			}
			last := client.reqs[len(client.reqs)-1]
			if c.requests == 2 {
				if got := last.Messages[1].Content; got != SummaryMessage("S") || len(last.Messages) != 3 || last.Messages[2].Content != "two" {
					t.Errorf("after compaction: %+v", last.Messages)
				}
			} else if len(last.Messages) != 4 {
				t.Errorf("without compaction: %d messages", len(last.Messages))
			}
		})
	}
}

// TestCompactionFailures: a failed, cut, empty or tool-calling summary
// leaves the history as it was, is logged with its reason and tells the
// user (a notice); a cancelled one ends the turn cancelled.
func TestCompactionFailures(t *testing.T) {
	for _, c := range []struct {
		name   string
		client llm.Client
		status string
		why    string
	}{
		{"request fails", &failing{text: "## Sum", err: &llm.Error{Code: "SERVER_ERROR", Status: 500, Message: "HTTP 500: boom"}}, session.CompactionFailed, "HTTP 500: boom"},
		{"cut at the limit", &scripted{resps: []*llm.Response{{Text: "## Sum", FinishReason: "length"}}}, session.CompactionFailed, "output token limit"},
		{"no text", &scripted{resps: []*llm.Response{{Text: " \n", FinishReason: "stop"}}}, session.CompactionFailed, "no summary"},
		{"a tool call", &scripted{resps: []*llm.Response{{ToolCalls: []llm.ToolCall{{ID: "c", Name: "read"}}, FinishReason: "tool_calls"}}}, session.CompactionFailed, "called a tool"},
		{"cancelled", &failing{err: fmt.Errorf("stop: %w", context.Canceled)}, session.CompactionCancelled, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := New(Config{Client: c.client, Tools: tools.NewRegistry()})
			s, all := compactSession(t, 100)
			var notices []tools.Notice
			tools.SetNotifier(s.Tools, func(n tools.Notice) { notices = append(notices, n) })
			before := History(s.Store.Events(), false)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.status == session.CompactionCancelled {
				cancel()
			}
			out := a.RunTurn(ctx, s, Input{Prompt: []tools.Content{tools.Text("/compact")}, Compact: &CompactRequest{Focus: "f"}})
			want := session.EndTurn
			if c.status == session.CompactionCancelled {
				want = session.EndCancelled
			}
			if out.StopReason != want || out.Err != nil {
				t.Errorf("outcome %+v, want %s", out, want)
			}
			var got *session.Compaction
			for _, ev := range *all {
				if d, ok := ev.Data.(session.Compaction); ok {
					got = &d
				}
			}
			if got == nil || got.Status != c.status || !strings.Contains(got.Error, c.why) || got.Focus != "f" || got.Auto {
				t.Fatalf("logged compaction %+v", got)
			}
			after, _ := json.Marshal(History(s.Store.Events(), false))
			wantHist, _ := json.Marshal(before)
			if string(after) != string(wantHist) {
				t.Errorf("history changed:\n%s\n%s", after, wantHist)
			}
			if c.status == session.CompactionFailed && (len(notices) != 1 || notices[0].Title != "Compaction failed" || !strings.Contains(notices[0].Description, c.why)) {
				t.Errorf("notices %+v", notices)
			}
			if c.status == session.CompactionCancelled && len(notices) != 0 {
				t.Errorf("a cancel told the user %+v", notices)
			}
		})
	}
}

// TestCompactNothing: /compact on a session with nothing to summarize
// (no message yet, or only an earlier summary) makes no request.
func TestCompactNothing(t *testing.T) {
	client := &scripted{resps: []*llm.Response{{Text: "S", FinishReason: "stop"}}}
	a := New(Config{Client: client, Tools: tools.NewRegistry()})
	var all []session.Event
	s := NewSession(session.NewStore(func(ev session.Event) { all = append(all, ev) }), tools.NewSession("s", t.TempDir()))
	compact := func() session.Compaction {
		a.RunTurn(context.Background(), s, Input{Prompt: []tools.Content{tools.Text("/compact")}, Compact: &CompactRequest{}})
		for i := len(all) - 1; i >= 0; i-- {
			if c, ok := all[i].Data.(session.Compaction); ok {
				return c
			}
		}
		return session.Compaction{}
	}
	if c := compact(); c.Status != session.CompactionFailed || c.Error != "there is nothing to compact yet" || len(client.reqs) != 0 {
		t.Errorf("empty session: %+v, %d requests", c, len(client.reqs))
	}
	s.Store.Emit(session.UserMessage{Turn: 9, Content: []tools.Content{tools.Text("hello")}})
	if c := compact(); c.Status != session.CompactionCompleted || len(client.reqs) != 1 {
		t.Errorf("one message: %+v, %d requests", c, len(client.reqs))
	}
	if c := compact(); c.Status != session.CompactionFailed || len(client.reqs) != 1 {
		t.Errorf("only the summary: %+v, %d requests", c, len(client.reqs))
	}
}

// TestCompactionSettingsAndCost: the summary request goes to the
// session's model with its thinking level, under that model's window;
// a completed compaction is followed by a usage event whose context is
// the summary's tokens and whose cost adds the summary request's; a
// title request adds its cost too, shown by the next usage event.
func TestCompactionSettingsAndCost(t *testing.T) {
	price := &llm.Price{Currency: "USD", Rates: llm.Rates{CacheHit: 1, CacheMiss: 2, Output: 4}}
	meter := &llm.Meter{Catalog: llm.Catalog{Models: map[string]llm.Known{"big": {ContextWindow: 1000, Price: price}}}, ContextWindow: 1 << 20}
	client := &scripted{resps: []*llm.Response{
		{Text: "S", FinishReason: "stop", Usage: &llm.Usage{PromptTokens: 900, CompletionTokens: 120, ReasoningTokens: 20, CacheHitTokens: 800}},
		{Text: "answer", FinishReason: "stop", Usage: &llm.Usage{PromptTokens: 100, CompletionTokens: 10}},
		{Text: "A title", FinishReason: "stop", Usage: &llm.Usage{PromptTokens: 50, CompletionTokens: 5}},
		{Text: "again", FinishReason: "stop", Usage: &llm.Usage{PromptTokens: 110, CompletionTokens: 10}},
	}}
	a := New(Config{Client: client, Tools: tools.NewRegistry(), Model: "small", Meter: meter, CompactAt: 0.8})
	s, all := compactSession(t, 850) // past 80 % of "big"'s 1000, nothing for the default 1 Mi
	s.SetSettings(Settings{Model: "big", Thinking: llm.Thinking{Type: llm.ThinkingEnabled, Effort: llm.EffortHigh}})
	if out := a.Turn(context.Background(), s, []tools.Content{tools.Text("two")}, ""); out.Err != nil {
		t.Fatal(out.Err)
	}
	if len(client.reqs) != 2 {
		t.Fatalf("%d requests, want the summary and the turn's", len(client.reqs))
	}
	sum := client.reqs[0]
	if sum.Model != "big" || sum.Thinking != (llm.Thinking{Type: llm.ThinkingEnabled, Effort: llm.EffortHigh}) {
		t.Errorf("summary request model %q thinking %+v", sum.Model, sum.Thinking)
	}
	var usages []session.ContextUsage
	for _, ev := range *all {
		if u, ok := ev.Data.(session.ContextUsage); ok {
			usages = append(usages, u)
		}
	}
	sumCost := (800*1 + 100*2 + 120*4) / 1e6
	turnCost := (100*2 + 10*4) / 1e6
	if len(usages) != 2 || usages[0].Used != 100 || usages[0].Size != 1000 || usages[0].Cost == nil || usages[0].Cost.Amount != sumCost ||
		usages[1].Used != 110 || usages[1].Cost == nil || usages[1].Cost.Amount != sumCost+turnCost {
		t.Errorf("usage events %+v (costs %v, %v)", usages, usages[0].Cost, usages[len(usages)-1].Cost)
	}
	if _, err := a.MakeTitle(context.Background(), s, "p", "a"); err != nil {
		t.Fatal(err)
	}
	title := client.reqs[2]
	if title.Model != "big" || title.Thinking != (llm.Thinking{Type: llm.ThinkingDisabled}) {
		t.Errorf("title request model %q thinking %+v", title.Model, title.Thinking)
	}
	*all = (*all)[:0]
	if out := a.Turn(context.Background(), s, []tools.Content{tools.Text("three")}, ""); out.Err != nil {
		t.Fatal(out.Err)
	}
	titleCost := (50*2 + 5*4) / 1e6
	want := sumCost + turnCost + titleCost + (110*2+10*4)/1e6
	for _, ev := range *all {
		if u, ok := ev.Data.(session.ContextUsage); ok && (u.Cost == nil || fmt.Sprintf("%.10f", u.Cost.Amount) != fmt.Sprintf("%.10f", want)) {
			t.Errorf("cost after the title %+v, want %v", u.Cost, want)
		}
	}
}
