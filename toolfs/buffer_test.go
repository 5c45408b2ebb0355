package toolfs

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// wantBody checks that a read's text holds every one of want and, when
// note is "", no buffer note at all.
func wantBody(t *testing.T, r tools.Result, note string, want ...string) {
	t.Helper()
	got := text(r)
	for _, w := range append(want, note) {
		if !strings.Contains(got, w) {
			t.Errorf("read %q lacks %q", got, w)
		}
	}
	if note == "" {
		for _, n := range []string{bufferNote(bufUnsaved, true), bufferNote(bufLagging, true), bufferNote(bufConflict, true), bufferNote(bufConflict, false), peekReadNote} {
			if strings.Contains(got, n) {
				t.Errorf("read %q has the note %q", got, n)
			}
		}
	}
}

// noWrites fails when the editor was asked to write.
func noWrites(t *testing.T, calls []string) {
	t.Helper()
	for _, c := range calls {
		if strings.HasPrefix(c, "write") {
			t.Errorf("the editor was asked to write: %q", calls)
		}
	}
}

// TestEditorLaggingBuffer: the case. read, then a shell command
// changes the disk while the editor's buffer still holds the old text:
// an edit without a new read is stale (it never sees the old buffer);
// the read shows the disk, with a note; the edit applies to the disk's
// text and goes through the editor, whose buffer catches up. The disk
// never gets the old text back.
func TestEditorLaggingBuffer(t *testing.T) {
	e := newEnv(t)
	fe := withEditor(e, newFakeEditor())
	fe.lag = true
	p := e.put("a.txt", "x=1\ny=1\n")
	wantBody(t, e.ok("read", map[string]any{"file_path": "a.txt"}), "", "1: x=1")
	e.put("a.txt", "x=2\ny=1\n") // sed -i s/x=1/x=2/ a.txt
	for _, old := range []string{"x=1", "x=2", "y=1"} {
		e.fail("edit", map[string]any{"file_path": "a.txt", "old_string": old, "new_string": "z"},
			CodeStaleVersion, `cannot edit "`+p+`": file changed since it was read`)
	}
	wantBody(t, e.ok("read", map[string]any{"file_path": "a.txt"}), bufferNote(bufLagging, true), "1: x=2")
	// A second read while the buffer still lags shows the disk again.
	wantBody(t, e.ok("read", map[string]any{"file_path": "a.txt"}), bufferNote(bufLagging, true), "1: x=2")
	noWrites(t, fe.took())
	r := e.ok("edit", map[string]any{"file_path": "a.txt", "old_string": "y=1", "new_string": "y=2"})
	if got := e.get("a.txt"); got != "x=2\ny=2\n" {
		t.Errorf("disk %q, want the shell's change and the edit", got)
	}
	if b, _ := fe.buffer(p); b != "x=2\ny=2\n" {
		t.Errorf("buffer %q did not catch up", b)
	}
	if got := fe.took(); len(got) != 3 || got[1] != "write "+p {
		t.Errorf("editor calls %q, want read, write, read-back", got)
	}
	wantDiffs(t, r, p, [][2]*string{{strp("x=2\ny=1"), strp("x=2\ny=2")}}, []int{2})
	wantBody(t, e.ok("read", map[string]any{"file_path": "a.txt"}), "", "2: y=2")

	// The editor reloads between the read and the edit: the edit still
	// applies to what the read showed.
	e.put("a.txt", "x=3\ny=2\n")
	wantBody(t, e.ok("read", map[string]any{"file_path": "a.txt"}), bufferNote(bufLagging, true), "1: x=3")
	fe.setBuffer(p, "x=3\ny=2\n")
	e.ok("edit", map[string]any{"file_path": "a.txt", "old_string": "x=3", "new_string": "x=4"})
	if got := e.get("a.txt"); got != "x=4\ny=2\n" {
		t.Errorf("disk %q", got)
	}

	// The disk moves again after a lagging read: stale, nothing written.
	e.put("a.txt", "x=5\ny=2\n")
	e.ok("read", map[string]any{"file_path": "a.txt"})
	e.put("a.txt", "x=6\ny=2\n")
	fe.took()
	e.fail("write", map[string]any{"file_path": "a.txt", "content": "new\n"},
		CodeStaleVersion, `cannot write "`+p+`": file changed since it was read`)
	noWrites(t, fe.took())
	if got := e.get("a.txt"); got != "x=6\ny=2\n" {
		t.Errorf("disk %q", got)
	}
}

