package server_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/session"
)

// TestNewSessionInAnotherProcessE2E: a session
// created by one agent is on disk when session/new answers, while that
// agent still runs (holding no lock for it): a second agent on the same
// state directory (a client that creates sessions in one process and
// prompts them from another, as acpx does) lists it, loads it and
// prompts it; the first agent, asked to prompt it afterwards, refuses
// and leaves the log the second now owns alone.
func TestNewSessionInAnotherProcessE2E(t *testing.T) {
	t.Parallel()
	state, cwd := t.TempDir(), t.TempDir()
	h1 := newHarness(t, harnessOpts{replay: e2etest.Replay(t, e2etest.Text(nil, []string{"From one."}, "stop")), stateDir: state, cwd: cwd})
	sid := h1.start(harnessOpts{})
	path, err := session.Find(state, sid)
	if err != nil {
		t.Fatalf("no log after session/new: %v", err)
	}
	ld, err := session.ReadLog(path)
	if err != nil || ld.Header.ID != sid || ld.Header.Cwd != cwd || len(ld.Events) != 0 {
		t.Fatalf("log after session/new: %+v, %v", ld, err)
	}

	h2 := newHarness(t, harnessOpts{replay: e2etest.Replay(t, e2etest.Text(nil, []string{"From two."}, "stop")), stateDir: state, cwd: cwd})
	h2.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	var list acp.ListSessionsResponse
	h2.mustCall("session/list", map[string]any{"cwd": cwd}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != sid || list.Sessions[0].Cwd != cwd {
		t.Fatalf("session/list in the second agent: %+v", list)
	}
	if _, err := h2.load(sid, cwd, nil); err != nil {
		t.Fatalf("session/load in the second agent: %v", err)
	}
	if stop, err := h2.prompt(sid, "hello"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt in the second agent = %q, %v", stop, err)
	}
	ld, err = session.ReadLog(path)
	if err != nil || ld.NeedsRepair() {
		t.Fatalf("log after the second agent's turn: %v", err)
	}
	if n := len(ld.Events); n == 0 || joinedUser(ld.Events) != "hello" {
		t.Fatalf("the second agent's turn is not logged: %d events", n)
	}
	before, _ := os.ReadFile(path)
	// The first agent still has the session: while the second holds it,
	// a prompt there is refused as locked; once the second closed it, as
	// continued elsewhere. Nothing runs, the log is left as it is.
	wantRefused := func(reason string) {
		t.Helper()
		_, err := h1.prompt(sid, "again")
		var e *acp.Error
		if !errors.As(err, &e) || e.Code != acp.CodeInternalError || !strings.Contains(string(mustJSON(e.Data)), `"reason":"`+reason+`"`) {
			t.Errorf("prompt in the first agent: %v, want -32603 %s", err, reason)
		}
	}
	wantRefused("LOG_LOCKED")
	h2.mustCall("session/close", map[string]any{"sessionId": sid}, nil)
	wantRefused("LOG_CONTINUED")
	h1.stop()
	h2.stop()
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("the first agent wrote into the log the second one continued")
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func joinedUser(events []session.Event) string {
	var s string
	for _, ev := range events {
		if m, ok := ev.Data.(session.UserMessage); ok {
			for _, c := range m.Content {
				s += c.Text
			}
		}
	}
	return s
}
