package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// TestSiblingChildrenAskOnceE2E: two subagents of one model response
// each write a file at the same time; the first permission request is
// held until both children's write cards are out (both calls waiting),
// then answered "Always allow": that one answer lets both writes run,
// and the editor is asked once.
func TestSiblingChildrenAskOnceE2E(t *testing.T) {
	var cwd string
	m := newRoutedModel(t, func(r subReq, _ *http.Request) string {
		n := len(r.results())
		switch {
		case r.firstUser() == "two writers" && n == 0:
			return e2etest.ToolCallsAt(0, subCall("subagent", "Writer A", "task A"), subCall("subagent", "Writer B", "task B"))
		case r.firstUser() == "two writers":
			return answer("both done")
		case (r.firstUser() == "task A" || r.firstUser() == "task B") && n == 0:
			name := map[string]string{"task A": "a.txt", "task B": "b.txt"}[r.firstUser()]
			return e2etest.ToolCallsAt(1, [2]string{"write", toolArgs(map[string]any{"file_path": filepath.Join(cwd, name), "content": "x\n"})})
		case r.firstUser() == "task A" || r.firstUser() == "task B":
			return answer("wrote")
		}
		return ""
	})
	h := newHarness(t, harnessOpts{model: m.client("k"), mode: "default"})
	cwd = h.cwd
	var mu sync.Mutex
	var asked []acp.RequestPermissionRequest
	h.client.OnRequest = func(method string, params json.RawMessage) (any, error) {
		var req acp.RequestPermissionRequest
		_ = json.Unmarshal(params, &req)
		mu.Lock()
		asked = append(asked, req)
		first := len(asked) == 1
		mu.Unlock()
		if first {
			// Hold the answer until both children's writes are announced,
			// so the second call is waiting when "always" is given.
			deadline := time.Now().Add(30 * time.Second)
			for writeCards(h.notes()) < 2 {
				if time.Now().After(deadline) {
					t.Error("the second child's write was never announced")
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: acp.OutcomeSelected, OptionID: "allow-always"}}, nil
	}
	sid := h.start(harnessOpts{caps: subagentCaps})
	h.promptAll(sid, "two writers")
	for _, f := range []string{"a.txt", "b.txt"} {
		if b, err := os.ReadFile(filepath.Join(cwd, f)); err != nil || string(b) != "x\n" {
			t.Errorf("%s: %q, %v", f, b, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 {
		t.Errorf("asked %d times, want once (one answer covers the waiting sibling)", len(asked))
	}
}

// writeCards counts the tool_call announcements of edits in ns.
func writeCards(ns []acp.SessionNotification) int {
	n := 0
	for _, note := range ns {
		if tc, ok := note.Update.(acp.ToolCall); ok && tc.Kind == "edit" {
			n++
		}
	}
	return n
}
