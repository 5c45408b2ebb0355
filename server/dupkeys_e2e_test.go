package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// TestDuplicateKeyArgsE2E: a streamed write and read whose arguments
// give file_path twice (the early card, from the first member, names
// a.txt; encoding/json would take b.txt) fail with INVALID_ARGS before
// permission is asked or any file is touched, and their final cards
// point at no file: the locations the start card showed are cleared.
func TestDuplicateKeyArgsE2E(t *testing.T) {
	t.Parallel()
	write := [2]string{"write", `{"file_path":"a.txt","content":"x","file_path":"b.txt"}`}
	read := [2]string{"read", `{"file_path":"c.txt","file_path":"d.txt"}`}
	rec := e2etest.Replay(t, e2etest.ToolCallsChunked(0, 3, write, read), e2etest.Text(nil, []string{"Done."}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec, mode: "default"})
	for _, name := range []string{"c.txt", "d.txt"} {
		if err := os.WriteFile(filepath.Join(h.cwd, name), []byte("secret "+name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pc := &permissionClient{outcome: "allow-once"}
	h.client.OnRequest = pc.handle
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "go"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if n := pc.count(); n != 0 {
		t.Errorf("permission asked %d times, want never (the arguments are invalid)", n)
	}
	for _, name := range []string{"a.txt", "b.txt"} {
		if _, err := os.Lstat(filepath.Join(h.cwd, name)); !os.IsNotExist(err) {
			t.Errorf("%s: %v, want no file", name, err)
		}
	}
	us := h.sessionUpdates()
	checkToolCallsEnd(t, us)
	cards := mergeToolCalls(updatesOf(agentMsgs(t, h, 0), sid))
	for i, c := range []struct{ step [2]string }{{write}, {read}} {
		id := e2etest.CallID(0, i, c.step[0], c.step[1])
		first, ok := h.announced(id)
		if !ok {
			t.Fatalf("%s: no card", c.step[0])
		}
		// The early card names the first value: fine, since nothing runs.
		t.Logf("%s: first card %q, locations %+v", c.step[0], first.Title, first.Locations)
		final := cards[id]
		if final["title"] == `"`+first.Title+`"` {
			t.Errorf("%s: the card keeps the start title %s", c.step[0], final["title"])
		}
		want := `"Error: invalid arguments: duplicate key \"file_path\" in arguments"`
		if final["status"] != `"failed"` || final["rawOutput"] != want {
			t.Errorf("%s: final card %v, want failed with %s", c.step[0], final, want)
		}
		if locs, ok := final["locations"]; ok && locs != "[]" {
			t.Errorf("%s: the card ends pointing at %s, a file never opened", c.step[0], locs)
		}
		for _, u := range cardsOf(us, id) {
			if u.Status == acp.StatusFailed && !strings.Contains(strings.Join(contentTexts(u.Content), "\n"), `duplicate key "file_path" in arguments`) {
				t.Errorf("%s: failed card's content %+v does not say why", c.step[0], u.Content)
			}
		}
	}
}