// TestEditorLaggingBufferTyped: after a read that found the buffer
// lagging (the disk has a shell's change the buffer lacks), the user
// types into that stale buffer: it now differs from the disk in the
// shell's change and in the typing, so saving it would undo the shell's
// change. The read shows the buffer as a conflict, and the edit waits
// for a second read, which is told the same, instead of saving the stale
// buffer at once as the user's unsaved work.
func TestEditorLaggingBufferTyped(t *testing.T) {
	e := newEnv(t)
	fe := withEditor(e, newFakeEditor())
	fe.lag = true
	p := e.put("t.txt", "x=1\ny=1\n")
	e.ok("read", map[string]any{"file_path": "t.txt"})
	e.put("t.txt", "x=2\ny=1\n") // sed -i s/x=1/x=2/ t.txt
	wantBody(t, e.ok("read", map[string]any{"file_path": "t.txt"}), bufferNote(bufLagging, true), "1: x=2")
	fe.setBuffer(p, "x=1\ny=1\nz=typed\n")
	wantBody(t, e.ok("read", map[string]any{"file_path": "t.txt"}), bufferNote(bufConflict, false), "3: z=typed")
	e.fail("edit", map[string]any{"file_path": "t.txt", "old_string": "y=1", "new_string": "y=2"}, CodeStaleVersion,
		`cannot edit "`+p+`": the editor's buffer and the file on disk both changed since it was read; read it again first`)
	noWrites(t, fe.took())
	if got := e.get("t.txt"); got != "x=2\ny=1\n" {
		t.Errorf("disk %q, want the shell's change", got)
	}
}

// TestEditorLaggingBufferCRLF: the case with a CRLF file and an
// editor that holds its buffers with "\n" line endings (Zed does): the
// buffer differs from the disk only in line endings, which is no unsaved
// change, so the shell's change is seen as a lag and the edit keeps it.
func TestEditorLaggingBufferCRLF(t *testing.T) {
	e := newEnv(t)
	fe := withEditor(e, newFakeEditor())
	fe.lag, fe.lf = true, true
	p := e.put("w.txt", "x=1\r\ny=1\r\n")
	wantBody(t, e.ok("read", map[string]any{"file_path": "w.txt"}), "", "1: x=1")
	e.put("w.txt", "x=2\r\ny=1\r\n") // sed -i s/x=1/x=2/ w.txt
	wantBody(t, e.ok("read", map[string]any{"file_path": "w.txt"}), bufferNote(bufLagging, true), "1: x=2")
	e.ok("edit", map[string]any{"file_path": "w.txt", "old_string": "y=1", "new_string": "y=2"})
	if got := e.get("w.txt"); got != "x=2\r\ny=2\r\n" {
		t.Errorf("disk %q, want the shell's change and the edit", got)
	}
	if b, _ := fe.buffer(p); b != "x=2\ny=2\n" {
		t.Errorf("buffer %q did not catch up", b)
	}
	wantBody(t, e.ok("read", map[string]any{"file_path": "w.txt"}), "", "2: y=2")
	e.ok("edit", map[string]any{"file_path": "w.txt", "old_string": "x=2", "new_string": "x=3"})
	if got := e.get("w.txt"); got != "x=3\r\ny=2\r\n" {
		t.Errorf("disk %q after an edit of the saved file", got)
	}
	// A read-only editor with the same text is no unsaved change either.
	fe.canWrite = false
	e2 := e.other()
	tools.SetEditor(e2.sess, fe)
	wantBody(t, e2.ok("read", map[string]any{"file_path": "w.txt"}), "", "1: x=3")
}

