package session

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTitleFile: every Title a Log appends is copied to the log's title
// file, which List reads (wherever the Title is in the log); Delete
// removes it; SyncTitleFile brings it in line with the log.
func TestTitleFile(t *testing.T) {
	root, cwd := t.TempDir(), "/project"
	path := LogPath(root, cwd, "s1")
	l := NewLog(path, NewHeader("s1", cwd, 1))
	evs := []Data{TurnStart{Turn: 1}, Title{Title: "first line"}, UserMessage{Turn: 1}, TurnEnd{Turn: 1, Reason: EndTurn}}
	for i := 0; i < 20; i++ { // push the next title far past the head
		evs = append(evs, ContextMessage{Turn: 1, Text: "padding"})
	}
	evs = append(evs, Title{Title: "From the model", Source: TitleFromModel})
	for i, d := range evs {
		if err := l.Append(Event{Seq: int64(i), Time: 1, Data: d}); err != nil {
			t.Fatal(err)
		}
	}
	if got, ok := ReadTitleFile(path); !ok || got != (Title{Title: "From the model", Source: TitleFromModel}) {
		t.Errorf("title file %+v, %v", got, ok)
	}
	if st, err := os.Stat(TitlePath(path)); err != nil || st.Mode().Perm() != filePerm {
		t.Errorf("title file mode %v, %v", st, err)
	}
	infos, err := List(root, cwd)
	if err != nil || len(infos) != 1 || infos[0].Title != "From the model" {
		t.Fatalf("List = %+v, %v", infos, err)
	}
	// The log's head still has the first title: without the file, List
	// falls back to it.
	os.Remove(TitlePath(path))
	if infos, _ := List(root, cwd); infos[0].Title != "first line" {
		t.Errorf("without the title file: %q", infos[0].Title)
	}
	// SyncTitleFile: written when missing or different, removed when the
	// log has no title, untouched when equal.
	if err := SyncTitleFile(path, Title{Title: "From the model", Source: TitleFromModel}, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := ReadTitleFile(path); got.Title != "From the model" {
		t.Errorf("after sync %+v", got)
	}
	if err := SyncTitleFile(path, Title{}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(TitlePath(path)); !os.IsNotExist(err) {
		t.Errorf("the title file of a log without a title stayed: %v", err)
	}
	if err := l.Append(Event{Seq: int64(len(evs)), Time: 1, Data: Title{Title: "Mine", Source: TitleFromUser}}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// A bad title file is ignored.
	os.WriteFile(TitlePath(path), []byte("not json"), 0o600)
	if _, ok := ReadTitleFile(path); ok {
		t.Error("a bad title file was read")
	}
	if infos, _ := List(root, cwd); infos[0].Title != "first line" {
		t.Errorf("with a bad title file: %q", infos[0].Title)
	}
	WriteTitleFile(path, Title{Title: "Mine", Source: TitleFromUser})
	if err := Delete(path); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
	if len(left) != 0 {
		t.Errorf("left after Delete: %q", left)
	}
}

// TestLastTitle: the last Title wins; HasUserTitle sees a user's title
// anywhere.
func TestLastTitle(t *testing.T) {
	evs := []Event{{Data: Title{Title: "a"}}, {Data: Title{Title: "b", Source: TitleFromUser}}, {Data: Title{Title: "c", Source: TitleFromModel}}, {Data: TurnStart{}}}
	if got, ok := LastTitle(evs); !ok || got.Title != "c" {
		t.Errorf("LastTitle = %+v, %v", got, ok)
	}
	if !HasUserTitle(evs) || HasUserTitle(evs[2:]) {
		t.Error("HasUserTitle")
	}
	if _, ok := LastTitle(nil); ok {
		t.Error("a title in no events")
	}
}
