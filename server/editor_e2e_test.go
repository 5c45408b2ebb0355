package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// editorRun is one prompt turn of recorded tool calls against an editor.
type editorRun struct {
	h     *harness
	mb    *modelBodies
	steps [][2]string
}

// runEditorTurn writes files into a fresh workspace, sets the editor's
// buffers (by name), and runs one turn whose model calls steps in order,
// one per response, then ends.
func runEditorTurn(t *testing.T, caps map[string]any, ed *fsEditor, files, buffers map[string]string, steps ...[2]string) *editorRun {
	t.Helper()
	var answers []string
	for i, s := range steps {
		answers = append(answers, e2etest.ToolCallsAt(i, s))
	}
	f, mb := scriptedModel(t, append(answers, e2etest.Text(nil, []string{"Done."}, "stop"))...)
	h := newHarness(t, harnessOpts{model: f.client("k")})
	writeWorkspace(t, h.cwd, files)
	ed.buffers = buffers
	ed.attach(h)
	sid := h.start(harnessOpts{caps: map[string]any{"fs": caps}})
	if stop, err := h.prompt(sid, "use the file tools"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	checkToolCallsEnd(t, h.sessionUpdates())
	return &editorRun{h: h, mb: mb, steps: steps}
}

// id is the tool call id of step i's one call.
func (r *editorRun) id(i int) string {
	return e2etest.CallID(i, 0, r.steps[i][0], r.steps[i][1])
}

// result is what step i's call (r.id(i)) ended with: its final status
// and the text the model got.
func (r *editorRun) result(t *testing.T, i int) (acp.ToolCallStatus, string) {
	t.Helper()
	id := r.id(i)
	var status acp.ToolCallStatus
	for _, u := range r.h.sessionUpdates() {
		if c, ok := toolCard(u); ok && c.ToolCallID == id && (c.Status == acp.StatusCompleted || c.Status == acp.StatusFailed) {
			status = c.Status
		}
	}
	// The model's request after step i holds the tool message.
	msgs := messagesOf(t, r.mb.body(i+2))
	for _, m := range msgs {
		if m["role"] == "tool" && m["tool_call_id"] == id {
			s, _ := m["content"].(string)
			return status, s
		}
	}
	t.Fatalf("no tool message for %s", id)
	return "", ""
}

// want checks step i's status and that its text holds each of parts.
func (r *editorRun) want(t *testing.T, i int, status acp.ToolCallStatus, parts ...string) {
	t.Helper()
	st, text := r.result(t, i)
	if st != status {
		t.Errorf("step %d ended %q, want %q: %s", i, st, status, text)
	}
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("step %d: %q lacks %q", i, text, p)
		}
	}
}

