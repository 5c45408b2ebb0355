package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// subReq is what the tests read of a model request: its messages and the
// names of the tools it offers.
type subReq struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// firstUser is the text of the request's first user message: who asks
// (the parent's prompt, or a child's task).
func (r subReq) firstUser() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// results are the contents of the request's tool messages, in order.
func (r subReq) results() []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

func (r subReq) toolNames() []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

// routedModel is a fake endpoint on 127.0.0.1 that answers each request
// with route's body (DeepSeek's stream format), chosen by what the
// request holds; it keeps every request.
type routedModel struct {
	*fakeModel
	mu   sync.Mutex
	reqs []subReq
}

func newRoutedModel(t *testing.T, route func(r subReq, req *http.Request) string) *routedModel {
	m := &routedModel{}
	m.fakeModel = newFakeModel(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req subReq
		if err := json.Unmarshal(b, &req); err != nil {
			t.Errorf("model request: %v", err)
		}
		m.mu.Lock()
		m.reqs = append(m.reqs, req)
		m.mu.Unlock()
		body := route(req, r)
		if body == "" {
			http.Error(w, "no answer", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	})
	return m
}

// asking returns the requests whose first user message is prompt.
func (m *routedModel) asking(prompt string) []subReq {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []subReq
	for _, r := range m.reqs {
		if r.firstUser() == prompt {
			out = append(out, r)
		}
	}
	return out
}

func subCall(name, description, prompt string) [2]string {
	b, _ := json.Marshal(map[string]string{"description": description, "prompt": prompt})
	return [2]string{name, string(b)}
}

func answer(text string) string { return e2etest.Text(nil, []string{text}, "stop") }

var subagentCaps = map[string]any{"subagents": map[string]any{}}

// notes are the session/update notifications received so far.
func (h *harness) notes() []acp.SessionNotification {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]acp.SessionNotification(nil), h.updates...)
}

// checkSubagentOrder checks the subagents RFD's order rules on the
// notifications of a connection whose top session is parent: a child's
// first subagent_update (on its parent) announces it with a title,
// cancel capability and the running state, before any update on the
// child's id; its idle state comes after all of them, and nothing about
// it follows. It returns the children in the order announced.
func checkSubagentOrder(t *testing.T, ns []acp.SessionNotification, parent string) []string {
	t.Helper()
	announced, ended := map[string]bool{}, map[string]bool{}
	var order []string
	for i, n := range ns {
		if su, ok := n.Update.(acp.SubagentUpdate); ok {
			c := su.SessionID
			switch {
			case ended[c]:
				t.Errorf("notification %d: subagent_update for %s after its final state", i, c)
			case !announced[c]:
				if su.Title == nil || *su.Title == "" || su.Capabilities == nil || su.Capabilities.Cancel == nil ||
					su.State == nil || su.State.State != acp.SubagentRunning || n.SessionID != parent {
					t.Errorf("notification %d: the announcement of %s is %+v on %s", i, c, su, n.SessionID)
				}
				announced[c] = true
				order = append(order, c)
			}
			if su.State != nil && su.State.State == acp.SubagentIdle {
				ended[c] = true
			}
			continue
		}
		if n.SessionID == parent {
			continue
		}
		if !announced[n.SessionID] {
			t.Errorf("notification %d: %s update on %s before its announcement", i, n.Update.SessionUpdateKind(), n.SessionID)
		}
		if ended[n.SessionID] {
			t.Errorf("notification %d: %s update on %s after its final state", i, n.Update.SessionUpdateKind(), n.SessionID)
		}
	}
	for _, c := range order {
		if !ended[c] {
			t.Errorf("child %s has no final state", c)
		}
	}
	return order
}

// finalState is the last state announced for child.
func finalState(ns []acp.SessionNotification, child string) *acp.SubagentState {
	var st *acp.SubagentState
	for _, n := range ns {
		if su, ok := n.Update.(acp.SubagentUpdate); ok && su.SessionID == child && su.State != nil {
			st = su.State
		}
	}
	return st
}

