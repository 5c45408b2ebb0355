package toolfs

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// fakeEditor is a client editor: it holds unsaved buffers, reads a file
// without a buffer from disk, and on a write reformats the text, saves it
// to disk and drops the buffer (the buffer is then the saved file). With
// lag, a file read is opened as a buffer that never reloads from disk
// (an editor that has not noticed a change on disk yet); a write then
// leaves the buffer holding what it saved.
type fakeEditor struct {
	mu        sync.Mutex
	canRead   bool
	canWrite  bool
	lag       bool
	lf        bool // buffers hold "\n" line endings; a CRLF file is saved as CRLF
	crlf      map[string]bool
	buffers   map[string]string
	reformat  func(string) string
	failWrite error
	calls     []string // "read <path>" / "write <path>"
}

func newFakeEditor() *fakeEditor {
	return &fakeEditor{canRead: true, canWrite: true, buffers: map[string]string{}, crlf: map[string]bool{}}
}

func (f *fakeEditor) CanRead() bool  { return f.canRead }
func (f *fakeEditor) CanWrite() bool { return f.canWrite }

func (f *fakeEditor) ReadTextFile(_ context.Context, path string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "read "+path)
	if b, ok := f.buffers[path]; ok {
		return b, nil
	}
	data, err := os.ReadFile(path)
	text := string(data)
	if f.lf {
		// As Zed's buffers: "\r\n" and a lone "\r" read as "\n", the
		// file's style kept for saving.
		f.crlf[path] = strings.Contains(text, "\r\n")
		text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	}
	if err == nil && f.lag {
		f.buffers[path] = text
	}
	return text, err
}

// buffer returns the buffer of path ("", false when none is open).
func (f *fakeEditor) buffer(path string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.buffers[path]
	return b, ok
}

// setBuffer sets the buffer of path, as the user typing or the editor
// reloading would.
func (f *fakeEditor) setBuffer(path, text string) {
	f.mu.Lock()
	f.buffers[path] = text
	f.mu.Unlock()
}

func (f *fakeEditor) WriteTextFile(_ context.Context, path, content string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "write "+path)
	if f.failWrite != nil {
		return f.failWrite
	}
	if f.reformat != nil {
		content = f.reformat(content)
	}
	delete(f.buffers, path)
	saved := content
	if f.lf {
		content = strings.ReplaceAll(strings.ReplaceAll(content, "\r\n", "\n"), "\r", "\n")
		saved = content
		if f.crlf[path] {
			saved = strings.ReplaceAll(content, "\n", "\r\n")
		}
	}
	if f.lag {
		f.buffers[path] = content
	}
	return os.WriteFile(path, []byte(saved), 0o644)
}

func (f *fakeEditor) took() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

// withEditor gives e's session the editor fe.
func withEditor(e *env, fe *fakeEditor) *fakeEditor {
	tools.SetEditor(e.sess, fe)
	return fe
}

