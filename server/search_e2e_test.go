package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// searchTree is the workspace of the search tests.
var searchTree = []struct{ path, text string }{
	{".gitignore", "build/\n"},
	{"src/main.go", "package main\n\nfunc main() {\n\t// TODO: tidy *this*\n}\n"},
	{"src/util_test.go", "package main\n// TODO test more\n"},
	{"build/out.go", "// TODO generated\n"},
	{"README.md", "# TODO list\n"},
}

// writeSearchTree writes searchTree under dir with fixed, distinct
// modification times (the newest last), so glob's order is known.
func writeSearchTree(t *testing.T, dir string) {
	t.Helper()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, f := range searchTree {
		p := filepath.Join(dir, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
		ts := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, ts, ts); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSearchGoldens: grep and glob end to end, compared with golden
// transcripts: cards of kind search with Markdown-safe titles, the
// result in a code block, locations at the files found (absolute, with
// the first matching line).
func TestSearchGoldens(t *testing.T) {
	done := e2etest.Text(nil, []string{"Done."}, "stop")
	for _, c := range []struct {
		name  string
		steps [][2]string
	}{
		{"search-grep", [][2]string{
			{"grep", `{"pattern":"TODO","glob":"*.go","output_mode":"content"}`},
			{"grep", `{"pattern":"todo","ignore_case":true}`},
		}},
		{"search-glob", [][2]string{{"glob", `{"pattern":"**/*.go"}`}, {"glob", `{"pattern":"*.rs","path":"src"}`}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var bodies []string
			for i, s := range c.steps {
				bodies = append(bodies, e2etest.ToolCallsAt(i, s))
			}
			h := newHarness(t, harnessOpts{replay: e2etest.Replay(t, append(bodies, done)...)})
			writeSearchTree(t, h.cwd)
			sid := h.start(harnessOpts{info: map[string]string{"name": "test-client", "version": "1"}})
			if stop, err := h.prompt(sid, "search"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			us := h.sessionUpdates()
			checkToolCallsEnd(t, us)
			for _, u := range us {
				if c, _ := toolCard(u); c.Status == acp.StatusFailed {
					t.Errorf("a search failed: %+v", u)
				}
			}
			checkGolden(t, c.name, h, sid)
		})
	}
}

// TestSearchPermission: grep and glob inside the project run unasked in
// the default and plan modes; a path outside asks, like read, and a
// rejected search reads nothing.
func TestSearchPermission(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("TODO outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"default", "plan"} {
		t.Run(mode, func(t *testing.T) {
			steps := [][2]string{{"grep", `{"pattern":"TODO"}`}, {"glob", `{"pattern":"**/*.md"}`}, {"grep", fmt.Sprintf(`{"pattern":"TODO","path":%q}`, outside)}}
			var ids []string
			var bodies []string
			for i, st := range steps {
				bodies = append(bodies, e2etest.ToolCallsAt(i, st))
				ids = append(ids, e2etest.CallID(i, 0, st[0], st[1]))
			}
			rec := e2etest.Replay(t, append(bodies, e2etest.Text(nil, []string{"Done."}, "stop"))...)
			h := newHarness(t, harnessOpts{replay: rec, mode: mode})
			writeSearchTree(t, h.cwd)
			pc := &permissionClient{outcome: "reject-once"}
			h.client.OnRequest = pc.handle
			sid := h.start(harnessOpts{})
			if stop, err := h.prompt(sid, "search"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			if pc.count() != 1 {
				t.Fatalf("asked %d times, want once (the search outside)", pc.count())
			}
			tc := pc.asked[0].ToolCall
			if tc.Title == nil || *tc.Title != "grep TODO in "+outside || tc.Kind != "search" {
				b, _ := json.Marshal(tc)
				t.Errorf("permission card %s", b)
			}
			final := map[string]acp.ToolCallUpdate{}
			for _, u := range h.sessionUpdates() {
				if c, _ := toolCard(u); isFinal(u) {
					final[c.ToolCallID] = c
				}
			}
			if final[ids[0]].Status != acp.StatusCompleted || final[ids[1]].Status != acp.StatusCompleted || final[ids[2]].Status != acp.StatusFailed {
				t.Errorf("final statuses %v %v %v", final[ids[0]].Status, final[ids[1]].Status, final[ids[2]].Status)
			}
			if raw, _ := json.Marshal(final[ids[2]]); strings.Contains(string(raw), "secret") {
				t.Errorf("the rejected search read outside: %s", raw)
			}
		})
	}
}

// slowEditor is the client side of fs/read_text_file and
// fs/write_text_file with reads that take their time: hold decides, per
// file name, how a read waits before it answers.
type slowEditor struct {
	mu     sync.Mutex
	events []string
	begun  map[string]chan struct{}
	hold   func(name string, e *slowEditor) error
}

func newSlowEditor(hold func(string, *slowEditor) error) *slowEditor {
	return &slowEditor{begun: map[string]chan struct{}{}, hold: hold}
}

func (e *slowEditor) record(s string) {
	e.mu.Lock()
	e.events = append(e.events, s)
	e.mu.Unlock()
}

// began returns the channel closed when the read of name began.
func (e *slowEditor) began(name string) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.begun[name]
	if !ok {
		c = make(chan struct{})
		e.begun[name] = c
	}
	return c
}

func (e *slowEditor) log() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.events...)
}

func (e *slowEditor) handle(method string, params json.RawMessage) (any, error) {
	switch method {
	case "fs/read_text_file":
		var req acp.ReadTextFileRequest
		if err := json.Unmarshal(params, &req); err != nil {
			return nil, err
		}
		name := filepath.Base(req.Path)
		e.record("begin " + name)
		close(e.began(name))
		if err := e.hold(name, e); err != nil {
			e.record("failed " + name)
			return nil, &acp.Error{Code: acp.CodeInternalError, Message: err.Error()}
		}
		data, err := os.ReadFile(req.Path)
		if err != nil {
			return nil, &acp.Error{Code: acp.CodeInternalError, Message: err.Error()}
		}
		e.record("end " + name)
		return acp.ReadTextFileResponse{Content: string(data)}, nil
	case "fs/write_text_file":
		var req acp.WriteTextFileRequest
		if err := json.Unmarshal(params, &req); err != nil {
			return nil, err
		}
		e.record("write " + filepath.Base(req.Path))
		return nil, os.WriteFile(req.Path, []byte(req.Content), 0o644)
	}
	return nil, &acp.Error{Code: acp.CodeMethodNotFound, Message: method}
}

// waitAll waits until the reads of all names began, or 10 s.
func (e *slowEditor) waitAll(names ...string) error {
	deadline := time.After(10 * time.Second)
	for _, n := range names {
		select {
		case <-e.began(n):
		case <-deadline:
			return fmt.Errorf("the read of %s never began while another was in flight (events %v)", n, e.log())
		}
	}
	return nil
}

var fsCaps = map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}}

func writeFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("text of "+n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// finals returns the ids of the final updates (completed or failed) in
// the order they came, with their status.
func finals(us []acp.Update) []string {
	var out []string
	for _, u := range us {
		if c, _ := toolCard(u); isFinal(u) {
			out = append(out, c.ToolCallID+":"+string(c.Status))
		}
	}
	return out
}

// TestParallelReadsE2E: three reads in one response, of files the
// editor is slow to hand over, are in flight at once (each read waits
// until all three began, which reads one after the other never do); the
// cards are announced and closed in the model's order, the model gets
// the results in its order, and session/load replays the same order.
func TestParallelReadsE2E(t *testing.T) {
	reads := [][2]string{{"read", `{"file_path":"a.txt"}`}, {"read", `{"file_path":"b.txt"}`}, {"read", `{"file_path":"c.txt"}`}}
	f, mb := scriptedModel(t, e2etest.ToolCalls(reads...), e2etest.Text(nil, []string{"Done."}, "stop"))
	id := func(i int) string { return e2etest.CallID(0, i, reads[i][0], reads[i][1]) }
	state := t.TempDir()
	h := newHarness(t, harnessOpts{model: f.client("sk-test"), stateDir: state})
	writeFiles(t, h.cwd, "a.txt", "b.txt", "c.txt")
	ed := newSlowEditor(func(name string, e *slowEditor) error {
		// a waits the longest: its result is ready last.
		if name == "a.txt" {
			time.Sleep(100 * time.Millisecond)
		}
		return e.waitAll("a.txt", "b.txt", "c.txt")
	})
	h.client.OnRequest = ed.handle
	sid := h.start(harnessOpts{caps: fsCaps})
	if stop, err := h.prompt(sid, "read three"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	us := h.sessionUpdates()
	checkToolCallsEnd(t, us)
	var announced []string
	for _, u := range us {
		if c, ok := u.(acp.ToolCall); ok {
			announced = append(announced, c.ToolCallID)
		}
	}
	if !reflect.DeepEqual(announced, []string{id(0), id(1), id(2)}) {
		t.Errorf("cards announced %v", announced)
	}
	want := []string{id(0) + ":completed", id(1) + ":completed", id(2) + ":completed"}
	if got := finals(us); !reflect.DeepEqual(got, want) {
		t.Errorf("cards closed %v, want %v (editor: %v)", got, want, ed.log())
	}
	var tools []string
	for _, m := range messagesOf(t, mb.body(2)) {
		if m["role"] == "tool" {
			tools = append(tools, fmt.Sprint(m["tool_call_id"], "=", strings.Contains(fmt.Sprint(m["content"]), "text of ")))
		}
	}
	if fmt.Sprint(tools) != fmt.Sprintf("[%s=true %s=true %s=true]", id(0), id(1), id(2)) {
		t.Errorf("tool messages to the model %v", tools)
	}
	replay, err := h.load(sid, h.cwd, fsCaps)
	if err != nil {
		t.Fatal(err)
	}
	var replayed []string
	for _, u := range replay {
		if kindOf(u) == "tool_call_update" && str(u["status"]) == "completed" {
			replayed = append(replayed, str(u["toolCallId"])+":completed")
		}
	}
	if !reflect.DeepEqual(replayed, want) {
		t.Errorf("replayed %v, want %v", replayed, want)
	}
}

// TestParallelWriteBetweenReads: a write between two reads of one
// response waits for the first read and runs before the second.
func TestParallelWriteBetweenReads(t *testing.T) {
	calls := [][2]string{
		{"read", `{"file_path":"a.txt"}`},
		{"write", `{"file_path":"new.txt","content":"fresh\n"}`},
		{"read", `{"file_path":"c.txt"}`}}
	rec := e2etest.Replay(t, e2etest.ToolCalls(calls...), e2etest.Text(nil, []string{"Done."}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec})
	writeFiles(t, h.cwd, "a.txt", "c.txt")
	ed := newSlowEditor(func(name string, _ *slowEditor) error {
		if name == "a.txt" {
			// Long enough for a write that does not wait to come first.
			time.Sleep(300 * time.Millisecond)
		}
		return nil
	})
	h.client.OnRequest = ed.handle
	sid := h.start(harnessOpts{caps: fsCaps})
	if stop, err := h.prompt(sid, "read, write, read"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	// The write reads its file back (the editor may have reformatted it).
	want := []string{"begin a.txt", "end a.txt", "write new.txt", "begin new.txt", "end new.txt", "begin c.txt", "end c.txt"}
	if got := ed.log(); !reflect.DeepEqual(got, want) {
		t.Errorf("editor saw %v, want %v", got, want)
	}
	var closed []string
	for i, c := range calls {
		closed = append(closed, e2etest.CallID(0, i, c[0], c[1])+":completed")
	}
	closed = append(closed, "turn1-changes:completed") // the write's new.txt
	if got := finals(h.sessionUpdates()); !reflect.DeepEqual(got, closed) {
		t.Errorf("cards closed %v", got)
	}
}

// TestParallelCancelE2E: a cancel while three reads are in flight (the
// first done, two held by the editor) ends the prompt cancelled and
// closes every card: the finished read completed, the others failed.
func TestParallelCancelE2E(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	reads := [][2]string{{"read", `{"file_path":"a.txt"}`}, {"read", `{"file_path":"b.txt"}`}, {"read", `{"file_path":"c.txt"}`}}
	id := func(i int) string { return e2etest.CallID(0, i, reads[i][0], reads[i][1]) }
	rec := e2etest.Replay(t, e2etest.ToolCalls(reads...), e2etest.Text(nil, []string{"Done."}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec})
	writeFiles(t, h.cwd, "a.txt", "b.txt", "c.txt")
	ed := newSlowEditor(func(name string, _ *slowEditor) error {
		if name == "a.txt" {
			return nil
		}
		select {
		case <-release:
		case <-time.After(30 * time.Second):
		}
		return fmt.Errorf("released")
	})
	h.client.OnRequest = ed.handle
	sid := h.start(harnessOpts{caps: fsCaps})
	_, ch, _ := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []acp.ContentBlock{acp.TextBlock("read three")}})
	if err := ed.waitAll("b.txt", "c.txt"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		for _, u := range h.sessionUpdates() {
			if c, _ := toolCard(u); c.ToolCallID == id(0) && c.Status == acp.StatusCompleted {
				return true
			}
		}
		return false
	})
	h.cancelPrompt(sid, ch, 5*time.Second)
	us := h.sessionUpdates()
	checkToolCallsEnd(t, us)
	want := []string{id(0) + ":completed", id(1) + ":failed", id(2) + ":failed"}
	if got := finals(us); !reflect.DeepEqual(got, want) {
		t.Errorf("cards closed %v, want %v", got, want)
	}
}
