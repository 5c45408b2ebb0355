package server_test

import (
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/sandbox"
)

// permissionClient answers every permission request with outcome (an
// optionId, or "cancelled") and counts the requests.
type permissionClient struct {
	mu      sync.Mutex
	asked   []acp.RequestPermissionRequest
	outcome string
}

func (p *permissionClient) handle(method string, params json.RawMessage) (any, error) {
	if method != "session/request_permission" {
		return nil, &acp.Error{Code: acp.CodeMethodNotFound, Message: method}
	}
	var req acp.RequestPermissionRequest
	_ = json.Unmarshal(params, &req)
	p.mu.Lock()
	p.asked = append(p.asked, req)
	p.mu.Unlock()
	if p.outcome == "cancelled" {
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "cancelled"}}, nil
	}
	return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: p.outcome}}, nil
}

func (p *permissionClient) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.asked)
}

// TestPermissionAnswers runs two edit-like calls in one step under the
// default mode with each answer, checking the stop reason, the card
// statuses, how often the user was asked, and the transcript.
func TestPermissionAnswers(t *testing.T) {
	cases := []struct {
		option   string
		asked    int
		statuses string
		stop     acp.StopReason
	}{
		{"allow-once", 2, "completed,completed", acp.StopEndTurn},
		{"allow-always", 1, "completed,completed", acp.StopEndTurn},
		{"reject-once", 2, "failed,failed", acp.StopEndTurn},
		{"reject-always", 1, "failed,failed", acp.StopEndTurn},
		{"cancelled", 1, "failed,failed", acp.StopCancelled},
	}
	for _, c := range cases {
		t.Run(c.option, func(t *testing.T) {
			rec := e2etest.Replay(t, e2etest.ToolCalls([2]string{"card_diff", `{"path":"a.txt"}`}, [2]string{"card_diff", `{"path":"b.txt"}`}), e2etest.Text(nil, []string{"Done."}, "stop"))
			h := newHarness(t, harnessOpts{replay: rec, mode: "default"})
			pc := &permissionClient{outcome: c.option}
			h.client.OnRequest = pc.handle
			sid := h.start(harnessOpts{info: map[string]string{"name": "test-client", "version": "1"}})
			stop, err := h.prompt(sid, "edit both files")
			if err != nil || stop != c.stop {
				t.Fatalf("prompt = %q, %v; want %q", stop, err, c.stop)
			}
			if pc.count() != c.asked {
				t.Errorf("asked %d times, want %d", pc.count(), c.asked)
			}
			if got := finalStatuses(h.sessionUpdates()); got != c.statuses {
				t.Errorf("final statuses %s, want %s", got, c.statuses)
			}
			req := pc.asked[0]
			if req.ToolCall.Status != acp.StatusPending || req.ToolCall.Title == nil || *req.ToolCall.Title != "Edit a.txt" ||
				len(req.ToolCall.Content) != 1 || req.ToolCall.Content[0].ToolCallContentType() != acp.DiffItem || len(req.Options) != 4 {
				b, _ := json.Marshal(req)
				t.Errorf("permission request = %s", b)
			}
			checkToolCallsEnd(t, h.sessionUpdates())
			checkGolden(t, "permission-"+c.option, h, sid)
		})
	}
}

func finalStatuses(us []acp.Update) string {
	var out []string
	for _, u := range us {
		if c, ok := u.(acp.ToolCallUpdate); ok && isFinal(c) {
			out = append(out, string(c.Status))
		}
	}
	return strings.Join(out, ",")
}

// TestPermissionCancelWhilePending: cancelling the turn while the user has
// not answered ends the prompt at once with "cancelled".
func TestPermissionCancelWhilePending(t *testing.T) {
	rec := e2etest.Replay(t, e2etest.ToolCalls([2]string{"card_diff", `{"path":"a.txt"}`}))
	h := newHarness(t, harnessOpts{replay: rec, mode: "default"})
	asked := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	h.client.OnRequest = func(method string, _ json.RawMessage) (any, error) {
		asked <- struct{}{}
		<-release
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: "allow-once"}}, nil
	}
	sid := h.start(harnessOpts{})
	_, ch, _ := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
	select {
	case <-asked:
	case <-time.After(5 * time.Second):
		t.Fatal("no permission request")
	}
	h.cancelPrompt(sid, ch, 5*time.Second)
	if got := finalStatuses(h.sessionUpdates()); got != "failed" {
		t.Errorf("final statuses %s", got)
	}
	// The agent told the editor it no longer needs the answer.
	found := false
	for _, l := range h.tr.AgentLines() {
		found = found || strings.Contains(string(l), `"$/cancel_request"`)
	}
	if !found {
		t.Error("no $/cancel_request for the abandoned permission request")
	}
}