// TestEditorUnsavedBuffer: a buffer with unsaved changes of its own is
// shown, with a note that the disk differs; the edit applies to it and
// saves it; the user typing again makes the next edit stale.
func TestEditorUnsavedBuffer(t *testing.T) {
	e := newEnv(t)
	fe := withEditor(e, newFakeEditor())
	fe.lag = true
	p := e.put("n.txt", "one\n")
	fe.setBuffer(p, "one\ntwo (unsaved)\n")
	wantBody(t, e.ok("read", map[string]any{"file_path": "n.txt"}), bufferNote(bufUnsaved, false), "2: two (unsaved)")
	wantBody(t, e.ok("read", map[string]any{"file_path": "n.txt"}), bufferNote(bufUnsaved, true), "2: two (unsaved)")
	e.ok("edit", map[string]any{"file_path": "n.txt", "old_string": "two (unsaved)", "new_string": "two"})
	if got := e.get("n.txt"); got != "one\ntwo\n" {
		t.Errorf("disk %q", got)
	}
	wantBody(t, e.ok("read", map[string]any{"file_path": "n.txt"}), "", "2: two")
	fe.setBuffer(p, "one\ntwo\nthree (typed)\n")
	fe.took()
	e.fail("edit", map[string]any{"file_path": "n.txt", "old_string": "one", "new_string": "1"},
		CodeStaleVersion, `cannot edit "`+p+`": file changed since it was read`)
	noWrites(t, fe.took())
	// The user saves the buffer after a read: the edit goes on.
	wantBody(t, e.ok("read", map[string]any{"file_path": "n.txt"}), bufferNote(bufUnsaved, true), "3: three (typed)")
	if err := os.WriteFile(p, []byte("one\ntwo\nthree (typed)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("edit", map[string]any{"file_path": "n.txt", "old_string": "one", "new_string": "1"})
	if got := e.get("n.txt"); got != "1\ntwo\nthree (typed)\n" {
		t.Errorf("disk %q", got)
	}
}

// TestEditorBothChanged: the buffer has unsaved changes and the disk
// changes too: the read shows the buffer and says so, and edits are
// refused, touching nothing, until the model reads again.
func TestEditorBothChanged(t *testing.T) {
	e := newEnv(t)
	fe := withEditor(e, newFakeEditor())
	fe.lag = true
	p := e.put("b.txt", "base\n")
	fe.setBuffer(p, "base\nmine\n")
	e.ok("read", map[string]any{"file_path": "b.txt"})
	e.put("b.txt", "base\nshell\n")
	wantBody(t, e.ok("read", map[string]any{"file_path": "b.txt"}), bufferNote(bufConflict, true), "2: mine")
	conflict := `cannot edit "` + p + `": the editor's buffer and the file on disk both changed since it was read; read it again first`
	e.fail("edit", map[string]any{"file_path": "b.txt", "old_string": "mine", "new_string": "ours"}, CodeStaleVersion, conflict)
	e.fail("write", map[string]any{"file_path": "b.txt", "content": "x\n"}, CodeStaleVersion,
		`cannot write "`+p+`": the editor's buffer and the file on disk both changed since it was read; read it again first`)
	noWrites(t, fe.took())
	if got := e.get("b.txt"); got != "base\nshell\n" {
		t.Errorf("disk %q", got)
	}
	if b, _ := fe.buffer(p); b != "base\nmine\n" {
		t.Errorf("buffer %q", b)
	}
	// Both change after a read that showed the buffer: the same.
	fe.setBuffer(p, "base\nmine, more\n")
	e.put("b.txt", "base\nshell again\n")
	e.fail("edit", map[string]any{"file_path": "b.txt", "old_string": "mine", "new_string": "ours"}, CodeStaleVersion, conflict)
	// The re-read ends the refusal: the buffer, as shown, is edited.
	wantBody(t, e.ok("read", map[string]any{"file_path": "b.txt"}), bufferNote(bufConflict, true), "2: mine, more")
	wantBody(t, e.ok("read", map[string]any{"file_path": "b.txt"}), bufferNote(bufUnsaved, true), "2: mine, more")
	e.ok("edit", map[string]any{"file_path": "b.txt", "old_string": "mine, more", "new_string": "ours"})
	if got := e.get("b.txt"); got != "base\nours\n" {
		t.Errorf("disk %q", got)
	}
}

// TestEditorFirstLookAfterCommand: at a first look, a buffer that
// differs from a file changed since the session's first command may be
// the stale one: edits wait for a second read. Without a command (or
// for a file older than it) the buffer is the user's unsaved work.
func TestEditorFirstLookAfterCommand(t *testing.T) {
	e := newEnv(t)
	fe := withEditor(e, newFakeEditor())
	old := time.Now().Add(-time.Hour)
	p := e.put("old.txt", "disk\n")
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	q := e.put("new.txt", "disk\n")
	fe.setBuffer(p, "buffer\n")
	fe.setBuffer(q, "buffer\n")
	// No command yet: the buffer is unsaved work.
	wantBody(t, e.ok("read", map[string]any{"file_path": "new.txt"}), bufferNote(bufUnsaved, false), "1: buffer")

	e2 := e.other()
	fe2 := withEditor(e2, newFakeEditor())
	fe2.setBuffer(p, "buffer\n")
	fe2.setBuffer(q, "buffer\n")
	ran := false
	shell := tools.Tool{Name: "sh", Parameters: []byte(`{"type":"object"}`), Class: tools.ClassExecute, Execute: func(context.Context, *tools.Exec) (tools.Output, error) {
		ran = true
		return tools.Output{}, nil
	}}
	reg := tools.NewRegistry()
	if err := reg.Register(shell); err != nil {
		t.Fatal(err)
	}
	reg.Use(WatchCommands(reg.Get))
	if r := reg.Execute(t.Context(), &tools.Exec{CallID: "c", Name: "sh", Session: e2.sess}); r.IsError || !ran {
		t.Fatalf("sh: %s", text(r))
	}
	if err := os.WriteFile(q, []byte("disk, by the command\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantBody(t, e2.ok("read", map[string]any{"file_path": "new.txt"}), bufferNote(bufConflict, false), "1: buffer")
	e2.fail("edit", map[string]any{"file_path": "new.txt", "old_string": "buffer", "new_string": "b"}, CodeStaleVersion,
		`cannot edit "`+q+`": the editor's buffer and the file on disk both changed since it was read; read it again first`)
	if got := e2.get("new.txt"); got != "disk, by the command\n" {
		t.Errorf("disk %q", got)
	}
	// The editor reloads: the second read sees one text.
	fe2.setBuffer(q, "disk, by the command\n")
	wantBody(t, e2.ok("read", map[string]any{"file_path": "new.txt"}), "", "1: disk, by the command")
	// A file older than the command: its buffer is unsaved work.
	if recentDisk(e2.sess, statOf(t, p)) {
		t.Error("a file changed an hour before the command is recent")
	}
	wantBody(t, e2.ok("read", map[string]any{"file_path": "old.txt"}), bufferNote(bufUnsaved, false), "1: buffer")
	e2.ok("edit", map[string]any{"file_path": "old.txt", "old_string": "buffer", "new_string": "edited"})
	if got := e2.get("old.txt"); got != "edited\n" {
		t.Errorf("disk %q", got)
	}
	// A read-only tool does not count as a command.
	e3 := e.other()
	withEditor(e3, newFakeEditor()).setBuffer(q, "buffer\n")
	if r := e.reg.Execute(t.Context(), &tools.Exec{CallID: "r", Name: "read", Session: e3.sess, Args: []byte(`{"file_path":"old.txt"}`)}); r.IsError {
		t.Fatal(text(r))
	}
	if recentDisk(e3.sess, statOf(t, q)) {
		t.Error("a session that ran no command reports a recent change")
	}
	if !recentDisk(e2.sess, statOf(t, q)) {
		t.Error("a file changed after the command is not recent")
	}
}

func statOf(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// TestEditorOneSource: a client that can read but not write gets reads,
// writes and edits on disk, and the model is told when the editor's
// buffer differs; a client that can write but not read gets the disk
// for everything and is never asked.
func TestEditorOneSource(t *testing.T) {
	e := newEnv(t)
	fe := withEditor(e, newFakeEditor())
	fe.canWrite = false
	p := e.put("r.txt", "disk\n")
	fe.setBuffer(p, "disk\nunsaved\n")
	wantBody(t, e.ok("read", map[string]any{"file_path": "r.txt"}), peekReadNote, "1: disk\n\n(End of file - total 1 lines)")
	r := e.ok("edit", map[string]any{"file_path": "r.txt", "old_string": "disk", "new_string": "DISK"})
	if !strings.Contains(text(r), peekWriteNote) {
		t.Errorf("edit result %q lacks the note", text(r))
	}
	if got := e.get("r.txt"); got != "DISK\n" {
		t.Errorf("disk %q", got)
	}
	r = e.ok("write", map[string]any{"file_path": "r.txt", "content": "W\n"})
	if !strings.Contains(text(r), peekWriteNote) {
		t.Errorf("write result %q lacks the note", text(r))
	}
	noWrites(t, fe.took())
	// A buffer equal to the disk: no note.
	fe.setBuffer(p, "W\n")
	wantBody(t, e.ok("read", map[string]any{"file_path": "r.txt"}), "", "1: W")
	if r := e.ok("edit", map[string]any{"file_path": "r.txt", "old_string": "W", "new_string": "V"}); strings.Contains(text(r), peekWriteNote) {
		t.Errorf("edit of a clean buffer has the note: %q", text(r))
	}

	fe.took()
	fe.canRead, fe.canWrite = false, true
	e2 := e.other()
	tools.SetEditor(e2.sess, fe)
	fe.setBuffer(p, "ignored\n")
	wantBody(t, e2.ok("read", map[string]any{"file_path": "r.txt"}), "", "1: V")
	e2.ok("edit", map[string]any{"file_path": "r.txt", "old_string": "V", "new_string": "U"})
	e2.ok("write", map[string]any{"file_path": "w.txt", "content": "new\n"})
	if got := fe.took(); len(got) != 0 {
		t.Errorf("a client that cannot read was asked %q", got)
	}
	if got := e.get("r.txt") + e.get("w.txt"); got != "U\nnew\n" {
		t.Errorf("disk %q", got)
	}
}

// TestJudge: the table of bufferState, against a previous look.
func TestJudge(t *testing.T) {
	const a, b, c, d = 1, 2, 3, 4
	clean := version{sum: a, disk: a, buf: a, hasBuf: true, state: bufClean}
	unsaved := version{sum: b, disk: a, buf: b, hasBuf: true, state: bufUnsaved}
	lagging := version{sum: b, disk: b, buf: a, hasBuf: true, state: bufLagging}
	onDisk := version{sum: a, disk: a}
	cases := []struct {
		name      string
		prev      version
		seen      bool
		disk, buf uint64
		recent    bool
		want      bufferState
	}{
		{"same", clean, true, c, c, false, bufClean},
		{"first look differs", version{}, false, a, b, false, bufUnsaved},
		{"first look after a command", version{}, false, a, b, true, bufConflict},
		{"disk moved under a clean buffer", clean, true, b, a, false, bufLagging},
		{"disk moved, disk look before", onDisk, true, b, a, false, bufLagging},
		{"buffer moved", clean, true, a, b, false, bufUnsaved},
		{"both moved", clean, true, b, c, false, bufConflict},
		{"disk moved under unsaved changes", unsaved, true, c, b, false, bufConflict},
		{"unsaved, nothing moved", unsaved, true, a, b, false, bufUnsaved},
		{"lagging, nothing moved", lagging, true, b, a, false, bufLagging},
		{"lagging, disk moved again", lagging, true, c, a, false, bufLagging},
		{"lagging, user typed", lagging, true, b, d, false, bufConflict},
		{"conflict re-read", version{sum: c, disk: b, buf: c, hasBuf: true, state: bufConflict}, true, b, c, false, bufUnsaved},
	}
	for _, tc := range cases {
		if got := judge(tc.prev, tc.seen, tc.disk, tc.buf, tc.disk == tc.buf, tc.recent); got != tc.want {
			t.Errorf("%s: judge = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestSameText: a buffer holds a file's text when only the file's line
// endings read as "\n" differ.
func TestSameText(t *testing.T) {
	cases := []struct {
		buf, disk string
		want      bool
	}{
		{"a\nb\n", "a\nb\n", true},
		{"a\r\nb", "a\r\nb", true},
		{"a\nb\n", "a\r\nb\r\n", true},
		{"a\nb\n", "a\rb\r", true},
		{"a\n\nb", "a\r\r\nb", true},
		{"", "", true},
		{"a\nb", "a\r\nb\r\n", false},
		{"a\nb\n\n", "a\r\nb\r\n", false},
		{"a\r\nb\n", "a\r\nb\r\n", false},
		{"a\nc\n", "a\r\nb\r\n", false},
		{"\n", "\r\n\n", false},
	}
	for _, c := range cases {
		if got := sameText([]byte(c.buf), []byte(c.disk)); got != c.want {
			t.Errorf("sameText(%q, %q) = %v, want %v", c.buf, c.disk, got, c.want)
		}
	}
}