// TestEditorUnsavedBufferAndReformat: read and edit see the unsaved
// buffer; the editor's format-on-save is what the result card shows and
// what is recorded, so the next edit is not stale.
func TestEditorUnsavedBufferAndReformat(t *testing.T) {
	e := newEnv(t)
	fe := withEditor(e, newFakeEditor())
	// The editor strips trailing spaces on save.
	fe.reformat = func(s string) string {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimRight(l, " ")
		}
		return strings.Join(lines, "\n")
	}
	p := e.put("main.go", "package main\n\nfunc main() {}\n")
	fe.buffers[p] = "package main\n\n// unsaved comment\nfunc main() {}\n"
	r := e.ok("read", map[string]any{"file_path": "main.go"})
	if got := body(t, r); !strings.Contains(got, "3: // unsaved comment") {
		t.Errorf("read does not see the buffer: %q", got)
	}
	if got := fe.took(); len(got) != 1 || got[0] != "read "+p {
		t.Errorf("editor calls %q", got)
	}
	r = e.ok("edit", map[string]any{"file_path": "main.go", "old_string": "func main() {}", "new_string": "func main() {   \n\tprintln(1)   \n}"})
	want := "package main\n\n// unsaved comment\nfunc main() {\n\tprintln(1)\n}\n"
	if got := e.get("main.go"); got != want {
		t.Errorf("saved %q, want %q", got, want)
	}
	if got := fe.took(); len(got) != 3 || got[0] != "read "+p || got[1] != "write "+p || got[2] != "read "+p {
		t.Errorf("editor calls %q, want read, write, read-back", got)
	}
	// The card shows what was stored: no trailing spaces, on line 4.
	wantDiffs(t, r, p, [][2]*string{{strp("package main\n\n// unsaved comment\nfunc main() {}"), strp("package main\n\n// unsaved comment\nfunc main() {\n\tprintln(1)\n}")}}, []int{4})
	if !strings.Contains(text(r), reformatNote) {
		t.Errorf("the model is not told about the reformat: %q", text(r))
	}
	// The read-back is the observed version: the next edit is not stale.
	e.ok("edit", map[string]any{"file_path": "main.go", "old_string": "println(1)", "new_string": "println(2)"})
	if got := e.get("main.go"); !strings.Contains(got, "println(2)") {
		t.Errorf("second edit: %q", got)
	}
	// A write goes through the editor too; its hunks are against the buffer.
	fe.buffers[p] = "package main\n// buffer only\n"
	e.ok("read", map[string]any{"file_path": "main.go"})
	r = e.ok("write", map[string]any{"file_path": "main.go", "content": "package main\n// buffer only\nvar x = 1\n"})
	wantDiffs(t, r, p, [][2]*string{{strp("package main\n// buffer only"), strp("package main\n// buffer only\nvar x = 1")}}, []int{3})
	// Create through the editor, in a new directory.
	r = e.ok("write", map[string]any{"file_path": "pkg/new.go", "content": "package pkg   \n"})
	if got := e.get("pkg/new.go"); got != "package pkg\n" {
		t.Errorf("created %q", got)
	}
	if m := meta(t, r); m.Op != OpCreate || len(m.Diffs) != 1 || m.Diffs[0].NewText != "package pkg\n" || m.Diffs[0].OldText != nil {
		t.Errorf("create meta %+v (the stored text, reformatted)", m)
	}
}

// TestEditorDetectsChanges: a change made meanwhile, in the buffer or on
// disk behind the editor's back, is detected, not overwritten.
func TestEditorDetectsChanges(t *testing.T) {
	e := newEnv(t)
	fe := withEditor(e, newFakeEditor())
	p := e.put("a.txt", "one\n")
	e.ok("read", map[string]any{"file_path": "a.txt"})
	fe.buffers[p] = "one\ntyped by the user\n"
	e.fail("edit", map[string]any{"file_path": "a.txt", "old_string": "one", "new_string": "1"},
		CodeStaleVersion, `cannot edit "`+p+`": file changed since it was read`)
	e.ok("read", map[string]any{"file_path": "a.txt"})
	// A shell command changes the disk; the editor still shows the buffer.
	e.put("a.txt", "from the shell\n")
	e.fail("write", map[string]any{"file_path": "a.txt", "content": "x\n"},
		CodeStaleVersion, `cannot write "`+p+`": file changed since it was read`)
	if got := e.get("a.txt"); got != "from the shell\n" {
		t.Errorf("disk %q", got)
	}
	for _, c := range fe.took() {
		if strings.HasPrefix(c, "write") {
			t.Errorf("a stale call wrote through the editor: %q", c)
		}
	}
}

