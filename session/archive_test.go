package session

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestArchiveMark: SetArchived sets and removes the mark beside the log
// (twice is fine both ways, owner-only), IsArchived sees it, a missing
// log is ErrNotFound, the log is not touched, and Delete removes the mark
// with the log.
func TestArchiveMark(t *testing.T) {
	path := writeLog(t, t.TempDir(), sampleEvents(3))
	before, _ := os.ReadFile(path)
	if IsArchived(path) {
		t.Fatal("a new log is archived")
	}
	for range 2 {
		if err := SetArchived(path, true); err != nil || !IsArchived(path) {
			t.Fatalf("SetArchived(true) = %v, archived %v", err, IsArchived(path))
		}
	}
	if st, err := os.Stat(ArchivedPath(path)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the mark: %v %v", st.Mode(), err)
	}
	for range 2 {
		if err := SetArchived(path, false); err != nil || IsArchived(path) {
			t.Fatalf("SetArchived(false) = %v, archived %v", err, IsArchived(path))
		}
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("archiving changed the log")
	}
	if err := SetArchived(filepath.Join(filepath.Dir(path), "sess_9.jsonl"), true); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetArchived of a missing log = %v", err)
	}
	if err := SetArchived(path, true); err != nil {
		t.Fatal(err)
	}
	if err := Delete(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(ArchivedPath(path)); !os.IsNotExist(err) {
		t.Errorf("Delete left the archive mark: %v", err)
	}
}
