package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/server"
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

// TestSubagentParallelE2E: two subagent calls of one response run at
// once (child A's request waits for child B's), each a fresh child whose
// first request holds only the system prompt and its task, offered the
// tools without the subagent ones; their answers return to the parent in
// call order. With `subagents` advertised the children are announced
// and stream on their own ids in the RFD's order; without it nothing is
// sent on another id and each parent card lists its child's calls, then
// the answer.
func TestSubagentParallelE2E(t *testing.T) {
	for _, shown := range []bool{true, false} {
		t.Run(fmt.Sprintf("subagents=%v", shown), func(t *testing.T) {
			t.Parallel()
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
						b, _ := json.Marshal(map[string]string{"file_path": filepath.Join(cwd, "notes.txt")})
						return e2etest.ToolCallsAt(1, [2]string{"read", string(b)})
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
			o := harnessOpts{}
			if shown {
				o.caps = subagentCaps
			}
			sid := h.start(o)
			if stop, err := h.prompt(sid, "delegate"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
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
	for _, p := range []string{fact, ask} {
		if stop, err := h.prompt(sid, p); err != nil || stop != acp.StopEndTurn {
			t.Fatalf("prompt %q = %q, %v", p, stop, err)
		}
	}
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

// TestSubagentPermissionE2E: a child's write asks the editor, on the
// child's id with `subagents` (the child waiting in requires_action
// meanwhile), else on the parent's with the card naming the child; the
// "Always allow" given for the child covers the parent's own write
// after it.
func TestSubagentPermissionE2E(t *testing.T) {
	for _, shown := range []bool{true, false} {
		t.Run(fmt.Sprintf("subagents=%v", shown), func(t *testing.T) {
			t.Parallel()
			var cwd string
			write := func(step int, name string) string {
				b, _ := json.Marshal(map[string]string{"file_path": filepath.Join(cwd, name), "content": "x\n"})
				return e2etest.ToolCallsAt(step, [2]string{"write", string(b)})
			}
			m := newRoutedModel(t, func(r subReq, _ *http.Request) string {
				n := len(r.results())
				switch {
				case r.firstUser() == "write twice" && n == 0:
					return e2etest.ToolCallsAt(0, subCall("subagent", "Write out", "task W"))
				case r.firstUser() == "write twice" && n == 1:
					return write(2, "parent.txt")
				case r.firstUser() == "write twice":
					return answer("both written")
				case r.firstUser() == "task W" && n == 0:
					return write(1, "child.txt")
				case r.firstUser() == "task W":
					return answer("child wrote")
				}
				return ""
			})
			h := newHarness(t, harnessOpts{model: m.client("k"), mode: "default"})
			cwd = h.cwd
			pc := &permissionClient{outcome: "allow-always"}
			h.client.OnRequest = pc.handle
			o := harnessOpts{}
			if shown {
				o.caps = subagentCaps
			}
			sid := h.start(o)
			if stop, err := h.prompt(sid, "write twice"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			for _, f := range []string{"child.txt", "parent.txt"} {
				if b, err := os.ReadFile(filepath.Join(cwd, f)); err != nil || string(b) != "x\n" {
					t.Errorf("%s: %q, %v", f, b, err)
				}
			}
			if pc.count() != 1 {
				t.Fatalf("asked %d times, want once (the child's answer covers the parent)", pc.count())
			}
			req := pc.asked[0]
			ns := h.notes()
			if !shown {
				if req.SessionID != sid || req.ToolCall.Title == nil || !strings.HasPrefix(*req.ToolCall.Title, "Write out: ") {
					t.Errorf("the request is on %s titled %v, want the parent's naming the child", req.SessionID, req.ToolCall.Title)
				}
				return
			}
			children := checkSubagentOrder(t, ns, sid)
			if len(children) != 1 || req.SessionID != children[0] {
				t.Fatalf("the request is on %s, want the child's id (%v)", req.SessionID, children)
			}
			var states []string
			for _, n := range ns {
				if su, ok := n.Update.(acp.SubagentUpdate); ok && su.State != nil {
					states = append(states, su.State.State)
				}
			}
			if want := []string{"running", "requires_action", "running", "idle"}; !slices.Equal(states, want) {
				t.Errorf("the child's states are %v, want %v", states, want)
			}
		})
	}
}

// blockedChild answers a child's request only when it is abandoned (the
// child was cancelled); asked says the request arrived.
func blockedChild(r *http.Request, asked chan<- struct{}) string {
	select {
	case asked <- struct{}{}:
	default:
	}
	<-r.Context().Done()
	return ""
}

// TestSubagentCancelE2E: session/cancel of a child (its capability said
// cancel) ends that child only: the parent's tool result says it was
// cancelled and the parent's turn goes on; a cancel of the parent
// reaches the child first, and the prompt answers cancelled. Either way
// the child ends idle with stopReason cancelled, in order.
func TestSubagentCancelE2E(t *testing.T) {
	for _, which := range []string{"child", "parent"} {
		t.Run(which, func(t *testing.T) {
			t.Parallel()
			asked := make(chan struct{}, 1)
			m := newRoutedModel(t, func(r subReq, req *http.Request) string {
				switch {
				case r.firstUser() == "start one" && len(r.results()) == 0:
					return e2etest.ToolCallsAt(0, subCall("subagent", "Wait forever", "task C"))
				case r.firstUser() == "start one":
					return answer("went on after " + r.results()[0])
				case r.firstUser() == "task C":
					return blockedChild(req, asked)
				}
				return ""
			})
			h := newHarness(t, harnessOpts{model: m.client("k")})
			sid := h.start(harnessOpts{caps: subagentCaps})
			_, ch, err := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []acp.ContentBlock{acp.TextBlock("start one")}})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-asked:
			case <-time.After(30 * time.Second):
				t.Fatal("the child made no request")
			}
			var child string
			for _, n := range h.notes() {
				if su, ok := n.Update.(acp.SubagentUpdate); ok {
					child = su.SessionID
				}
			}
			if which == "parent" {
				h.cancelPrompt(sid, ch, 30*time.Second)
			} else {
				_ = h.client.Notify("session/cancel", map[string]any{"sessionId": child})
				msg := <-ch
				var pr acp.PromptResponse
				if msg.Error != nil || json.Unmarshal(msg.Result, &pr) != nil || pr.StopReason != acp.StopEndTurn {
					t.Fatalf("the prompt answered %s / %v, want end_turn", msg.Result, msg.Error)
				}
				if got := joined(updatesOn(h.notes(), sid), acp.UpdateAgentMessageChunk); got != "went on after Error: subagent run was cancelled" {
					t.Errorf("the parent answered %q", got)
				}
			}
			ns := h.notes()
			checkSubagentOrder(t, ns, sid)
			if st := finalState(ns, child); st == nil || st.StopReason != acp.StopCancelled {
				t.Errorf("the child ends with %+v, want idle cancelled", st)
			}
		})
	}
}

// TestSubagentFailuresE2E: a child may not start children (depth 1: it
// is not offered the tools, and a call anyway fails), and a child that
// hits the token limit or ends without text gives the parent an error
// result saying so, not an empty success.
func TestSubagentFailuresE2E(t *testing.T) {
	t.Parallel()
	calls := [][2]string{subCall("subagent", "Nest", "task D"), subCall("subagent", "Too long", "task L"), subCall("subagent", "Silent", "task S")}
	m := newRoutedModel(t, func(r subReq, _ *http.Request) string {
		switch r.firstUser() {
		case "fail":
			if len(r.results()) == 0 {
				return e2etest.ToolCallsAt(0, calls...)
			}
			return answer("seen")
		case "task D":
			if len(r.results()) == 0 {
				return e2etest.ToolCallsAt(1, subCall("subagent", "Deeper", "task E"))
			}
			return answer("no nesting")
		case "task L":
			return e2etest.Text(nil, []string{"partial"}, "length")
		case "task S":
			return e2etest.Text([]string{"Nothing to say."}, nil, "stop")
		}
		return ""
	})
	h := newHarness(t, harnessOpts{model: m.client("k")})
	sid := h.start(harnessOpts{caps: subagentCaps})
	if stop, err := h.prompt(sid, "fail"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	want := []string{"no nesting", "Error: subagent run hit its token limit before finishing",
		"Error: subagent run ended without an answer: its last message had no text"}
	if got := m.asking("fail")[1].results(); !slices.Equal(got, want) {
		t.Errorf("the parent's results are %q, want %q", got, want)
	}
	d := m.asking("task D")
	if len(d) != 2 || !strings.Contains(d[1].results()[0], "a subagent cannot start subagents of its own (the depth limit is 1)") {
		t.Errorf("the nested call's result: %+v", d)
	}
	if len(m.asking("task E")) != 0 {
		t.Error("a grandchild ran")
	}
	ns := h.notes()
	children := checkSubagentOrder(t, ns, sid)
	if len(children) != 3 {
		t.Fatalf("%d children, want 3", len(children))
	}
	stops := map[acp.StopReason]int{}
	for _, c := range children {
		stops[finalState(ns, c).StopReason]++
	}
	if stops[acp.StopEndTurn] != 2 || stops[acp.StopMaxTokens] != 1 {
		t.Errorf("the children's stop reasons: %v", stops)
	}
}

// TestSubagentModelOptionE2E: the subagent_model option (after the model
// option, in no category) sends the children's requests to the model it
// names while the parent keeps its own; "same" is the default.
func TestSubagentModelOptionE2E(t *testing.T) {
	t.Parallel()
	m := newRoutedModel(t, func(r subReq, _ *http.Request) string {
		switch {
		case r.firstUser() == "delegate" && len(r.results()) == 0:
			return e2etest.ToolCallsAt(0, subCall("subagent", "Quick look", "task F"))
		case r.firstUser() == "delegate":
			return answer("done")
		case r.firstUser() == "task F":
			return answer("looked")
		}
		return ""
	})
	h := newHarness(t, harnessOpts{model: m.client("k"), options: func(o *server.Options) { o.Catalog.Offer = []string{"flash-1"} }})
	sid, raw := newSession(t, h)
	opts := optionsOf(t, raw)
	if len(opts) < 2 || opts[1].ID != "subagent_model" || opts[1].Category != "" || opts[1].Select.CurrentValue != "same" {
		t.Fatalf("options %s, want subagent_model second, in no category, at same", raw)
	}
	after := optionsOf(t, setOption(t, h, sid, "subagent_model", "flash-1"))
	if o, _ := option(after, "subagent_model"); o.Select.CurrentValue != "flash-1" {
		t.Errorf("after set_config_option: %+v", o.Select)
	}
	if stop, err := h.prompt(sid, "delegate"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if p, c := m.asking("delegate")[0].Model, m.asking("task F")[0].Model; p != "deepseek-chat" || c != "flash-1" {
		t.Errorf("the parent asked %q and the child %q, want deepseek-chat and flash-1", p, c)
	}
}

// rawUpdates are the updates sent on session id, as JSON objects.
func rawUpdates(t *testing.T, ns []acp.SessionNotification, id string) []map[string]json.RawMessage {
	t.Helper()
	var out []map[string]json.RawMessage
	for _, u := range updatesOn(ns, id) {
		b, err := acp.MarshalUpdate(u)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// announcedChildren are the children announced in ns, in order.
func announcedChildren(ns []acp.SessionNotification) []string {
	var out []string
	for _, n := range ns {
		if su, ok := n.Update.(acp.SubagentUpdate); ok && !slices.Contains(out, su.SessionID) {
			out = append(out, su.SessionID)
		}
	}
	return out
}

// TestSubagentLoadE2E: a child is no session of its own (its id answers
// -32602 naming the parent, live and after a load); session/load of the
// parent replays the parent's and the child's cards as they were live,
// under the same child id, in the RFD's order; a log cut before the
// child's end (the agent killed while it ran) loads with the child in
// the unknown state, the same on every load.
func TestSubagentLoadE2E(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	var cwd string
	m := newRoutedModel(t, func(r subReq, _ *http.Request) string {
		switch {
		case r.firstUser() == "delegate" && len(r.results()) == 0:
			return e2etest.ToolCallsAt(0, subCall("subagent", "Read the notes", "task A"))
		case r.firstUser() == "delegate":
			return answer("done")
		case r.firstUser() == "task A" && len(r.results()) == 0:
			b, _ := json.Marshal(map[string]string{"file_path": filepath.Join(cwd, "notes.txt")})
			return e2etest.ToolCallsAt(1, [2]string{"read", string(b)})
		case r.firstUser() == "task A":
			return answer("the notes say hi")
		}
		return ""
	})
	h := newHarness(t, harnessOpts{model: m.client("k"), stateDir: state})
	cwd = h.cwd
	if err := os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sid := h.start(harnessOpts{caps: subagentCaps})
	if stop, err := h.prompt(sid, "delegate"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	live := h.notes()
	children := announcedChildren(live)
	if len(children) != 1 {
		t.Fatalf("children %v", children)
	}
	child := children[0]
	asChild := func(h *harness, want int) {
		t.Helper()
		for _, c := range []struct {
			method string
			params map[string]any
		}{
			{"session/prompt", map[string]any{"sessionId": child, "prompt": []acp.ContentBlock{acp.TextBlock("hi")}}},
			{"session/set_mode", map[string]any{"sessionId": child, "modeId": "plan"}},
			{"session/load", map[string]any{"sessionId": child, "cwd": cwd, "mcpServers": []any{}}},
		} {
			code, msg := rpcError(t, h, c.method, c.params)
			if code != want || (want == acp.CodeInvalidParams && !strings.Contains(msg, sid)) {
				t.Errorf("%s on the child: %d %q, want %d naming the parent", c.method, code, msg, want)
			}
		}
	}
	asChild(h, acp.CodeInvalidParams)
	h.mustCall("session/close", map[string]any{"sessionId": sid}, nil)
	asChild(h, acp.CodeResourceNotFound)
	h.stop()

	load := func() []acp.SessionNotification {
		t.Helper()
		h2 := newHarness(t, harnessOpts{model: m.client("k"), stateDir: state, cwd: cwd})
		if _, err := h2.load(sid, cwd, subagentCaps); err != nil {
			t.Fatal(err)
		}
		ns := h2.notes()
		asChild(h2, acp.CodeInvalidParams)
		h2.stop()
		return ns
	}
	replay := load()
	if got := announcedChildren(replay); !slices.Equal(got, children) {
		t.Fatalf("replayed children %v, want %v", got, children)
	}
	checkSubagentOrder(t, replay, sid)
	for _, id := range []string{sid, child} {
		lc, rc := mergeToolCalls(rawUpdates(t, live, id)), mergeToolCalls(rawUpdates(t, replay, id))
		if len(lc) == 0 || !reflect.DeepEqual(lc, rc) {
			t.Errorf("cards of %s\n live   %v\n replay %v", id, lc, rc)
		}
	}
	if got := joined(updatesOn(replay, child), acp.UpdateAgentMessageChunk); got != "the notes say hi" {
		t.Errorf("the child's replayed answer %q", got)
	}
	if st := finalState(replay, child); st == nil || st.State != acp.SubagentIdle || st.StopReason != acp.StopEndTurn {
		t.Errorf("replayed final state %+v", st)
	}

	// The agent killed while the child ran: the log ends before the
	// child's end.
	cutBeforeChildEnd(t, state, sid)
	for range 2 {
		ns := load()
		if st := finalState(ns, child); st == nil || st.State != acp.SubagentUnknown {
			t.Errorf("a cut-off child loads with state %+v, want unknown", st)
		}
		for _, n := range ns {
			if su, ok := n.Update.(acp.SubagentUpdate); ok && su.State != nil && su.State.State == acp.SubagentIdle {
				t.Errorf("a cut-off child was loaded idle: %+v", su.State)
			}
		}
	}
}

// cutBeforeChildEnd truncates session sid's log under state before the
// line that logs its child's end.
func cutBeforeChildEnd(t *testing.T, state, sid string) {
	t.Helper()
	var path string
	_ = filepath.WalkDir(state, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), sid) {
				path = p
			}
		}
		return nil
	})
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), `"end":{"stopReason"`)
	if i < 0 {
		t.Fatalf("no child end in the log %s", path)
	}
	i = strings.LastIndex(string(b[:i]), "\n") + 1
	if err := os.WriteFile(path, b[:i], 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSubagentBoundE2E: six subagent calls of one response run at most
// four at a time (the default bound): the fake endpoint holds the
// children's requests and counts how many are in flight.
func TestSubagentBoundE2E(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	inFlight, most := 0, 0
	release := make(chan struct{})
	var calls [][2]string
	for i := range 6 {
		calls = append(calls, subCall("subagent", fmt.Sprintf("Part %d", i), fmt.Sprintf("part %d", i)))
	}
	m := newRoutedModel(t, func(r subReq, _ *http.Request) string {
		if r.firstUser() == "split" {
			if len(r.results()) == 0 {
				return e2etest.ToolCallsAt(0, calls...)
			}
			return answer(strings.Join(r.results(), ","))
		}
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		if inFlight == 4 {
			close(release)
		}
		mu.Unlock()
		select {
		case <-release:
		case <-time.After(20 * time.Second):
			t.Error("four children were never in flight at once")
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		return answer(strings.TrimPrefix(r.firstUser(), "part "))
	})
	h := newHarness(t, harnessOpts{model: m.client("k")})
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "split"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if most != 4 {
		t.Errorf("at most %d children were in flight, want 4", most)
	}
	if got := joined(h.sessionUpdates(), acp.UpdateAgentMessageChunk); got != "0,1,2,3,4,5" {
		t.Errorf("the parent answered %q, want the results in call order", got)
	}
}

// TestSubagentCloseE2E: closing the parent session while its child runs
// cancels the child first: the child ends idle cancelled, in order, and
// the prompt answers cancelled.
func TestSubagentCloseE2E(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{}, 1)
	m := newRoutedModel(t, func(r subReq, req *http.Request) string {
		switch r.firstUser() {
		case "start one":
			return e2etest.ToolCallsAt(0, subCall("subagent", "Wait forever", "task C"))
		case "task C":
			return blockedChild(req, asked)
		}
		return ""
	})
	h := newHarness(t, harnessOpts{model: m.client("k")})
	sid := h.start(harnessOpts{caps: subagentCaps})
	_, ch, err := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []acp.ContentBlock{acp.TextBlock("start one")}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the child made no request")
	}
	h.mustCall("session/close", map[string]any{"sessionId": sid}, nil)
	select {
	case msg := <-ch:
		var pr acp.PromptResponse
		if msg.Error != nil || json.Unmarshal(msg.Result, &pr) != nil || pr.StopReason != acp.StopCancelled {
			t.Fatalf("the prompt answered %s / %v, want cancelled", msg.Result, msg.Error)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the prompt did not answer after the close")
	}
	ns := h.notes()
	children := checkSubagentOrder(t, ns, sid)
	if len(children) != 1 || finalState(ns, children[0]).StopReason != acp.StopCancelled {
		t.Errorf("children %v end with %+v", children, finalState(ns, children[0]))
	}
}

// TestSubagentDepthE2E: with SubagentDepth 2 a child is offered the
// subagent tools and its own child runs, announced on the child's id; the
// grandchild is offered none.
func TestSubagentDepthE2E(t *testing.T) {
	t.Parallel()
	m := newRoutedModel(t, func(r subReq, _ *http.Request) string {
		switch {
		case r.firstUser() == "nest" && len(r.results()) == 0:
			return e2etest.ToolCallsAt(0, subCall("subagent", "Outer", "task O"))
		case r.firstUser() == "nest":
			return answer("outer said " + r.results()[0])
		case r.firstUser() == "task O" && len(r.results()) == 0:
			return e2etest.ToolCallsAt(1, subCall("subagent", "Inner", "task I"))
		case r.firstUser() == "task O":
			return answer("inner said " + r.results()[0])
		case r.firstUser() == "task I":
			return answer("deep")
		}
		return ""
	})
	h := newHarness(t, harnessOpts{model: m.client("k"), options: func(o *server.Options) { o.SubagentDepth = 2 }})
	sid := h.start(harnessOpts{caps: subagentCaps})
	if stop, err := h.prompt(sid, "nest"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if got := joined(updatesOn(h.notes(), sid), acp.UpdateAgentMessageChunk); got != "outer said inner said deep" {
		t.Errorf("the parent answered %q", got)
	}
	if !slices.Contains(m.asking("task O")[0].toolNames(), "subagent") || slices.Contains(m.asking("task I")[0].toolNames(), "subagent") {
		t.Error("the child must be offered the subagent tools at depth 2, the grandchild not")
	}
	on := map[string]string{} // child -> the session it was announced on
	for _, n := range h.notes() {
		if su, ok := n.Update.(acp.SubagentUpdate); ok && su.Title != nil {
			on[*su.Title] = n.SessionID
		}
	}
	var outer string
	for _, n := range h.notes() {
		if su, ok := n.Update.(acp.SubagentUpdate); ok && su.Title != nil && *su.Title == "Outer" {
			outer = su.SessionID
		}
	}
	if on["Outer"] != sid || on["Inner"] != outer || outer == "" {
		t.Errorf("announced on %v (outer %s, parent %s)", on, outer, sid)
	}
}
