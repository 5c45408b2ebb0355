package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/sandbox"
)

// TestTraceHiddenFromCommands: the --trace file holds every session's
// messages (prompts, files read, command output; only secrets
// redacted), so a sandboxed command cannot read it, like the state
// folder's logs.
func TestTraceHiddenFromCommands(t *testing.T) {
	if sandbox.Probe().LandlockABI < 1 {
		t.Skip("no Landlock")
	}
	cwd := t.TempDir()
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	rec := e2etest.Replay(t, e2etest.ToolCalls(
		bashCall(map[string]any{"command": "cat " + trace + " > got.txt; echo done", "description": "Read the trace"}),
	))
	p := startProc(t, "--replay", rec, "--mode", "bypassPermissions", "--trace", trace)
	b := promptThenRead(t, p, cwd)
	if strings.Contains(string(b), "a private prompt") || len(b) > 0 {
		t.Errorf("a command read the trace: %q", b)
	}
}

// TestRecordHiddenFromCommands: the --record folder holds every model
// request (the whole conversation of every session): a sandboxed
// command cannot read it either.
func TestRecordHiddenFromCommands(t *testing.T) {
	if sandbox.Probe().LandlockABI < 1 {
		t.Skip("no Landlock")
	}
	cwd, rec := t.TempDir(), t.TempDir()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/chat/completions" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if first {
			fmt.Fprint(w, e2etest.ToolCalls(bashCall(map[string]any{"command": "cat " + rec + "/001.request.json > got.txt; echo done", "description": "Read the recording"})))
			return
		}
		fmt.Fprint(w, e2etest.Text(nil, []string{"Done."}, "stop"))
	}))
	defer srv.Close()
	p := startProcWith(t, []string{"DSH_API_KEY=sk-rec"}, "--base-url", srv.URL, "--record", rec, "--mode", "bypassPermissions", "--model", "deepseek-flash")
	b := promptThenRead(t, p, cwd)
	if len(b) > 0 {
		t.Errorf("a command read the recording: %.300q", b)
	}
}

// promptThenRead sends p one prompt turn ("a private prompt") in a new
// session in cwd, whose command writes got.txt there, and returns that
// file.
func promptThenRead(t *testing.T, p *proc, cwd string) []byte {
	t.Helper()
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	p.next(t)
	sid, _ := p.newSession(t, 2, cwd, `[]`)
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"a private prompt"}]}}`)
	p.answer(t, 3)
	b, err := os.ReadFile(filepath.Join(cwd, "got.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