// TestPlanModeRefuses: in plan mode a changing tool is refused without
// asking, with a message telling the model why.
func TestPlanModeRefuses(t *testing.T) {
	rec := e2etest.Replay(t, e2etest.ToolCalls([2]string{"card_diff", `{"path":"a.txt"}`}), e2etest.Text(nil, []string{"ok"}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec, mode: "plan"})
	pc := &permissionClient{outcome: "allow-once"}
	h.client.OnRequest = pc.handle
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "edit"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if pc.count() != 0 {
		t.Errorf("asked %d times in plan mode", pc.count())
	}
	var last acp.ToolCallUpdate
	for _, u := range h.sessionUpdates() {
		if c, _ := toolCard(u); c.Status == acp.StatusFailed {
			last = c
		}
	}
	b, _ := json.Marshal(last)
	if last.Status != acp.StatusFailed || !strings.Contains(string(b), "plan mode") {
		t.Errorf("refused card = %s", b)
	}
}

// TestSetMode: session/set_mode switches the mode; an unknown mode is
// -32602; in acceptEdits the edit-like tool still asks (it is not a known
// file tool), in bypassPermissions nothing asks.
func TestSetMode(t *testing.T) {
	rec := e2etest.Replay(t, e2etest.ToolCalls([2]string{"card_diff", `{"path":"a.txt"}`}), e2etest.Text(nil, []string{"ok"}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec, mode: "default"})
	pc := &permissionClient{outcome: "allow-once"}
	h.client.OnRequest = pc.handle
	sid := h.start(harnessOpts{})
	if code, _ := rpcError(t, h, "session/set_mode", map[string]any{"sessionId": sid, "modeId": "yolo"}); code != acp.CodeInvalidParams {
		t.Errorf("unknown mode code = %d", code)
	}
	if code, _ := rpcError(t, h, "session/set_mode", map[string]any{"sessionId": "nope", "modeId": "plan"}); code != acp.CodeResourceNotFound {
		t.Errorf("unknown session code = %d", code)
	}
	h.mustCall("session/set_mode", map[string]any{"sessionId": sid, "modeId": "bypassPermissions"}, nil)
	if stop, err := h.prompt(sid, "edit"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if pc.count() != 0 {
		t.Errorf("asked %d times in bypassPermissions", pc.count())
	}
}

// TestTerminalPendingUntilAllowed: a terminal card that will ask starts
// pending and turns in_progress once allowed.
func TestTerminalPendingUntilAllowed(t *testing.T) {
	rec := e2etest.Replay(t, e2etest.ToolCalls([2]string{"card_term", `{"command":"make","description":"Build"}`}), e2etest.Text(nil, []string{"ok"}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec, mode: "default"})
	pc := &permissionClient{outcome: "allow-once"}
	h.client.OnRequest = pc.handle
	sid := h.start(harnessOpts{caps: map[string]any{"_meta": map[string]any{"terminal_output": true}}})
	if stop, err := h.prompt(sid, "build"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	var seq []string
	for _, u := range h.sessionUpdates() {
		if c, ok := toolCard(u); ok && c.Status != "" {
			seq = append(seq, u.SessionUpdateKind()+":"+string(c.Status))
		}
	}
	if got := strings.Join(seq, " "); got != "tool_call:pending tool_call_update:in_progress tool_call_update:completed" {
		t.Errorf("statuses: %s", got)
	}
	if pc.count() != 1 || len(pc.asked[0].ToolCall.Content) != 2 || pc.asked[0].ToolCall.Content[1].ToolCallContentType() != acp.TerminalItem {
		b, _ := json.Marshal(pc.asked)
		t.Errorf("permission requests: %s", b)
	}
}

// TestUnsandboxedRunAsks: a bash call with dangerously_disable_sandbox
// gets its own permission prompt (the usual four options, its card saying
// it runs outside the sandbox) even after "Always allow" covered its
// prefix; in bypassPermissions too (the third call alone asks there).
func TestUnsandboxedRunAsks(t *testing.T) {
	if h := sandbox.Probe(); h.LandlockABI == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, but commands cannot be confined: %s", h.LandlockReason)
		}
		t.Skipf("commands cannot be confined here (%s): no sandbox to leave", h.LandlockReason)
	}
	for mode, wantAsked := range map[string]int{"default": 2, "bypassPermissions": 1} {
		t.Run(mode, func(t *testing.T) {
			rec := e2etest.Replay(t,
				e2etest.ToolCalls(bashCall(map[string]any{"command": "echo one", "description": "One"})),
				e2etest.ToolCalls(bashCall(map[string]any{"command": "echo two", "description": "Two"})),
				e2etest.ToolCalls(bashCall(map[string]any{"command": "echo three", "description": "Three", "dangerously_disable_sandbox": true})),
				e2etest.Text(nil, []string{"Done."}, "stop"))
			h := newHarness(t, harnessOpts{replay: rec, mode: mode})
			pc := &permissionClient{outcome: "allow-always"}
			h.client.OnRequest = pc.handle
			sid := h.start(harnessOpts{})
			if stop, err := h.prompt(sid, "run them"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			if pc.count() != wantAsked {
				t.Fatalf("asked %d times, want %d", pc.count(), wantAsked)
			}
			if got := finalStatuses(h.sessionUpdates()); got != "completed,completed,completed" {
				t.Errorf("final statuses %s", got)
			}
			last := pc.asked[len(pc.asked)-1]
			req, _ := json.Marshal(last)
			if !strings.Contains(string(req), "Outside the sandbox: Three") || len(last.Options) != 4 {
				t.Errorf("second permission request = %s", req)
			}
		})
	}
}
