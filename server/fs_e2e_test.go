package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// fsEditor is the editor side of fs/read_text_file and
// fs/write_text_file: buffers by absolute path, the disk otherwise.
// A file read without a buffer is opened from disk and, with lag, never
// reloaded (an editor that has not noticed a change on disk).
// A write is reformatted by format (when set) and saved to disk; with
// lag it replaces the buffer, otherwise the buffer is dropped. writeErr,
// when set, answers every write.
type fsEditor struct {
	mu       sync.Mutex
	lag      bool
	buffers  map[string]string
	format   func(string) string
	writeErr *acp.Error
	methods  []string
}

func (f *fsEditor) handle(method string, params json.RawMessage) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.methods = append(f.methods, method)
	switch method {
	case "fs/read_text_file":
		var req acp.ReadTextFileRequest
		if err := json.Unmarshal(params, &req); err != nil {
			return nil, err
		}
		if b, ok := f.buffers[req.Path]; ok {
			return acp.ReadTextFileResponse{Content: b}, nil
		}
		data, err := os.ReadFile(req.Path)
		if err != nil {
			return nil, &acp.Error{Code: acp.CodeInternalError, Message: "Internal error", Data: err.Error()}
		}
		if f.lag {
			f.buffers[req.Path] = string(data)
		}
		return acp.ReadTextFileResponse{Content: string(data)}, nil
	case "fs/write_text_file":
		if f.writeErr != nil {
			return nil, f.writeErr
		}
		var req acp.WriteTextFileRequest
		if err := json.Unmarshal(params, &req); err != nil {
			return nil, err
		}
		content := req.Content
		if f.format != nil {
			content = f.format(content)
		}
		if f.lag {
			f.buffers[req.Path] = content
		} else {
			delete(f.buffers, req.Path)
		}
		return nil, os.WriteFile(req.Path, []byte(content), 0o644)
	}
	return nil, &acp.Error{Code: acp.CodeMethodNotFound, Message: method}
}

// calls is the methods the editor was asked, in order, comma-separated.
func (f *fsEditor) calls() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.methods, ",")
}

// attach makes f h's client side: its buffers, given by name, are keyed
// by their absolute path in h.cwd from now on.
func (f *fsEditor) attach(h *harness) {
	abs := map[string]string{}
	for name, b := range f.buffers {
		abs[filepath.Join(h.cwd, name)] = b
	}
	f.buffers = abs
	h.client.OnRequest = f.handle
}

// writeWorkspace writes files (name to content) into dir or fails t.
func writeWorkspace(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
}

