package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
)

// TestStartSweepsLeftovers: the companions of a log a killed delete
// removed are swept after start-up (in the background; Close waits for
// the sweep), and a live log keeps its own.
func TestStartSweepsLeftovers(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, "proj-0123456789ab")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"gone.jsonl.lock", "gone.jsonl.title", "live.jsonl", "live.jsonl.title"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := server.New(server.Options{Client: llm.NewReplay(t.TempDir()), StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{"live.jsonl", "live.jsonl.title"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}