// TestEditorScope: files outside the cwd, of 10 MiB or more, or not text
// on disk never go through the editor; a client that cannot write gets
// reads only; an editor failure is an FS_IO_ERROR and changes nothing.
func TestEditorScope(t *testing.T) {
	e := newEnv(t)
	fe := withEditor(e, newFakeEditor())
	outside := t.TempDir() + "/out.txt"
	if err := os.WriteFile(outside, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("read", map[string]any{"file_path": outside})
	e.ok("edit", map[string]any{"file_path": outside, "old_string": "x", "new_string": "y"})
	e.put("big.txt", strings.Repeat("0123456789\n", StreamThreshold/11+1)+"END\n")
	e.ok("read", map[string]any{"file_path": "big.txt", "limit": 1})
	e.ok("edit", map[string]any{"file_path": "big.txt", "old_string": "END", "new_string": "FIN"})
	if got := fe.took(); len(got) != 0 {
		t.Errorf("the editor was used outside the cwd or for a big file: %q", got)
	}
	if got := e.get("big.txt"); !strings.HasSuffix(got, "\nFIN\n") {
		t.Errorf("big.txt ends %q", got[len(got)-10:])
	}
	p := e.put("bin.dat", "a\x00b")
	fe.buffers[p] = "looks like text"
	e.fail("read", map[string]any{"file_path": "bin.dat"}, CodeNotText, `cannot read "`+p+`": binary file`)
	if got := fe.took(); len(got) != 0 {
		t.Errorf("the editor was asked for a binary file: %q", got)
	}
	// Reads only: reads, writes and edits use the disk (the buffer is
	// only compared with it, TestEditorOneSource).
	fe.canWrite = false
	p = e.put("r.txt", "disk\n")
	e.ok("read", map[string]any{"file_path": "r.txt"})
	e.ok("edit", map[string]any{"file_path": "r.txt", "old_string": "disk", "new_string": "DISK"})
	if got := fe.took(); len(got) != 2 || got[0] != "read "+p || got[1] != "read "+p {
		t.Errorf("editor calls %q, want the two peeks only", got)
	}
	if got := e.get("r.txt"); got != "DISK\n" {
		t.Errorf("r.txt = %q", got)
	}
	fe.canWrite = true
	fe.failWrite = errors.New("buffer is read-only")
	e.ok("read", map[string]any{"file_path": "r.txt"})
	r := e.call("edit", map[string]any{"file_path": "r.txt", "old_string": "DISK", "new_string": "x"})
	if !r.IsError || r.Error == nil || r.Error.Code != CodeIO || text(r) != `Error: cannot edit "`+p+`": buffer is read-only` {
		t.Errorf("editor failure: %q %+v", text(r), r.Error)
	}
	if got := e.get("r.txt"); got != "DISK\n" {
		t.Errorf("r.txt = %q", got)
	}
}

// TestPreview: the preview of write and edit shows the hunks the call would
// apply to the file as the backend sees it (an unsaved buffer counts),
// changes nothing, and refuses what the call would refuse.
func TestPreview(t *testing.T) {
	e := newEnv(t)
	fe := withEditor(e, newFakeEditor())
	p := e.put("c.txt", "a\nb\nc\n")
	fe.buffers[p] = "a\nB\nc\n"
	tool, _ := e.reg.Get("edit")
	ex := &tools.Exec{CallID: "p", Name: "edit", Session: e.sess, Args: []byte(`{"file_path":"c.txt","old_string":"B","new_string":"beta"}`)}
	if _, err := tool.Preview(t.Context(), ex); err == nil || !strings.Contains(err.Error(), "edit requires reading") {
		t.Errorf("preview before a read: %v", err)
	}
	e.ok("read", map[string]any{"file_path": "c.txt"})
	v, err := tool.Preview(t.Context(), ex)
	if err != nil {
		t.Fatal(err)
	}
	want := tools.DiffCall{Title: "Edit c.txt", Diffs: []tools.FileDiff{{Path: p, OldText: strp("a\nB\nc"), NewText: "a\nbeta\nc"}},
		Locations: []tools.FileLocation{{Path: p, Line: 2}}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("edit preview\n got %#v\nwant %#v", v, want)
	}
	wtool, _ := e.reg.Get("write")
	ex = &tools.Exec{CallID: "p", Name: "write", Session: e.sess, Args: []byte(`{"file_path":"c.txt","content":"a\nB\nc\nd\n"}`)}
	v, err = wtool.Preview(t.Context(), ex)
	want = tools.DiffCall{Title: "Write c.txt", Diffs: []tools.FileDiff{{Path: p, OldText: strp("a\nB\nc"), NewText: "a\nB\nc\nd"}},
		Locations: []tools.FileLocation{{Path: p, Line: 4}}}
	if err != nil || !reflect.DeepEqual(v, want) {
		t.Errorf("write preview %v\n got %#v\nwant %#v", err, v, want)
	}
	ex.Args = []byte(`{"file_path":"c.txt","content":"a\nB\nc\n"}`)
	if v, err := wtool.Preview(t.Context(), ex); v != nil || err != nil {
		t.Errorf("identical write preview: %#v %v", v, err)
	}
	ex.Args = []byte(`{"file_path":"new.txt","content":"n"}`)
	v, err = wtool.Preview(t.Context(), ex)
	want = tools.DiffCall{Title: "Write new.txt", Diffs: []tools.FileDiff{{Path: e.path("new.txt"), NewText: "n"}},
		Locations: []tools.FileLocation{{Path: e.path("new.txt"), Line: 1}}}
	if err != nil || !reflect.DeepEqual(v, want) {
		t.Errorf("create preview %v\n got %#v", err, v)
	}
	if got := e.get("c.txt"); got != "a\nb\nc\n" {
		t.Errorf("a preview changed the file: %q", got)
	}
	if _, err := os.Stat(e.path("new.txt")); !os.IsNotExist(err) {
		t.Error("a preview created a file")
	}
	for _, c := range fe.took() {
		if strings.HasPrefix(c, "write") {
			t.Errorf("a preview wrote: %q", c)
		}
	}
}
