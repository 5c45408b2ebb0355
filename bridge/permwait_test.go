package bridge

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// heldEditor holds every permission request until the test answers it
// (answer) or the agent withdraws it (its context ends).
type heldEditor struct {
	nopClient
	asked     chan acp.RequestPermissionRequest
	withdrawn chan string // the toolCallId of each withdrawn request
	mu        sync.Mutex
	answers   map[string]chan string
}

func newHeldEditor() *heldEditor {
	return &heldEditor{asked: make(chan acp.RequestPermissionRequest, 8), withdrawn: make(chan string, 8), answers: map[string]chan string{}}
}

func (e *heldEditor) RequestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	ch := make(chan string, 1)
	e.mu.Lock()
	e.answers[p.ToolCall.ToolCallID] = ch
	e.mu.Unlock()
	e.asked <- p
	select {
	case o := <-ch:
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: acp.OutcomeSelected, OptionID: o}}, nil
	case <-ctx.Done():
		e.withdrawn <- p.ToolCall.ToolCallID
		return acp.RequestPermissionResponse{}, ctx.Err()
	}
}

func (e *heldEditor) answer(id, option string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.answers[id] <- option
}

func (e *heldEditor) nextAsked(t *testing.T) acp.RequestPermissionRequest {
	t.Helper()
	select {
	case p := <-e.asked:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no permission request")
	}
	return acp.RequestPermissionRequest{}
}

// TestAlwaysAnswerCoversWaiting: two sessions sharing their asks and
// answers (a session and its child) each ask about a write at the same
// time; one "always" answer decides both: the other request is
// withdrawn from the editor and its call runs (or is refused) by the
// same rule.
func TestAlwaysAnswerCoversWaiting(t *testing.T) {
	for _, c := range []struct {
		option string
		ran    int
		code   string
	}{{"allow-always", 2, ""}, {"reject-always", 0, "PERMISSION_REJECTED"}} {
		t.Run(c.option, func(t *testing.T) {
			cwd := t.TempDir()
			reg := tools.NewRegistry()
			var mu sync.Mutex
			ran := 0
			_ = reg.Register(tools.Tool{Name: "write", Class: tools.ClassEdit, Parameters: json.RawMessage(`{"type":"object"}`), Access: testAccess,
				Execute: func(context.Context, *tools.Exec) (tools.Output, error) {
					mu.Lock()
					ran++
					mu.Unlock()
					return tools.Output{Content: []tools.Content{tools.Text("ok")}}, nil
				}})
			ed := newHeldEditor()
			b := New(Config{Tools: reg, Mode: "default"})
			reg.Use(b.Permission)
			b.client = ed
			parent := b.openSession("s1", cwd, nil)
			child := b.openSession("s2", cwd, nil)
			child.perm.asks, child.perm.mem = parent.perm.asks, parent.perm.mem
			args := json.RawMessage(`{"file_path":` + strings.TrimSpace(mustJSON(filepath.Join(cwd, "a.txt"))) + `}`)
			results := make(chan tools.Result, 2)
			run := func(s *liveSession, id string) {
				results <- reg.Execute(context.Background(), &tools.Exec{CallID: id, Name: "write", Args: args, Session: s.agent.Tools})
			}
			go run(parent, "c1")
			first := ed.nextAsked(t)
			go run(child, "c2")
			second := ed.nextAsked(t)
			if first.ToolCall.ToolCallID != "c1" || second.ToolCall.ToolCallID != "c2" {
				t.Fatalf("asked %s then %s", first.ToolCall.ToolCallID, second.ToolCall.ToolCallID)
			}
			ed.answer("c1", c.option)
			select {
			case id := <-ed.withdrawn:
				if id != "c2" {
					t.Errorf("withdrawn %s, want c2", id)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the covered request was not withdrawn")
			}
			for range 2 {
				r := <-results
				code := ""
				if r.Error != nil {
					code = r.Error.Code
				}
				if (c.code == "") == r.IsError || code != c.code {
					t.Errorf("%s: result %+v", r.CallID, r)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if ran != c.ran {
				t.Errorf("ran %d calls, want %d", ran, c.ran)
			}
			select {
			case p := <-ed.asked:
				t.Errorf("asked again: %+v", p)
			default:
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
