package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

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
