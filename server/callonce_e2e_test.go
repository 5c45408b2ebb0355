package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/internal/probe"
)

// TestEditResolvedOnce: one edit the model asks for, through the whole
// chain (stream, scheduler, checkpoint, permission step with its preview
// and question, execution, cards, log), looks its tool up once, decodes
// its arguments once and reads and diffs the file once: the preview's
// change is the one applied. A file changed after the preview (while the
// user is asked) is read again at the run, which finds it changed since
// the model read it and refuses the edit (a reused preview would have
// written over the user's change).
func TestEditResolvedOnce(t *testing.T) {
	for _, c := range []struct {
		name    string
		changed bool // the file changes between the preview and the run
		reads   int64
		diffs   int64
		want    string
	}{
		{"unchanged", false, 1, 1, "mode=RELEASE\nlevel=info\n"},
		{"changed", true, 2, 1, "mode=DEBUG\nlevel=debug\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			edit := `{"file_path":"config.txt","old_string":"DEBUG","new_string":"RELEASE"}`
			rec := e2etest.Replay(t, e2etest.ToolCallsAt(0, [2]string{"read", `{"file_path":"config.txt"}`}),
				e2etest.Text(nil, []string{"Read."}, "stop"),
				e2etest.ToolCallsAt(1, [2]string{"edit", edit}),
				e2etest.Text(nil, []string{"Done."}, "stop"))
			h := newHarness(t, harnessOpts{replay: rec, mode: "default"})
			path := filepath.Join(h.cwd, "config.txt")
			if err := os.WriteFile(path, []byte("mode=DEBUG\nlevel=info\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// A file written just now is read again at the run: its times
			// cannot vouch for it yet (editplan.go).
			old := time.Now().Add(-time.Minute)
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
			pc := &permissionClient{outcome: "allow-once"}
			h.client.OnRequest = pc.handle
			if c.changed {
				// The user changes the file while the question waits
				// (the same size: only the stat's times tell).
				h.client.OnRequest = func(method string, params json.RawMessage) (any, error) {
					if err := os.WriteFile(path, []byte("mode=DEBUG\nlevel=debug\n"), 0o644); err != nil {
						t.Error(err)
					}
					return pc.handle(method, params)
				}
			}
			sid := h.start(harnessOpts{})
			h.promptAll(sid, "read")
			counts, stop := probe.Start()
			defer stop()
			if got, err := h.prompt(sid, "edit"); err != nil || got != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", got, err)
			}
			stop()
			if pc.count() != 1 {
				t.Fatalf("asked %d times, want once", pc.count())
			}
			if got, _ := os.ReadFile(path); string(got) != c.want {
				t.Errorf("file %q, want %q", got, c.want)
			}
			if n := counts.Lookups.Load(); n != 1 {
				t.Errorf("%d tool lookups, want 1", n)
			}
			if n := counts.Decodes.Load(); n != 1 {
				t.Errorf("%d argument decodes, want 1", n)
			}
			if r, d := counts.Reads.Load(), counts.Diffs.Load(); r != c.reads || d != c.diffs {
				t.Errorf("%d file reads and %d diffs, want %d and %d", r, d, c.reads, c.diffs)
			}
		})
	}
}

// TestMCPCallResolvedOnce: one MCP tool call the model asks for, through
// the whole chain with the test server over stdio (the permission step
// asks: the tool says nothing of its effects), looks its tool up once
// and parses its arguments once, for its cards, its Access check, the
// question and the call; the server gets it once.
func TestMCPCallResolvedOnce(t *testing.T) {
	write := [2]string{"mcp__notes__write_note", `{"name":"todo","text":"one"}`}
	model := newCapturingModel(t, e2etest.ToolCalls(write), e2etest.Text(nil, []string{"Done."}, "stop"))
	h := newHarness(t, harnessOpts{model: model, mode: "default"})
	pc := &permissionClient{outcome: "allow-once"}
	h.client.OnRequest = pc.handle
	events := filepath.Join(t.TempDir(), "events")
	h.initialize()
	sid, _ := h.newMCPSession(stdioMCP(t, "notes", events))
	counts, stop := probe.Start()
	defer stop()
	if got, err := h.prompt(sid, "write"); err != nil || got != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", got, err)
	}
	stop()
	if pc.count() != 1 || len(eventLines(events)) != 1 {
		t.Fatalf("asked %d times, the server saw %q", pc.count(), eventLines(events))
	}
	if n := counts.Lookups.Load(); n != 1 {
		t.Errorf("%d tool lookups, want 1", n)
	}
	if n := counts.Decodes.Load(); n != 1 {
		t.Errorf("%d argument decodes, want 1", n)
	}
}
