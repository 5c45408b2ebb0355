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

// TestChildCost: a child over a store holding its parent's priced
// events (a fork) starts at zero; what it spends, added to the parent,
// shows in the parent's next usage event; an unknown child cost makes
// the parent's unknown. A hidden tool is not offered to the model.
func TestChildCost(t *testing.T) {
	u := &llm.Usage{PromptTokens: 1000, CompletionTokens: 50, CacheHitTokens: 896}
	meter := &llm.Meter{Catalog: llm.Catalog{Models: map[string]llm.Known{
		"m1": {ContextWindow: 8000, Price: &llm.Price{Currency: "USD", Rates: llm.Rates{CacheHit: 1, CacheMiss: 10, Output: 100}}}}}}
	reg := tools.NewRegistry()
	for _, name := range []string{"keep", "hide"} {
		if err := reg.Register(tools.Tool{Name: name, Parameters: []byte(`{"type":"object"}`),
			Execute: func(context.Context, *tools.Exec) (tools.Output, error) { return tools.Output{}, nil }}); err != nil {
			t.Fatal(err)
		}
	}
	client := &scripted{resps: []*llm.Response{
		{Text: "p1", FinishReason: "stop", Usage: u}, {Text: "c1", FinishReason: "stop", Usage: u}, {Text: "p2", FinishReason: "stop", Usage: u},
	}}
	a := New(Config{Client: client, Tools: reg, Model: "m1", Meter: meter, Now: func() time.Time { return time.Unix(0, 0) }})
	const per = 6936e-6
	parent := NewSession(session.NewStore(nil), tools.NewSession("p", t.TempDir()))
	a.Turn(context.Background(), parent, []tools.Content{tools.Text("hi")}, "")
	child := NewChildSession(session.NewLoggedStore(parent.Store.Events(), nil, nil), tools.NewSession("c", t.TempDir()))
	child.Hide("hide")
	if got := child.Spent(); !reflect.DeepEqual(got, &session.Cost{Amount: 0, Currency: ""}) {
		t.Errorf("a fresh child's cost is %+v, want zero", got)
	}
	a.Turn(context.Background(), child, []tools.Content{tools.Text("task")}, "")
	if got := child.Spent(); !reflect.DeepEqual(got, &session.Cost{Amount: per, Currency: "USD"}) {
		t.Errorf("the child spent %+v, want one response", got)
	}
	var offered []string
	for _, tl := range client.reqs[1].Tools {
		offered = append(offered, tl.Name)
	}
	if !reflect.DeepEqual(offered, []string{"keep"}) {
		t.Errorf("the child was offered %v", offered)
	}
	parent.AddSpent(child.Spent())
	a.Turn(context.Background(), parent, []tools.Content{tools.Text("again")}, "")
	got := usageOf(parent.Store.Events())
	if len(got) != 2 || got[1].Cost == nil || got[1].Cost.Amount != 3*per {
		t.Errorf("the parent's usage events %+v, want the child's cost in the second", got)
	}
	parent.AddSpent(nil)
	if parent.Spent() != nil {
		t.Error("an unknown child cost left the parent's known")
	}
}
