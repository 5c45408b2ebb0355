package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/acptest"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// scriptedEndpoint is an OpenAI-compatible endpoint on 127.0.0.1 that
// lists one model and answers the nth chat request with bodies[n-1], and
// every later one with the last body.
func scriptedEndpoint(t *testing.T, bodies ...string) string {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "GET /models":
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"quiet-model","object":"model"}]}`)
		case "POST /chat/completions":
			_, _ = io.Copy(io.Discard, r.Body)
			mu.Lock()
			body := bodies[min(n, len(bodies)-1)]
			n++
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, body)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestQuietByDefault: an ordinary session through the binary at the
// default log level (start, an MCP server that starts fine, a prompt
// whose model runs a command and reads a file, the session's title from
// the model, exit) writes 0 bytes to stderr, since some editors show
// every stderr line as an error; --log-level info still logs the
// routine events.
func TestQuietByDefault(t *testing.T) {
	mcp := acptest.Build(t, "./toolmcp/testdata/mcpserver")
	for _, level := range []string{"", "info"} {
		cwd := t.TempDir()
		if err := os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		base := scriptedEndpoint(t,
			e2etest.ToolCalls(bashCall(map[string]any{"command": "echo quiet", "description": "Echo"}),
				[2]string{"read", `{"file_path":` + string(jsonQuote(filepath.Join(cwd, "notes.txt"))) + `}`}),
			e2etest.Text(nil, []string{"Done."}, "stop"),
			e2etest.Text(nil, []string{"Quiet session"}, "stop"))
		args := []string{"--base-url", base, "--model", "quiet-model", "--mode", "bypassPermissions"}
		if level != "" {
			args = append(args, "--log-level", level)
		}
		cmd := exec.Command(binary(t), args...)
		cmd.Env = append(isolatedEnv(t), "DSH_STATE_DIR="+t.TempDir(), "DSH_API_KEY=sk-quiet-0123456789", "DSH_LOG_LEVEL=")
		p := startCmd(t, cmd)
		p.send(t, initLine)
		p.next(t)
		servers, _ := json.Marshal([]any{map[string]any{"name": "notes", "command": mcp,
			"args": []string{"-events", filepath.Join(t.TempDir(), "events")}, "env": []any{}}})
		sid, _ := p.newSession(t, 2, cwd, string(servers))
		p.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"run it"}]}}`)
		out := string(joinLines(p.answer(t, 3)))
		if !strings.Contains(out, `"stopReason":"end_turn"`) || !strings.Contains(out, `"status":"completed"`) {
			t.Fatalf("the turn did not end well:\n%s\nstderr:\n%s", out, p.stderr)
		}
		// The title comes after the turn's answer.
		for l := string(p.next(t)); !strings.Contains(l, `"title":"Quiet session"`); l = string(p.next(t)) {
		}
		p.stdin.Close()
		if code, _ := p.wait(t); code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
		}
		stderr := p.stderr.String()
		if level == "" && stderr != "" {
			t.Errorf("at the default level an ordinary session wrote %d bytes to stderr:\n%s", len(stderr), stderr)
		}
		if level == "info" {
			for _, want := range []string{"MCP server ready", "the model titled the session"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("--log-level info does not log %q:\n%s", want, stderr)
				}
			}
		}
	}
}
