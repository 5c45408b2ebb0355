package server_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acpclient"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/server"
)

// TestSubagentPermissionE2E: a child's write asks the editor, on the
// child's id with `subagents` (the child waiting in requires_action
// meanwhile), else on the parent's with the card naming the child; the
// "Always allow" given for the child covers the parent's own write
// after it.
func TestSubagentPermissionE2E(t *testing.T) {
	withAndWithoutSubagents(t, func(t *testing.T, shown bool, start harnessOpts) {
		var cwd string
		write := func(step int, name string) string {
			return e2etest.ToolCallsAt(step, [2]string{"write", toolArgs(map[string]any{"file_path": filepath.Join(cwd, name), "content": "x\n"})})
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
		sid := h.start(start)
		h.promptAll(sid, "write twice")
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

// waitingChildModel is a model whose parent prompt "start one" starts
// one subagent ("Wait forever", task C) whose request is answered only
// when abandoned (the child was cancelled); asked says it arrived. Given
// the child's result, the parent answers "went on after <result>".
func waitingChildModel(t *testing.T) (m *routedModel, asked <-chan struct{}) {
	ch := make(chan struct{}, 1)
	m = newRoutedModel(t, func(r subReq, req *http.Request) string {
		switch {
		case r.firstUser() == "start one" && len(r.results()) == 0:
			return e2etest.ToolCallsAt(0, subCall("subagent", "Wait forever", "task C"))
		case r.firstUser() == "start one":
			return answer("went on after " + r.results()[0])
		case r.firstUser() == "task C":
			select {
			case ch <- struct{}{}:
			default:
			}
			<-req.Context().Done()
		}
		return ""
	})
	return m, ch
}

// startWaitingChild sends "start one" on sid (on a waitingChildModel)
// and returns the prompt's answer channel once the child's request has
// arrived.
func startWaitingChild(t *testing.T, h *harness, sid string, asked <-chan struct{}) <-chan acpclient.Message {
	t.Helper()
	ch := sendPrompt(t, h, sid, "start one", nil)
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the child made no request")
	}
	return ch
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
			m, asked := waitingChildModel(t)
			h := newHarness(t, harnessOpts{model: m.client("k")})
			sid := h.start(harnessOpts{caps: subagentCaps})
			ch := startWaitingChild(t, h, sid, asked)
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
				if r := stopReasonOf(t, ch); r != acp.StopEndTurn {
					t.Fatalf("the prompt answered %s, want end_turn", r)
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
	h.promptAll(sid, "fail")
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
	h.promptAll(sid, "delegate")
	if p, c := m.asking("delegate")[0].Model, m.asking("task F")[0].Model; p != "deepseek-chat" || c != "flash-1" {
		t.Errorf("the parent asked %q and the child %q, want deepseek-chat and flash-1", p, c)
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
	h.promptAll(sid, "split")
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
	m, asked := waitingChildModel(t)
	h := newHarness(t, harnessOpts{model: m.client("k")})
	sid := h.start(harnessOpts{caps: subagentCaps})
	ch := startWaitingChild(t, h, sid, asked)
	h.mustCall("session/close", map[string]any{"sessionId": sid}, nil)
	if r := stopReasonOf(t, ch); r != acp.StopCancelled {
		t.Fatalf("the prompt answered %s after the close, want cancelled", r)
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
	h.promptAll(sid, "nest")
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