func (r *editorRun) disk(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.h.cwd, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var bothFS = map[string]any{"readTextFile": true, "writeTextFile": true}

// The notes a read through the editor adds (toolfs).
const (
	noteLagging  = "The file changed on disk since you last read it and the editor has not reloaded it yet: this is the file on disk."
	noteUnsaved  = "This is the editor's buffer, which has unsaved changes: the file on disk differs."
	noteConflict = "This is the editor's buffer, which has unsaved changes; the file on disk changed too since you last read it. Edits are refused until you read the file again."
	notePeek     = "The editor has unsaved changes to this file that it cannot save for you: this is the file on disk"
)

// TestEditorLagE2E: read, then `sed -i` changes the
// disk while the editor's buffer keeps the old text. The edit that
// follows is refused (it would have written the old text back); the
// read shows the disk with a note; the edit then applies to the disk's
// text, through the editor. The disk ends with both changes.
func TestEditorLagE2E(t *testing.T) {
	// Not parallel: it runs a command, and another test's shutdown
	// (sandbox.KillAdopted) may kill a sandbox helper it did not register yet.
	ed := &fsEditor{lag: true}
	r := runEditorTurn(t, bothFS, ed, map[string]string{"a.txt": "x=1\ny=1\n"}, nil,
		[2]string{"read", `{"file_path":"a.txt"}`},
		[2]string{"bash", `{"command":"sed -i s/x=1/x=2/ a.txt","description":"Change x"}`},
		[2]string{"edit", `{"file_path":"a.txt","old_string":"y=1","new_string":"y=2"}`},
		[2]string{"read", `{"file_path":"a.txt"}`},
		[2]string{"edit", `{"file_path":"a.txt","old_string":"y=1","new_string":"y=2"}`})
	p := filepath.Join(r.h.cwd, "a.txt")
	r.want(t, 0, acp.StatusCompleted, "1: x=1")
	r.want(t, 1, acp.StatusCompleted)
	r.want(t, 2, acp.StatusFailed, `Error: cannot edit "`+p+`": file changed since it was read`)
	r.want(t, 3, acp.StatusCompleted, "1: x=2\n2: y=1", noteLagging)
	r.want(t, 4, acp.StatusCompleted, "has been updated successfully")
	if got := r.disk(t, "a.txt"); got != "x=2\ny=2\n" {
		t.Errorf("disk %q, want the shell's change and the edit", got)
	}
	if got := ed.buffers[p]; got != "x=2\ny=2\n" {
		t.Errorf("buffer %q", got)
	}
	// The read; the refused edit's preview for its card and its own look;
	// the read; the edit's preview, its look, its write and the read-back.
	if got := ed.calls(); got != "fs/read_text_file,fs/read_text_file,fs/read_text_file,fs/read_text_file,fs/read_text_file,fs/read_text_file,fs/write_text_file,fs/read_text_file" {
		t.Errorf("editor requests %s", got)
	}
}

// TestEditorUnsavedE2E (item 1): a buffer with unsaved changes is what
// read shows, with a note that the disk differs, and what the edit
// applies to and saves.
func TestEditorUnsavedE2E(t *testing.T) {
	t.Parallel()
	ed := &fsEditor{}
	r := runEditorTurn(t, bothFS, ed, map[string]string{"n.txt": "one\n"}, map[string]string{"n.txt": "one\ntwo (unsaved)\n"},
		[2]string{"read", `{"file_path":"n.txt"}`},
		[2]string{"edit", `{"file_path":"n.txt","old_string":"two (unsaved)","new_string":"two"}`})
	r.want(t, 0, acp.StatusCompleted, "2: two (unsaved)", noteUnsaved)
	r.want(t, 1, acp.StatusCompleted, "has been updated successfully")
	if got := r.disk(t, "n.txt"); got != "one\ntwo\n" {
		t.Errorf("disk %q", got)
	}
}

// TestEditorBothChangedE2E (item 1): the buffer has unsaved changes and a
// command changes the disk too: the read shows the buffer and says so,
// the edit is refused, and neither the disk nor the buffer is touched.
func TestEditorBothChangedE2E(t *testing.T) {
	// Not parallel: it runs a command, and another test's shutdown
	// (sandbox.KillAdopted) may kill a sandbox helper it did not register yet.
	ed := &fsEditor{lag: true}
	r := runEditorTurn(t, bothFS, ed, map[string]string{"b.txt": "base\n"}, map[string]string{"b.txt": "base\nmine\n"},
		[2]string{"read", `{"file_path":"b.txt"}`},
		[2]string{"bash", `{"command":"printf 'base\\nshell\\n' > b.txt","description":"Rewrite b"}`},
		[2]string{"read", `{"file_path":"b.txt"}`},
		[2]string{"edit", `{"file_path":"b.txt","old_string":"mine","new_string":"ours"}`})
	p := filepath.Join(r.h.cwd, "b.txt")
	r.want(t, 0, acp.StatusCompleted, "2: mine", noteUnsaved)
	r.want(t, 1, acp.StatusCompleted)
	r.want(t, 2, acp.StatusCompleted, "2: mine", noteConflict)
	r.want(t, 3, acp.StatusFailed, `Error: cannot edit "`+p+`": the editor's buffer and the file on disk both changed since it was read; read it again first`)
	if got := r.disk(t, "b.txt"); got != "base\nshell\n" {
		t.Errorf("disk %q, want the command's text", got)
	}
	if got := ed.buffers[p]; got != "base\nmine\n" {
		t.Errorf("buffer %q", got)
	}
	if strings.Contains(ed.calls(), "fs/write_text_file") {
		t.Errorf("the editor was asked to write: %s", ed.calls())
	}
}

// TestEditorOneSourceE2E (item 2): an editor that serves reads but not
// writes: read and edit both use the disk, the model is told the buffer
// differs, and the editor is never asked to write. One that serves
// writes but not reads is not asked at all.
func TestEditorOneSourceE2E(t *testing.T) {
	t.Parallel()
	t.Run("read only", func(t *testing.T) {
		t.Parallel()
		ed := &fsEditor{}
		r := runEditorTurn(t, map[string]any{"readTextFile": true, "writeTextFile": false}, ed,
			map[string]string{"r.txt": "disk\n"}, map[string]string{"r.txt": "disk\nunsaved\n"},
			[2]string{"read", `{"file_path":"r.txt"}`},
			[2]string{"edit", `{"file_path":"r.txt","old_string":"disk","new_string":"DISK"}`})
		r.want(t, 0, acp.StatusCompleted, "1: disk\n\n(End of file - total 1 lines)", notePeek)
		r.want(t, 1, acp.StatusCompleted, "has been updated successfully", "saving them in the editor would overwrite it")
		if got := r.disk(t, "r.txt"); got != "DISK\n" {
			t.Errorf("disk %q", got)
		}
		if got := ed.calls(); got != "fs/read_text_file,fs/read_text_file" {
			t.Errorf("editor requests %s, want two reads (the peeks)", got)
		}
	})
	t.Run("write only", func(t *testing.T) {
		t.Parallel()
		ed := &fsEditor{}
		r := runEditorTurn(t, map[string]any{"readTextFile": false, "writeTextFile": true}, ed,
			map[string]string{"w.txt": "disk\n"}, map[string]string{"w.txt": "buffer\n"},
			[2]string{"read", `{"file_path":"w.txt"}`},
			[2]string{"edit", `{"file_path":"w.txt","old_string":"disk","new_string":"DISK"}`})
		r.want(t, 0, acp.StatusCompleted, "1: disk")
		r.want(t, 1, acp.StatusCompleted, "has been updated successfully")
		if got := r.disk(t, "w.txt"); got != "DISK\n" {
			t.Errorf("disk %q", got)
		}
		if got := ed.calls(); got != "" {
			t.Errorf("editor requests %s, want none", got)
		}
	})
}

// TestEditorRefusalE2E (item 5): the editor refuses fs/write_text_file
// the way Zed does (-32603 "Internal error", the reason in data): the
// card and the model get the editor's reason, never the bare code, and
// the disk is unchanged.
func TestEditorRefusalE2E(t *testing.T) {
	t.Parallel()
	ed := &fsEditor{writeErr: &acp.Error{Code: acp.CodeInternalError, Message: "Internal error", Data: "Permission denied (os error 13)"}}
	r := runEditorTurn(t, bothFS, ed, map[string]string{"c.txt": "v=1\n"}, nil,
		[2]string{"read", `{"file_path":"c.txt"}`},
		[2]string{"edit", `{"file_path":"c.txt","old_string":"v=1","new_string":"v=2"}`})
	p := filepath.Join(r.h.cwd, "c.txt")
	want := `Error: cannot edit "` + p + `": the editor refused fs/write_text_file: Permission denied (os error 13)`
	r.want(t, 1, acp.StatusFailed, want)
	var card string
	for _, u := range r.h.sessionUpdates() {
		if c, ok := toolCard(u); ok && c.ToolCallID == r.id(1) && c.Status == acp.StatusFailed {
			for _, item := range c.Content {
				if tc, ok := item.(acp.Content); ok {
					card += tc.Content.Text
				}
			}
		}
	}
	if card != want {
		t.Errorf("card text %q, want %q", card, want)
	}
	for _, l := range r.h.tr.Lines() {
		if !l.FromClient && strings.Contains(string(l.Raw), "code -32603") {
			t.Errorf("the bare code reached the editor: %s", l.Raw)
		}
	}
	if got := r.disk(t, "c.txt"); got != "v=1\n" {
		t.Errorf("disk %q", got)
	}
}
