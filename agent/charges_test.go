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

// TestChargesInCost: a billed tool call's price goes into the next usage
// event's cost, in the session's currency, with the turn's billed calls
// counted; a charge the log holds past its last usage event is added by
// the next one after a reload; a charge without a price in the session's
// currency makes the total unknown.
func TestChargesInCost(t *testing.T) {
	u := &llm.Usage{PromptTokens: 1000, CompletionTokens: 50, CacheHitTokens: 896}
	price := map[string]float64{"USD": 0.5}
	reg := tools.NewRegistry()
	if err := reg.Register(tools.Tool{Name: "paid", Parameters: []byte(`{"type":"object"}`),
		Execute: func(context.Context, *tools.Exec) (tools.Output, error) {
			return tools.Output{Content: []tools.Content{tools.Text("ok")}, Charge: &tools.Charge{Kind: "search", Price: price}}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	priced := &llm.Price{Currency: "USD", Rates: llm.Rates{CacheHit: 1, CacheMiss: 10, Output: 100}}
	meter := &llm.Meter{Catalog: llm.Catalog{Models: map[string]llm.Known{"m1": {ContextWindow: 8000, Price: priced}}}}
	call := func(id string) []llm.ToolCall { return []llm.ToolCall{{ID: id, Name: "paid", Arguments: `{}`}} }
	client := &scripted{resps: []*llm.Response{
		{ToolCalls: call("c1"), FinishReason: "tool_calls", Usage: u},
		{Text: "a", FinishReason: "stop", Usage: u},
		// A second turn whose last response has no usage: its charge
		// waits in the log.
		{ToolCalls: call("c2"), FinishReason: "tool_calls", Usage: u},
		{Text: "b", FinishReason: "stop"},
		{Text: "c", FinishReason: "stop", Usage: u},
	}}
	a := New(Config{Client: client, Tools: reg, Model: "m1", Meter: meter, Now: func() time.Time { return time.Unix(0, 0) }})
	store := session.NewStore(nil)
	s := NewSession(store, tools.NewSession("s", t.TempDir()))
	a.Turn(context.Background(), s, []tools.Content{tools.Text("one")}, "")
	per := 6936e-6
	got := usageOf(store.Events())
	want := []session.ContextUsage{
		{Turn: 1, Step: 1, Model: "m1", Used: 1050, Size: 8000, Cost: &session.Cost{Amount: per, Currency: "USD"}},
		{Turn: 1, Step: 2, Model: "m1", Used: 1050, Size: 8000, Cost: &session.Cost{Amount: 2*per + 0.5, Currency: "USD"}, Calls: map[string]int{"search": 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("usage events\n got %+v\nwant %+v", got, want)
	}
	a.Turn(context.Background(), s, []tools.Content{tools.Text("two")}, "")
	s2 := NewSession(store, tools.NewSession("s", t.TempDir()))
	a.Turn(context.Background(), s2, []tools.Content{tools.Text("three")}, "")
	got = usageOf(store.Events())
	if len(got) != 4 || got[3].Cost == nil || !near(got[3].Cost.Amount, 4*per+1) || got[3].Calls != nil {
		t.Fatalf("after a reload: %+v", got)
	}

	price = map[string]float64{"CNY": 3}
	client.resps = append(client.resps, &llm.Response{ToolCalls: call("c3"), FinishReason: "tool_calls", Usage: u},
		&llm.Response{Text: "d", FinishReason: "stop", Usage: u})
	a.Turn(context.Background(), s2, []tools.Content{tools.Text("four")}, "")
	got = usageOf(store.Events())
	if len(got) != 6 || got[5].Cost != nil || !reflect.DeepEqual(got[5].Calls, map[string]int{"search": 1}) {
		t.Errorf("a charge in another currency: %+v", got[4:])
	}
}
