package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// TestParallelOutsideReadsAskOnce: two reads of one file outside the
// project in one model response (they run in parallel) ask the user
// once: the "Always allow" given to the first covers the second, and
// both read the file.
func TestParallelOutsideReadsAskOnce(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(outside, []byte("outside text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := [2]string{"read", `{"file_path":"` + outside + `"}`}
	f, mb := scriptedModel(t, e2etest.ToolCalls(read, read), e2etest.Text(nil, []string{"Read twice."}, "stop"))
	h := newHarness(t, harnessOpts{model: f.client("k"), mode: "default"})
	pc := &permissionClient{outcome: "allow-always"}
	h.client.OnRequest = pc.handle
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "read it twice"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if n := pc.count(); n != 1 {
		t.Errorf("asked %d times, want 1", n)
	}
	if got := finalStatuses(h.sessionUpdates()); got != "completed,completed" {
		t.Errorf("final statuses %s, want completed,completed", got)
	}
	tools := 0
	for _, m := range messagesOf(t, mb.body(2)) {
		if m["role"] == "tool" {
			tools++
			if !strings.Contains(messageText(m), "outside text") {
				t.Errorf("tool result %q, want the file's text", messageText(m))
			}
		}
	}
	if tools != 2 {
		t.Errorf("%d tool results in the second request, want 2", tools)
	}
}
