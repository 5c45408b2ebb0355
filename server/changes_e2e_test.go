package server_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/internal/gittest"
)

// gitIn runs the user's git in dir for a test.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gittest.Git(t, dir, args...)
}

// toolArgs is m as a tool call's JSON arguments.
func toolArgs(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// changeThingsSteps are the model's answers of a turn on setupProject's
// files that reads and edits edit.txt, creates new.txt and runs sed -i
// on sed.txt, then says "Done.".
func changeThingsSteps() []string {
	return []string{
		e2etest.ToolCalls([2]string{"read", toolArgs(map[string]any{"file_path": "edit.txt"})}),
		e2etest.ToolCallsAt(1,
			[2]string{"edit", toolArgs(map[string]any{"file_path": "edit.txt", "old_string": "two", "new_string": "TWO"})},
			[2]string{"write", toolArgs(map[string]any{"file_path": "new.txt", "content": "fresh\n"})},
			bashCall(map[string]any{"command": "sed -i s/DEBUG/RELEASE/ sed.txt", "description": "Switch to release"})),
		e2etest.Text(nil, []string{"Done."}, "stop"),
	}
}

// changesTurn is a recording of the turn of changeThingsSteps, then a
// turn that changes nothing.
func changesTurn(t *testing.T) string {
	return e2etest.Replay(t, append(changeThingsSteps(), e2etest.Text(nil, []string{"Nothing to do."}, "stop"))...)
}

// changesCards returns the changes cards among updates: id -> the
// tool_call.
func changesCards(us []acp.Update) map[string]acp.ToolCall {
	out := map[string]acp.ToolCall{}
	for _, c := range firstCalls(us) {
		if strings.HasSuffix(c.ToolCallID, "-changes") {
			out[c.ToolCallID] = c
		}
	}
	return out
}

// setupProject writes edit.txt, sed.txt and keep.txt into dir.
func setupProject(t *testing.T, dir string) {
	for name, text := range map[string]string{"edit.txt": "one\ntwo\nthree\n", "sed.txt": "mode=DEBUG\n", "keep.txt": "k\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// inAndOutOfGit runs body as two subtests, "git" and "outside git",
// each on a fresh setupProject folder cwd; for "git" the folder is a
// repository (branch main) with the files committed. Without git the
// test is skipped.
func inAndOutOfGit(t *testing.T, body func(t *testing.T, cwd string, inGit bool)) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, inGit := range []bool{true, false} {
		name := "outside git"
		if inGit {
			name = "git"
		}
		t.Run(name, func(t *testing.T) {
			cwd := t.TempDir()
			setupProject(t, cwd)
			if inGit {
				gitIn(t, cwd, "init", "-q", "-b", "main")
				gitIn(t, cwd, "add", "-A")
				gitIn(t, cwd, "commit", "-q", "-m", "first")
			}
			body(t, cwd, inGit)
		})
	}
}

// TestTurnChangesE2E: a turn that edits a file, creates one and runs
// sed -i on a third ends with one card listing the three with their
// diffs (in git; outside git the command's change is named without a
// diff); a turn that changes nothing has none; load shows the card
// again.
func TestTurnChangesE2E(t *testing.T) {
	inAndOutOfGit(t, func(t *testing.T, cwd string, inGit bool) {
		state := t.TempDir()
		h := newHarness(t, harnessOpts{replay: changesTurn(t), cwd: cwd, stateDir: state})
		sid := h.start(harnessOpts{})
		h.promptAll(sid, "change things", "and now nothing")
		if b, _ := os.ReadFile(filepath.Join(cwd, "sed.txt")); string(b) != "mode=RELEASE\n" {
			t.Fatalf("sed.txt = %q", b)
		}
		cards := changesCards(h.sessionUpdates())
		c, ok := cards["turn1-changes"]
		if len(cards) != 1 || !ok {
			t.Fatalf("changes cards %v, want turn1's only", cards)
		}
		if c.Title != "Changed 3 files (+3 −2)" && inGit || c.Title != "Changed 3 files (+2 −1)" && !inGit || c.Kind != acp.ToolKind("edit") {
			t.Errorf("card %q kind %s", c.Title, c.Kind)
		}
		diffs := map[string]acp.Diff{}
		var list string
		for _, it := range c.Content {
			switch v := it.(type) {
			case acp.Diff:
				diffs[filepath.Base(v.Path)] = v
				if !filepath.IsAbs(v.Path) {
					t.Errorf("diff path %q", v.Path)
				}
			case acp.Content:
				list += v.Content.Text
			case acp.Terminal:
				t.Errorf("a terminal in the changes card")
			}
		}
		if d := diffs["edit.txt"]; d.OldText == nil || *d.OldText != "one\ntwo\nthree" || d.NewText != "one\nTWO\nthree" {
			t.Errorf("edit.txt diff %+v", d)
		}
		if d := diffs["new.txt"]; d.OldText != nil || d.NewText != "fresh\n" {
			t.Errorf("new.txt diff %+v", d)
		}
		d, sedShown := diffs["sed.txt"]
		if inGit && (!sedShown || *d.OldText != "mode=DEBUG" || d.NewText != "mode=RELEASE") || !inGit && sedShown {
			t.Errorf("sed.txt diff %+v (shown %v)", d, sedShown)
		}
		wantList := "- edit.txt (modified, +1 −1)\n- new.txt (created, +1 −0)\n- sed.txt (modified, +1 −1)"
		if !inGit {
			wantList = "- edit.txt (modified, +1 −1)\n- new.txt (created, +1 −0)\n- sed.txt (modified, changed by a command; no earlier copy was kept)"
		}
		if list != wantList || len(c.Locations) != 3 {
			t.Errorf("list %q, locations %v", list, c.Locations)
		}

		// Load shows the same card.
		h.stop()
		h2 := newHarness(t, harnessOpts{stateDir: state, cwd: cwd})
		replay, err := h2.load(sid, cwd, nil)
		if err != nil {
			t.Fatal(err)
		}
		again := mergeToolCalls(replay)["turn1-changes"]
		content, _ := json.Marshal(c.Content)
		locs, _ := json.Marshal(c.Locations)
		if again["title"] != jsonText(c.Title) || again["content"] != string(content) || again["locations"] != string(locs) || again["status"] != `"completed"` {
			t.Errorf("replayed changes card %v, live %s %s %s", again, c.Title, content, locs)
		}
	})
}

// jsonText is s as a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
