package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
)

// TestStartSweepsLeftovers: the companions of a log a killed delete
// removed are swept once SweepAfter has passed since start-up (in the
// background; Close waits for a sweep under way and skips one not
// started), and a live log keeps its own.
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
	// Close skips a sweep whose time has not come.
	srv, err := server.New(server.Options{Client: llm.NewReplay(t.TempDir()), StateDir: state, SweepAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	if left := names(t, dir); len(left) != 4 {
		t.Errorf("swept before its time: left %v", left)
	}
	srv, err = server.New(server.Options{Client: llm.NewReplay(t.TempDir()), StateDir: state, SweepAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	if left, want := names(t, dir), []string{"live.jsonl", "live.jsonl.title"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

// names lists dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
