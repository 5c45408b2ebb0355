package agent

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// scripted answers the Nth request with resps[N-1], streaming its text and
// tool calls as deltas first.
type scripted struct {
	resps []*llm.Response
	reqs  []llm.Request
}

func (s *scripted) Stream(_ context.Context, req llm.Request, on func(llm.Delta)) (*llm.Response, error) {
	s.reqs = append(s.reqs, req)
	r := s.resps[min(len(s.reqs), len(s.resps))-1]
	if on == nil { // allowed by llm.Client
		on = func(llm.Delta) {}
	}
	if r.Text != "" {
		on(llm.Delta{Kind: llm.DeltaText, Text: r.Text})
	}
	for i, c := range r.ToolCalls {
		on(llm.Delta{Kind: llm.DeltaToolCall, Index: i, ID: c.ID, Name: c.Name})
	}
	return r, nil
}

func runTurn(t *testing.T, resps ...*llm.Response) (Outcome, []session.Event, *scripted) {
	t.Helper()
	reg := tools.NewRegistry()
	if err := reg.Register(tools.Tool{Name: "echo", Parameters: []byte(`{"type":"object"}`),
		Execute: func(_ context.Context, ex *tools.Exec) (tools.Output, error) {
			return tools.Output{Content: []tools.Content{tools.Text("echo:" + string(ex.Args))}}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	client := &scripted{resps: resps}
	a := New(Config{Client: client, Tools: reg, MaxSteps: 3})
	var all []session.Event
	store := session.NewStore(func(ev session.Event) { all = append(all, ev) })
	out := a.Turn(context.Background(), NewSession(store, tools.NewSession("s", t.TempDir())), []tools.Content{tools.Text("hi")}, "")
	return out, all, client
}

func types(evs []session.Event) string {
	var b []string
	for _, e := range evs {
		b = append(b, e.Data.EventType())
	}
	return strings.Join(b, " ")
}

func TestTurnFinishReasons(t *testing.T) {
	call := []llm.ToolCall{{ID: "c1", Name: "echo", Arguments: `{"x":1}`}}
	cases := []struct {
		name  string
		resps []*llm.Response
		stop  string
		err   string
		steps int
	}{
		{"stop", []*llm.Response{{Text: "hello", FinishReason: "stop"}}, "end_turn", "", 1},
		{"length", []*llm.Response{{Text: "cut", FinishReason: "length"}}, "max_tokens", "", 1},
		{"content filter", []*llm.Response{{Text: "x", FinishReason: "content_filter"}}, "end_turn", "", 1},
		{"overloaded", []*llm.Response{{FinishReason: "insufficient_system_resource"}}, "", "overloaded", 1},
		{"unknown reason", []*llm.Response{{Text: "x", FinishReason: "weird"}}, "end_turn", "", 1},
		{"tools then stop", []*llm.Response{{ToolCalls: call, FinishReason: "tool_calls"}, {Text: "done", FinishReason: "stop"}}, "end_turn", "", 2},
		{"max steps", []*llm.Response{{ToolCalls: call, FinishReason: "tool_calls"}}, "max_turn_requests", "", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, evs, client := runTurn(t, c.resps...)
			if c.err != "" {
				if out.Err == nil || !strings.Contains(out.Err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", out.Err, c.err)
				}
			} else if out.Err != nil || out.StopReason != c.stop {
				t.Fatalf("outcome = %+v, want %s", out, c.stop)
			}
			if len(client.reqs) != c.steps {
				t.Errorf("model requests = %d, want %d", len(client.reqs), c.steps)
			}
			last := evs[len(evs)-1].Data.(session.TurnEnd)
			if c.err == "" && last.Reason != c.stop {
				t.Errorf("turn/end reason = %q", last.Reason)
			}
			// Every started tool call has exactly one result.
			started, results := 0, 0
			for _, e := range evs {
				switch e.Data.(type) {
				case session.ToolStart:
					started++
				case session.ToolResult:
					results++
				default:
					// Only starts and results are counted.
				}
			}
			if started != results {
				t.Errorf("%d tool calls started, %d results: %s", started, results, types(evs))
			}
		})
	}
}

// TestToolRoundTrip: the second request carries the tool call and its
// result back to the model.
func TestToolRoundTrip(t *testing.T) {
	call := []llm.ToolCall{{ID: "c1", Name: "echo", Arguments: `{"x":1}`}}
	_, _, client := runTurn(t, &llm.Response{Reasoning: "r", ToolCalls: call, FinishReason: "tool_calls"}, &llm.Response{Text: "ok", FinishReason: "stop"})
	msgs := client.reqs[1].Messages
	if len(msgs) != 4 || msgs[0].Role != "system" || msgs[2].ToolCalls[0].ID != "c1" || msgs[2].Reasoning != "r" ||
		msgs[3].Role != "tool" || msgs[3].ToolCallID != "c1" || msgs[3].Content != `echo:{"x":1}` {
		t.Errorf("second request messages = %+v", msgs)
	}
	if len(client.reqs[0].Tools) != 1 || client.reqs[0].Tools[0].Name != "echo" {
		t.Errorf("tools sent = %+v", client.reqs[0].Tools)
	}
}

// TestSystemPromptAgentsFile: AGENTS.md goes into the system prompt, cut
// at 32 KiB.
func TestSystemPromptAgentsFile(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("rule line\n", 5000)
	if err := writeFile(dir+"/AGENTS.md", big); err != nil {
		t.Fatal(err)
	}
	p := SystemPrompt(dir)
	if !strings.Contains(p, "Working directory: "+dir) || !strings.Contains(p, "rule line") || !strings.Contains(p, "cut at 32 KiB") {
		t.Errorf("system prompt lacks cwd, AGENTS.md or the cut note")
	}
	if n := strings.Count(p, "rule line"); n*10 > AgentsFileLimit {
		t.Errorf("%d AGENTS.md lines kept, more than 32 KiB", n)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }
