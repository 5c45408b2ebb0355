package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// recorder is a Checkpointer that records its calls.
type recorder struct {
	before []string // "turn:paths"
	ends   []int
}

func (r *recorder) Before(_ context.Context, turn int, paths []string) {
	r.before = append(r.before, strings.Join(append([]string{string(rune('0' + turn))}, paths...), ":"))
}

func (r *recorder) End(_ context.Context, turn int) *session.TurnChanges {
	r.ends = append(r.ends, turn)
	return &session.TurnChanges{Turn: turn, Files: []session.ChangedFile{{Path: "/p/a", Status: session.FileModified}}}
}

// TestCheckpointHooks: a call that may change files is announced to the
// checkpointer before it runs, with its absolute paths (a read-only one
// is not); the turn's end logs the changes; a local turn (/undo) runs
// without the model, its prompt is not in the history, and the context
// message it logs is.
func TestCheckpointHooks(t *testing.T) {
	reg := tools.NewRegistry()
	for _, c := range []struct {
		name  string
		class tools.Class
	}{{"look", tools.ClassReadOnly}, {"change", tools.ClassEdit}} {
		if err := reg.Register(tools.Tool{Name: c.name, Class: c.class, Parameters: []byte(`{"type":"object"}`),
			Access: func(args json.RawMessage) (tools.Access, bool) { return tools.Access{Paths: []string{"a.txt"}}, true },
			Execute: func(context.Context, *tools.Exec) (tools.Output, error) {
				return tools.Output{Content: []tools.Content{tools.Text("ok")}}, nil
			}}); err != nil {
			t.Fatal(err)
		}
	}
	client := &scripted{resps: []*llm.Response{
		{ToolCalls: []llm.ToolCall{{ID: "l1", Name: "look", Arguments: `{}`}}, FinishReason: "tool_calls"},
		{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "change", Arguments: `{}`}}, FinishReason: "tool_calls"},
		{Text: "Done.", FinishReason: "stop"},
		{Text: "Noted.", FinishReason: "stop"},
	}}
	a := New(Config{Client: client, Tools: reg, MaxSteps: 5})
	var all []session.Event
	store := session.NewStore(func(ev session.Event) { all = append(all, ev) })
	cwd := t.TempDir()
	s := NewSession(store, tools.NewSession("s", cwd))
	rec := &recorder{}
	s.Checkpoints = rec
	if out := a.Turn(context.Background(), s, []tools.Content{tools.Text("go")}, ""); out.StopReason != session.EndTurn {
		t.Fatalf("outcome %+v", out)
	}
	if len(rec.before) != 1 || rec.before[0] != "1:"+cwd+"/a.txt" || len(rec.ends) != 1 {
		t.Errorf("before %q ends %v", rec.before, rec.ends)
	}
	changes := 0
	for _, ev := range all {
		if _, ok := ev.Data.(session.TurnChanges); ok {
			changes++
		}
	}
	if changes != 1 {
		t.Errorf("%d changes events", changes)
	}
	out := a.RunTurn(context.Background(), s, Input{Prompt: []tools.Content{tools.Text("/undo")},
		Local: func(_ context.Context, turn int, emit func(session.Data)) string {
			emit(session.ContextMessage{Turn: turn, Text: "[undone]"})
			return session.EndTurn
		}})
	if out.StopReason != session.EndTurn || len(client.reqs) != 3 {
		t.Fatalf("local turn %+v, %d model requests", out, len(client.reqs))
	}
	a.Turn(context.Background(), s, []tools.Content{tools.Text("next")}, "")
	var texts []string
	for _, m := range client.reqs[3].Messages {
		if m.Role == "user" {
			texts = append(texts, m.Content)
		}
	}
	if strings.Join(texts, "|") != "go|[undone]|next" {
		t.Errorf("user messages of the next request %q", texts)
	}
}
