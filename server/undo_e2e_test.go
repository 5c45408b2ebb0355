package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// undoTurns is a recording of two turns that change files: the first
// reads and edits edit.txt, creates new.txt and runs sed -i on sed.txt;
// the second creates two.txt.
func undoTurns(t *testing.T) string {
	return e2etest.Replay(t, append(changeThingsSteps(),
		e2etest.ToolCallsAt(3, [2]string{"write", toolArgs(map[string]any{"file_path": "two.txt", "content": "2\n"})}),
		e2etest.Text(nil, []string{"Done again."}, "stop"))...)
}

// undoCard is the text and final status of the undo card of turn n.
func undoCard(us []acp.Update, n int) (text string, status acp.ToolCallStatus) {
	id := "turn" + string(rune('0'+n)) + "-undo"
	for _, u := range us {
		switch c := u.(type) {
		case acp.ToolCall:
			if c.ToolCallID == id {
				for _, it := range c.Content {
					if v, ok := it.(acp.Content); ok {
						text += v.Content.Text
					}
				}
			}
		case acp.ToolCallUpdate:
			if c.ToolCallID == id && c.Status != "" {
				status = c.Status
			}
		default:
			// Only the undo card's updates count.
		}
	}
	return text, status
}

// TestUndoE2E: /undo asks (showing the change), restores the last
// turn's files (in git: git status, the index, branches and stash as
// before), skips a file the user changed since, goes one more turn back
// the second time, and says there is nothing left the third; load shows
// the undo cards; deleting the session leaves no checkpoint ref.
// Outside git it restores what the tools changed and names what the
// command changed.
func TestUndoE2E(t *testing.T) {
	inAndOutOfGit(t, func(t *testing.T, cwd string, inGit bool) {
		state := t.TempDir()
		var userGit func() string
		if inGit {
			if err := os.WriteFile(filepath.Join(cwd, "stashed.txt"), []byte("s\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gitIn(t, cwd, "add", "stashed.txt")
			gitIn(t, cwd, "stash", "-q")
			userGit = func() string {
				return gitIn(t, cwd, "status", "--porcelain") + gitIn(t, cwd, "ls-files", "--stage") + gitIn(t, cwd, "stash", "list") +
					gitIn(t, cwd, "branch", "-a") + gitIn(t, cwd, "reflog")
			}
		}
		var before string
		if inGit {
			before = userGit()
		}
		h := newHarness(t, harnessOpts{replay: undoTurns(t), cwd: cwd, stateDir: state, mode: "default"})
		var mu sync.Mutex
		var undoAsks []string
		h.client.OnRequest = func(method string, params json.RawMessage) (any, error) {
			if strings.Contains(string(params), `-undo"`) {
				mu.Lock()
				undoAsks = append(undoAsks, string(params))
				mu.Unlock()
			}
			return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: "allow-once"}}, nil
		}
		sid := h.start(harnessOpts{})
		h.promptAll(sid, "change things", "one more")
		// The user changes sed.txt after the turns.
		if err := os.WriteFile(filepath.Join(cwd, "sed.txt"), []byte("the user's\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if stop, err := h.prompt(sid, "/undo"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("undo %d = %q, %v", i+1, stop, err)
			}
		}
		us := h.sessionUpdates()
		// Turn 3 undid turn 2 (two.txt), turn 4 turn 1, turn 5 nothing.
		if text, st := undoCard(us, 3); st != acp.StatusCompleted || !strings.Contains(text, "restored two.txt") {
			t.Errorf("first undo card %s %q", st, text)
		}
		text, st := undoCard(us, 4)
		if st != acp.StatusCompleted || !strings.Contains(text, "restored edit.txt") || !strings.Contains(text, "restored new.txt") ||
			!strings.Contains(text, "left as it is: sed.txt") || strings.Contains(text, "restored sed.txt") {
			t.Errorf("second undo card %s %q", st, text)
		}
		if inGit && !strings.Contains(text, "sed.txt (changed since turn 1") || !inGit && !strings.Contains(text, "sed.txt (changed by a command; no earlier copy was kept)") {
			t.Errorf("second undo card's reason for sed.txt: %q", text)
		}
		if text, st := undoCard(us, 5); st != acp.StatusFailed || !strings.Contains(text, "Nothing to undo") {
			t.Errorf("third undo card %s %q", st, text)
		}
		for name, want := range map[string]string{"edit.txt": "one\ntwo\nthree\n", "sed.txt": "the user's\n", "keep.txt": "k\n"} {
			if b, _ := os.ReadFile(filepath.Join(cwd, name)); string(b) != want {
				t.Errorf("%s = %q, want %q", name, b, want)
			}
		}
		for _, name := range []string{"new.txt", "two.txt"} {
			if _, err := os.Stat(filepath.Join(cwd, name)); !os.IsNotExist(err) {
				t.Errorf("%s still there: %v", name, err)
			}
		}
		mu.Lock()
		asks := append([]string(nil), undoAsks...)
		mu.Unlock()
		if len(asks) != 2 || !strings.Contains(asks[0], `"title":"Undo turn 2: restore 1 file (+0 −1)"`) ||
			!strings.Contains(asks[1], `"type":"diff"`) || !strings.Contains(asks[1], "edit.txt") {
			t.Errorf("undo permission requests %q", asks)
		}
		if inGit {
			// Only the user's own change to sed.txt is left.
			if err := os.WriteFile(filepath.Join(cwd, "sed.txt"), []byte("mode=DEBUG\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := userGit(); got != before {
				t.Errorf("git after the undos:\n%s\nwant\n%s", got, before)
			}
		}

		// Load shows the undo cards; delete leaves no checkpoint.
		h.stop()
		h2 := newHarness(t, harnessOpts{stateDir: state, cwd: cwd})
		replay, err := h2.load(sid, cwd, nil)
		if err != nil {
			t.Fatal(err)
		}
		calls := mergeToolCalls(replay)
		for id, title := range map[string]string{"turn3-undo": `"Undid turn 2"`, "turn4-undo": `"Undid turn 1"`, "turn5-undo": `"Nothing undone"`} {
			if calls[id]["title"] != title {
				t.Errorf("replayed %s: %v", id, calls[id])
			}
		}
		h2.mustCall("session/delete", map[string]any{"sessionId": sid}, nil)
		if inGit {
			if refs := gitIn(t, cwd, "for-each-ref", "refs/dsh-acp/"); refs != "" {
				t.Errorf("refs after delete: %q", refs)
			}
		}
		if _, err := os.Stat(filepath.Join(state, "checkpoints", sid)); !os.IsNotExist(err) {
			t.Errorf("before-images after delete: %v", err)
		}
	})
}

// TestUndoThroughEditorE2E: with an editor that offers writes, /undo
// writes the restored file through it (its buffer follows).
func TestUndoThroughEditorE2E(t *testing.T) {
	rec := e2etest.Replay(t,
		e2etest.ToolCalls([2]string{"read", toolArgs(map[string]any{"file_path": "edit.txt"})}),
		e2etest.ToolCallsAt(1, [2]string{"edit", toolArgs(map[string]any{"file_path": "edit.txt", "old_string": "two", "new_string": "TWO"})}),
		e2etest.Text(nil, []string{"Done."}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec})
	setupProject(t, h.cwd)
	var mu sync.Mutex
	var events []string
	h.client.OnRequest = func(method string, params json.RawMessage) (any, error) {
		var req struct{ Path, Content string }
		if err := json.Unmarshal(params, &req); err != nil {
			return nil, err
		}
		mu.Lock()
		events = append(events, method+" "+filepath.Base(req.Path))
		mu.Unlock()
		switch method {
		case "fs/read_text_file":
			b, err := os.ReadFile(req.Path)
			return acp.ReadTextFileResponse{Content: string(b)}, err
		case "fs/write_text_file":
			return nil, os.WriteFile(req.Path, []byte(req.Content), 0o644)
		}
		return nil, &acp.Error{Code: acp.CodeMethodNotFound, Message: method}
	}
	sid := h.start(harnessOpts{caps: fsCaps})
	h.promptAll(sid, "change it", "/undo")
	writes := 0
	mu.Lock()
	for _, e := range events {
		if e == "fs/write_text_file edit.txt" {
			writes++
		}
	}
	mu.Unlock()
	if b, _ := os.ReadFile(filepath.Join(h.cwd, "edit.txt")); string(b) != "one\ntwo\nthree\n" || writes != 2 {
		t.Errorf("edit.txt = %q after the undo; editor writes %d (events %v), want 2 (the edit's and the undo's)", b, writes, events)
	}
}
