package session

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
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

// TestSweepIndexTemps: a temporary file of the list index that a crash
// left is removed once it is older than staleTemp; a fresh one, which
// another process may be about to rename, and the index itself stay.
func TestSweepIndexTemps(t *testing.T) {
	root := t.TempDir()
	old, fresh := filepath.Join(root, ".list-index.tmp-111"), filepath.Join(root, ".list-index.tmp-222")
	for _, p := range []string{old, fresh, filepath.Join(root, IndexFile)} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-2 * staleTemp)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	if n, err := Sweep(root); n != 1 || err != nil {
		t.Errorf("Sweep = %d, %v; want 1 removed", n, err)
	}
	entries, _ := os.ReadDir(root)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{IndexFile, ".list-index.tmp-222"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

// TestReplaceFile: the new content replaces the old whole, mode 0600,
// and no temporary file stays behind.
func TestReplaceFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.jsonl.title")
	for _, durable := range []bool{false, true} {
		want := fmt.Sprintf("content %v\n", durable)
		if err := replaceFile(p, []byte(want), durable); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		st, _ := os.Stat(p)
		if err != nil || string(b) != want || st.Mode().Perm() != 0o600 {
			t.Errorf("durable=%v: %q, %v, mode %v", durable, b, err, st.Mode())
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the folder, want 1", len(entries))
	}
}