// TestFsGoldens drives read, write and edit end to end from recordings and
// compares the transcripts with their golden files (every message is
// checked against the ACP schema by the harness), then checks the files.
func TestFsGoldens(t *testing.T) {
	done := e2etest.Text(nil, []string{"Done."}, "stop")
	cases := []struct {
		name   string
		files  map[string]string // workspace before
		steps  [][2]string       // tool name, arguments; one model response each
		caps   map[string]any
		editor *fsEditor
		want   map[string]string // workspace after
	}{
		{name: "fs-read", files: map[string]string{"greeting.txt": "hello\n"},
			steps: [][2]string{{"read", `{"file_path": "greeting.txt"}`}},
			want:  map[string]string{"greeting.txt": "hello\n"}},
		{name: "fs-read-window", files: map[string]string{"ten.txt": "line one\nline two\nline three\nline four\nline five\nline six\nline seven\nline eight\nline nine\nline ten\n"},
			steps: [][2]string{{"read", `{"file_path":"ten.txt","offset":5,"limit":4}`}}},
		{name: "fs-write-create",
			steps: [][2]string{{"write", `{"file_path": "notes.txt", "content": "hello world"}`}},
			want:  map[string]string{"notes.txt": "hello world"}},
		{name: "fs-write-overwrite", files: map[string]string{"notes.txt": "original contents\n"},
			steps: [][2]string{{"read", `{"file_path":"notes.txt"}`}, {"write", `{"file_path":"notes.txt","content":"replaced"}`}},
			want:  map[string]string{"notes.txt": "replaced"}},
		{name: "fs-write-identical", files: map[string]string{"notes.txt": "same\n"},
			steps: [][2]string{{"read", `{"file_path":"notes.txt"}`}, {"write", `{"file_path":"notes.txt","content":"same\n"}`}},
			want:  map[string]string{"notes.txt": "same\n"}},
		{name: "fs-edit", files: map[string]string{"config.txt": "mode=DEBUG\nlevel=info\n"},
			steps: [][2]string{{"read", `{"file_path":"config.txt"}`}, {"edit", `{"file_path":"config.txt","old_string":"DEBUG","new_string":"RELEASE"}`}},
			want:  map[string]string{"config.txt": "mode=RELEASE\nlevel=info\n"}},
		{name: "fs-edit-not-observed", files: map[string]string{"settings.txt": "color=blue\n"},
			steps: [][2]string{{"edit", `{"file_path":"settings.txt","old_string":"blue","new_string":"green"}`}},
			want:  map[string]string{"settings.txt": "color=blue\n"}},
		{name: "fs-edit-editor", files: map[string]string{"config.txt": "mode=DEBUG\nlevel=info\n"}, caps: fsCaps,
			editor: &fsEditor{buffers: map[string]string{"config.txt": "mode=DEBUG\nlevel=info\nunsaved=yes\n"},
				format: func(s string) string { return strings.ReplaceAll(s, "=", " = ") }},
			steps: [][2]string{{"read", `{"file_path":"config.txt"}`}, {"edit", `{"file_path":"config.txt","old_string":"unsaved=yes","new_string":"saved=yes"}`}},
			want:  map[string]string{"config.txt": "mode = DEBUG\nlevel = info\nsaved = yes\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var bodies []string
			for i, s := range c.steps {
				bodies = append(bodies, e2etest.ToolCallsAt(i, s))
			}
			rec := e2etest.Replay(t, append(bodies, done)...)
			h := newHarness(t, harnessOpts{replay: rec})
			writeWorkspace(t, h.cwd, c.files)
			if c.editor != nil {
				c.editor.attach(h)
			}
			sid := h.start(harnessOpts{caps: c.caps, info: map[string]string{"name": "test-client", "version": "1"}})
			stop, err := h.prompt(sid, "use the file tools")
			if err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			checkToolCallsEnd(t, h.sessionUpdates())
			checkGolden(t, c.name, h, sid)
			for name, want := range c.want {
				got, err := os.ReadFile(filepath.Join(h.cwd, name))
				if err != nil || string(got) != want {
					t.Errorf("%s = %q (%v), want %q", name, got, err, want)
				}
			}
			if c.editor != nil {
				// The read, the edit's preview for its card, the edit's
				// own look, its write and the read-back.
				if got := c.editor.calls(); got != "fs/read_text_file,fs/read_text_file,fs/read_text_file,fs/write_text_file,fs/read_text_file" {
					t.Errorf("editor requests %s", got)
				}
			}
		})
	}
}

// TestFsPermissionPreview: in the default mode an edit asks first, and the
// permission request shows the hunk the edit would apply to the file (not
// just the requested strings); a rejected edit leaves the file alone.
func TestFsPermissionPreview(t *testing.T) {
	for _, option := range []string{"allow-once", "reject-once"} {
		t.Run(option, func(t *testing.T) {
			rec := e2etest.Replay(t, e2etest.ToolCallsAt(0, [2]string{"read", `{"file_path":"config.txt"}`}),
				e2etest.ToolCallsAt(1, [2]string{"edit", `{"file_path":"config.txt","old_string":"DEBUG","new_string":"RELEASE"}`}),
				e2etest.Text(nil, []string{"Done."}, "stop"))
			h := newHarness(t, harnessOpts{replay: rec, mode: "default"})
			path := filepath.Join(h.cwd, "config.txt")
			if err := os.WriteFile(path, []byte("mode=DEBUG\nlevel=info\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			pc := &permissionClient{outcome: option}
			h.client.OnRequest = pc.handle
			sid := h.start(harnessOpts{})
			if stop, err := h.prompt(sid, "edit"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			if pc.count() != 1 {
				t.Fatalf("asked %d times, want once (for the edit)", pc.count())
			}
			tc := pc.asked[0].ToolCall
			old := "mode=DEBUG\nlevel=info"
			var d acp.Diff
			if len(tc.Content) == 1 {
				d, _ = tc.Content[0].(acp.Diff)
			}
			if tc.Title == nil || *tc.Title != "Edit config.txt" || len(tc.Content) != 1 || d.Path != path ||
				d.OldText == nil || *d.OldText != old || d.NewText != "mode=RELEASE\nlevel=info" ||
				len(tc.Locations) != 1 || tc.Locations[0].Line == nil || *tc.Locations[0].Line != 1 {
				b, _ := json.Marshal(tc)
				t.Errorf("permission card %s", b)
			}
			want := map[string]string{"allow-once": "mode=RELEASE\nlevel=info\n", "reject-once": "mode=DEBUG\nlevel=info\n"}[option]
			if got, _ := os.ReadFile(path); string(got) != want {
				t.Errorf("file %q, want %q", got, want)
			}
		})
	}
}
