package session

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestLogCreate: Create writes the header at once and keeps nothing
// open; the session is listed and readable; the first Append reopens
// the file and continues it; a file another writer extended meanwhile
// is not appended to.
func TestLogCreate(t *testing.T) {
	root := t.TempDir()
	path := LogPath(root, "/w", "sess_c")
	log := NewLog(path, NewHeader("sess_c", "/w", 1700000000000))
	if err := log.Create(); err != nil {
		t.Fatal(err)
	}
	if err := log.Create(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if want := `{"type":"session","version":0,"id":"sess_c","createdAt":1700000000000,"cwd":"/w"}` + "\n"; err != nil || string(data) != want {
		t.Fatalf("after Create: %q, %v", data, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %o", fi.Mode().Perm())
	}
	if log.f != nil {
		t.Error("Create left the file open")
	}
	infos, err := List(root, "")
	if err != nil || len(infos) != 1 || infos[0].ID != "sess_c" || infos[0].Cwd != "/w" {
		t.Errorf("List = %+v, %v", infos, err)
	}
	ld, err := ReadLog(path)
	if err != nil || len(ld.Events) != 0 || ld.NeedsRepair() {
		t.Fatalf("ReadLog = %+v, %v", ld, err)
	}
	events := sampleEvents(5)
	for _, ev := range events {
		if err := log.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	ld, err = ReadLog(path)
	if err != nil || len(ld.Events) < len(events) || !reflect.DeepEqual(ld.Events[:len(events)], events) {
		t.Fatalf("read back %d events, %v", len(ld.Events), err)
	}

	// Another process loads the created session and appends to it: this
	// Log must not append after it.
	path2 := LogPath(root, "/w", "sess_d")
	mine := NewLog(path2, NewHeader("sess_d", "/w", 1))
	if err := mine.Create(); err != nil {
		t.Fatal(err)
	}
	ld, err = ReadLog(path2)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := ld.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := theirs.Append(events[0]); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	before, _ := os.ReadFile(path2)
	if err := mine.Append(events[0]); !errors.Is(err, ErrContinued) {
		t.Errorf("Append after another writer: %v", err)
	}
	if after, _ := os.ReadFile(path2); string(after) != string(before) {
		t.Error("the other process's log was changed")
	}

	// Claim: refused while another holds the lock (not sticky), then it
	// reopens; after another process continued the log, refused for good.
	path3 := LogPath(root, "/w", "sess_e")
	third := NewLog(path3, NewHeader("sess_e", "/w", 1))
	if err := third.Create(); err != nil {
		t.Fatal(err)
	}
	holder, err := Acquire(path3)
	if err != nil {
		t.Fatal(err)
	}
	var le *LockedError
	if err := third.Claim(); !errors.As(err, &le) || third.Err() != nil {
		t.Errorf("Claim while held: %v (sticky %v)", err, third.Err())
	}
	holder.Release()
	if err := third.Claim(); err != nil || third.f == nil {
		t.Fatalf("Claim once released: %v", err)
	}
	if err := third.Append(events[0]); err != nil {
		t.Fatal(err)
	}
	third.Close()
	if err := mine.Claim(); !errors.Is(err, ErrContinued) || !errors.Is(mine.Err(), ErrContinued) {
		t.Errorf("Claim of a continued log: %v (sticky %v)", err, mine.Err())
	}

	// A state directory that cannot be written: a sticky error.
	bad := NewLog(filepath.Join(path, "below-a-file", "x.jsonl"), NewHeader("x", "/w", 1))
	if err := bad.Create(); err == nil || bad.Err() == nil {
		t.Errorf("Create under a file: %v", err)
	}
}
