package agent

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// usageOf returns the usage events of evs.
func usageOf(evs []session.Event) []session.ContextUsage {
	var out []session.ContextUsage
	for _, ev := range evs {
		if u, ok := ev.Data.(session.ContextUsage); ok {
			out = append(out, u)
		}
	}
	return out
}

// TestUsageEvents: a usage event follows each response's message, before
// its tool calls run; the cost accumulates over the session's responses,
// continues from the store's last usage event in a new Session, and is
// gone once a response cannot be priced; the settings' model and
// thinking reach each request.
func TestUsageEvents(t *testing.T) {
	u := &llm.Usage{PromptTokens: 1000, CompletionTokens: 50, CacheHitTokens: 896}
	call := []llm.ToolCall{{ID: "c1", Name: "echo", Arguments: `{}`}}
	reg := tools.NewRegistry()
	if err := reg.Register(tools.Tool{Name: "echo", Parameters: []byte(`{"type":"object"}`),
		Execute: func(context.Context, *tools.Exec) (tools.Output, error) { return tools.Output{}, nil }}); err != nil {
		t.Fatal(err)
	}
	priced := &llm.Price{Currency: "USD", Rates: llm.Rates{CacheHit: 1, CacheMiss: 10, Output: 100}}
	meter := &llm.Meter{Catalog: llm.Catalog{Models: map[string]llm.Known{
		"m1": {ContextWindow: 8000, Price: priced}, "eur": {Price: &llm.Price{Currency: "EUR", Rates: llm.Rates{Output: 1}}}}}}
	client := &scripted{resps: []*llm.Response{
		{ToolCalls: call, FinishReason: "tool_calls", Usage: u}, {Text: "a", FinishReason: "stop", Usage: u},
		{Text: "no usage", FinishReason: "stop"},
	}}
	a := New(Config{Client: client, Tools: reg, Model: "m1", Meter: meter, Now: func() time.Time { return time.Unix(0, 0) }})
	store := session.NewStore(nil)
	s := NewSession(store, tools.NewSession("s", t.TempDir()))
	a.Turn(context.Background(), s, []tools.Content{tools.Text("hi")}, "")
	// (896·1 + 104·10 + 50·100) / 1e6 per response
	per := 6936e-6
	got := usageOf(store.Events())
	want := []session.ContextUsage{
		{Turn: 1, Step: 1, Model: "m1", Used: 1050, Size: 8000, Cost: &session.Cost{Amount: per, Currency: "USD"},
			Cache: &session.CacheTokens{TurnPrompt: 1000, TurnHit: 896, SessionPrompt: 1000, SessionHit: 896}},
		{Turn: 1, Step: 2, Model: "m1", Used: 1050, Size: 8000, Cost: &session.Cost{Amount: 2 * per, Currency: "USD"},
			Cache: &session.CacheTokens{TurnPrompt: 2000, TurnHit: 1792, SessionPrompt: 2000, SessionHit: 1792}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("usage events\n got %+v\nwant %+v", got, want)
	}
	// The usage event sits between the message and the tool call.
	var seq []string
	for _, ev := range store.Events() {
		seq = append(seq, ev.Data.EventType())
	}
	if i := indexOf(seq, "usage/update"); i < 1 || seq[i-1] != "assistant/message" || seq[i+1] != "tool/call" {
		t.Errorf("events %v", seq)
	}

	// A new Session over the same events goes on from the logged total;
	// a response without usage adds no event.
	s2 := NewSession(store, tools.NewSession("s", t.TempDir()))
	s2.SetSettings(Settings{Model: "m1", Thinking: llm.Thinking{Type: llm.ThinkingEnabled, Effort: llm.EffortMax}})
	client.resps = append(client.resps, &llm.Response{Text: "b", FinishReason: "stop", Usage: u})
	a.Turn(context.Background(), s2, []tools.Content{tools.Text("again")}, "") // answered by "no usage"
	a.Turn(context.Background(), s2, []tools.Content{tools.Text("more")}, "")
	got = usageOf(store.Events())
	if len(got) != 3 || got[2].Cost == nil || !near(got[2].Cost.Amount, 3*per) {
		t.Fatalf("after a reload: %+v", got)
	}
	if r := client.reqs[len(client.reqs)-1]; r.Model != "m1" || r.Thinking.Effort != llm.EffortMax {
		t.Errorf("last request model %q thinking %+v", r.Model, r.Thinking)
	}

	// Another currency, then an unpriced model: no total from then on.
	for _, model := range []string{"eur", "unpriced", "m1"} {
		s2.SetSettings(Settings{Model: model})
		a.Turn(context.Background(), s2, []tools.Content{tools.Text(model)}, "")
	}
	got = usageOf(store.Events())
	for _, g := range got[3:] {
		if g.Cost != nil {
			t.Errorf("a total after a currency change or an unpriced response: %+v", g)
		}
	}
	if len(got) != 6 || got[4].Model != "unpriced" || got[4].Size != llm.DefaultContextWindow {
		t.Errorf("usage events %+v", got)
	}
	if costOf(NewSession(store, tools.NewSession("s", t.TempDir()))).known {
		t.Error("a reloaded session knows a total the log lost")
	}
}

// TestCostUnknownWithoutUsageEvents: a log whose responses have usage
// but no usage event (written before usage events, or cut by a crash
// between the two) gives no total.
func TestCostUnknownWithoutUsageEvents(t *testing.T) {
	store := session.NewStore(nil)
	store.Emit(session.AssistantMessage{Turn: 1, Step: 1, Text: "x", Usage: &session.Usage{PromptTokens: 5}})
	if costOf(NewSession(store, tools.NewSession("s", t.TempDir()))).known {
		t.Error("known total over an unaccounted response")
	}
	if c := costOf(NewSession(session.NewStore(nil), tools.NewSession("s", t.TempDir()))); !c.known || c.amount != 0 {
		t.Errorf("a new session's total %+v", c)
	}
}

// costOf is s's cumulative cost as its first turn would start with it.
func costOf(s *Session) costState {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prepare()
	return s.cost
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// TestTurnUsage: a turn's Outcome and its logged TurnEnd carry the usage
// of its responses summed (a response without usage adds nothing); a
// turn whose only response reported none has none.
func TestTurnUsage(t *testing.T) {
	call := []llm.ToolCall{{ID: "c1", Name: "echo", Arguments: `{}`}}
	reg := tools.NewRegistry()
	if err := reg.Register(tools.Tool{Name: "echo", Parameters: []byte(`{"type":"object"}`),
		Execute: func(context.Context, *tools.Exec) (tools.Output, error) { return tools.Output{}, nil }}); err != nil {
		t.Fatal(err)
	}
	client := &scripted{resps: []*llm.Response{
		{ToolCalls: call, FinishReason: "tool_calls", Usage: &llm.Usage{PromptTokens: 100, CompletionTokens: 10, CacheHitTokens: 64, ReasoningTokens: 4}},
		{ToolCalls: call, FinishReason: "tool_calls"},
		{Text: "a", FinishReason: "stop", Usage: &llm.Usage{PromptTokens: 200, CompletionTokens: 20, CacheHitTokens: 128, ReasoningTokens: 8}},
		{Text: "no usage", FinishReason: "stop"},
	}}
	a := New(Config{Client: client, Tools: reg, Model: "m1"})
	store := session.NewStore(nil)
	s := NewSession(store, tools.NewSession("s", t.TempDir()))
	out := a.Turn(context.Background(), s, []tools.Content{tools.Text("hi")}, "")
	want := session.Usage{PromptTokens: 300, CompletionTokens: 30, CacheHitTokens: 192, ReasoningTokens: 12}
	if out.Usage == nil || *out.Usage != want {
		t.Fatalf("turn usage %+v, want %+v", out.Usage, want)
	}
	var ends []session.TurnEnd
	for _, ev := range store.Events() {
		if e, ok := ev.Data.(session.TurnEnd); ok {
			ends = append(ends, e)
		}
	}
	if len(ends) != 1 || ends[0].Usage == nil || *ends[0].Usage != want {
		t.Errorf("logged turn ends %+v", ends)
	}
	if out := a.Turn(context.Background(), s, []tools.Content{tools.Text("again")}, ""); out.Usage != nil {
		t.Errorf("a turn without reported usage: %+v", *out.Usage)
	}
}