// updatesOn are the updates sent on session id.
func updatesOn(ns []acp.SessionNotification, id string) []acp.Update {
	var out []acp.Update
	for _, n := range ns {
		if n.SessionID == id {
			out = append(out, n.Update)
		}
	}
	return out
}

// lastContent is the text of the last content a card of the updates got.
func lastContent(us []acp.Update, callID string) string {
	text := ""
	for _, u := range us {
		c, ok := toolCard(u)
		if !ok || c.ToolCallID != callID || c.Content == nil {
			continue
		}
		var parts []string
		for _, item := range c.Content {
			if c, ok := item.(acp.Content); ok {
				parts = append(parts, c.Content.Text)
			}
		}
		text = strings.Join(parts, "\n")
	}
	return text
}

// withAndWithoutSubagents runs body as two parallel subtests,
// "subagents=true" with the client advertising the subagents capability
// and "subagents=false" without it; start is the harnessOpts to start
// the session with.
func withAndWithoutSubagents(t *testing.T, body func(t *testing.T, shown bool, start harnessOpts)) {
	for _, shown := range []bool{true, false} {
		t.Run(fmt.Sprintf("subagents=%v", shown), func(t *testing.T) {
			t.Parallel()
			start := harnessOpts{}
			if shown {
				start.caps = subagentCaps
			}
			body(t, shown, start)
		})
	}
}

