package session

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSidecarOf: the companions of a log are recognised by name, and
// nothing else is.
func TestSidecarOf(t *testing.T) {
	for n, want := range map[string]string{
		"a.jsonl.lock": "a.jsonl", "a.jsonl.title": "a.jsonl", "a.jsonl.1700000000000.bak": "a.jsonl",
		".a.jsonl.tmp-0a1b": "a.jsonl", ".a.jsonl.title.tmp-123": "a.jsonl",
	} {
		if got, ok := sidecarOf(n); !ok || got != want {
			t.Errorf("sidecarOf(%q) = %q, %v; want %q", n, got, ok, want)
		}
	}
	for _, n := range []string{"a.jsonl", "notes.txt", "a.lock", "a.jsonl.x.bak", ".hidden", "x.title"} {
		if got, ok := sidecarOf(n); ok {
			t.Errorf("sidecarOf(%q) = %q, want none", n, got)
		}
	}
}

// TestSweep: the companions of a log that is gone (a delete killed after
// removing the log) are removed at the next start; those of a live log,
// of a log whose lock another open holds (a new session before its first
// line), and foreign files stay.
func TestSweep(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "cwd-0123456789ab")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(names ...string) {
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("gone.jsonl.lock", "gone.jsonl.title", ".gone.jsonl.title.tmp-1", "gone.jsonl.1700000000000.bak",
		"live.jsonl", "live.jsonl.lock", "live.jsonl.title", "held.jsonl.title", "README")
	held, err := Acquire(filepath.Join(dir, "held.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	n, err := Sweep(root)
	if err != nil || n != 4 {
		t.Errorf("Sweep = %d, %v; want 4 removed", n, err)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{"README", "held.jsonl.lock", "held.jsonl.title", "live.jsonl", "live.jsonl.lock", "live.jsonl.title"}
	if !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
	if n, err := Sweep(filepath.Join(root, "missing")); n != 0 || err != nil {
		t.Errorf("a missing root: %d, %v", n, err)
	}
}