// TestSubagentParallelE2E: two subagent calls of one response run at
// once (child A's request waits for child B's), each a fresh child whose
// first request holds only the system prompt and its task, offered the
// tools without the subagent ones; their answers return to the parent in
// call order. With `subagents` advertised the children are announced
// and stream on their own ids in the RFD's order; without it nothing is
// sent on another id and each parent card lists its child's calls, then
// the answer.
func TestSubagentParallelE2E(t *testing.T) {
	withAndWithoutSubagents(t, func(t *testing.T, shown bool, start harnessOpts) {
		bAsked := make(chan struct{})
		var once sync.Once
		var cwd string
		calls := []([2]string){subCall("subagent", "Read the notes", "task A"), subCall("subagent", "Say B", "task B")}
		m := newRoutedModel(t, func(r subReq, _ *http.Request) string {
			switch r.firstUser() {
			case "delegate":
				if len(r.results()) == 0 {
					return e2etest.ToolCallsAt(0, calls...)
				}
				return answer("both done")
			case "task A":
				if len(r.results()) == 0 {
					select {
					case <-bAsked:
					case <-time.After(20 * time.Second):
						t.Error("child B made no request while child A's first one waited: the children did not run at once")
					}
					return e2etest.ToolCallsAt(1, [2]string{"read", toolArgs(map[string]any{"file_path": filepath.Join(cwd, "notes.txt")})})
				}
				return answer("answer A")
			case "task B":
				once.Do(func() { close(bAsked) })
				return answer("answer B")
			}
			return ""
		})
		h := newHarness(t, harnessOpts{model: m.client("k")})
		cwd = h.cwd
		if err := os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("the notes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		sid := h.start(start)
		h.promptAll(sid, "delegate")
		parentReqs := m.asking("delegate")
		if len(parentReqs) != 2 {
			t.Fatalf("%d parent requests, want 2", len(parentReqs))
		}
		if got := parentReqs[1].results(); !slices.Equal(got, []string{"answer A", "answer B"}) {
			t.Errorf("the parent's tool results are %q, want the answers in call order", got)
		}
		system := parentReqs[0].Messages[0].Content
		for _, task := range []string{"task A", "task B"} {
			first := m.asking(task)[0]
			if len(first.Messages) != 2 || first.Messages[0].Role != "system" || first.Messages[0].Content != system || first.Messages[1].Content != task {
				t.Errorf("%s's first request holds %d messages (%+v), want the session's system prompt and the task", task, len(first.Messages), first.Messages)
			}
			names := first.toolNames()
			if slices.Contains(names, "subagent") || slices.Contains(names, "subagent_fork") || !slices.Contains(names, "read") {
				t.Errorf("%s is offered %v, want the tools without the subagent ones", task, names)
			}
		}
		ns := h.notes()
		idA := e2etest.CallID(0, 0, calls[0][0], calls[0][1])
		if shown {
			children := checkSubagentOrder(t, ns, sid)
			if len(children) != 2 {
				t.Fatalf("%d children announced, want 2", len(children))
			}
			texts := []string{}
			for _, c := range children {
				texts = append(texts, joined(updatesOn(ns, c), acp.UpdateAgentMessageChunk))
				if st := finalState(ns, c); st == nil || st.StopReason != acp.StopEndTurn || st.Usage == nil || st.Usage.OutputTokens == 0 {
					t.Errorf("child %s ends with %+v, want idle end_turn with its usage", c, st)
				}
			}
			slices.Sort(texts)
			if !slices.Equal(texts, []string{"answer A", "answer B"}) {
				t.Errorf("the children's own answers are %q", texts)
			}
			if got := lastContent(updatesOn(ns, sid), idA); got != "answer A" {
				t.Errorf("the parent's card for child A ends with %q, want its answer", got)
			}
			named := map[string]string{}
			for _, u := range updatesOn(ns, sid) {
				if c, ok := toolCard(u); ok && c.Meta != nil && c.Meta.SubagentSessionInfo != nil {
					named[c.ToolCallID] = c.Meta.SubagentSessionInfo.SessionID
				}
			}
			if len(named) != 2 || !slices.Contains(children, named[idA]) {
				t.Errorf("the parent's cards name the children %v (announced %v)", named, children)
			}
			return
		}
		for _, n := range ns {
			if n.SessionID != sid || n.Update.SessionUpdateKind() == acp.UpdateSubagent {
				t.Fatalf("without the capability: a %s update on %s", n.Update.SessionUpdateKind(), n.SessionID)
			}
		}
		if got, want := lastContent(updatesOn(ns, sid), idA), "- Read notes.txt (completed)\nanswer A"; got != want {
			t.Errorf("the parent's card for child A ends with %q, want %q", got, want)
		}
	})
}

// TestSubagentForkE2E: a subagent_fork child starts from the
// conversation before the current turn (it recalls a fact of the first
// turn, and never sees the current prompt), then its task.
func TestSubagentForkE2E(t *testing.T) {
	t.Parallel()
	const fact, ask, task = "Remember: the code word is heron.", "ask a fork", "What is the code word?"
	var forkReq []subReq
	var mu sync.Mutex
	m := newRoutedModel(t, func(r subReq, _ *http.Request) string {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Content == task:
			mu.Lock()
			forkReq = append(forkReq, r)
			mu.Unlock()
			return answer("heron")
		case last.Content == fact:
			return answer("Noted.")
		case last.Content == ask:
			return e2etest.ToolCallsAt(0, subCall("subagent_fork", "Recall the word", task))
		case last.Role == "tool":
			return answer("The fork said " + last.Content)
		}
		return ""
	})
	h := newHarness(t, harnessOpts{model: m.client("k")})
	sid := h.start(harnessOpts{caps: subagentCaps})
	h.promptAll(sid, fact, ask)
	if len(forkReq) != 1 {
		t.Fatalf("%d fork requests, want 1", len(forkReq))
	}
	var got []string
	for _, msg := range forkReq[0].Messages[1:] {
		got = append(got, msg.Role+": "+msg.Content)
	}
	want := []string{"user: " + fact, "assistant: Noted.", "user: " + task}
	if !slices.Equal(got, want) {
		t.Errorf("the fork's request holds %q, want %q", got, want)
	}
	if !strings.Contains(joined(h.sessionUpdates(), acp.UpdateAgentMessageChunk), "The fork said heron") {
		t.Error("the parent did not get the fork's answer")
	}
	checkSubagentOrder(t, h.notes(), sid)
}
