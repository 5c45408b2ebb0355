package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
)

// sysPrompt is a systemPrompt param of one text block.
func sysPrompt(mode, text string) map[string]any {
	return map[string]any{"mode": mode, "content": []any{map[string]any{"type": "text", "text": text}}}
}

// sysHarness is a harness whose model answers "ok" to every request and
// keeps them.
func sysHarness(t *testing.T, state, cwd string) (*harness, *capturing) {
	t.Helper()
	var bodies []string
	for range 12 {
		bodies = append(bodies, e2etest.Text(nil, []string{"ok"}, "stop"))
	}
	c := &capturing{inner: llm.NewReplay(e2etest.Replay(t, bodies...))}
	h := newHarness(t, harnessOpts{model: c, stateDir: state, cwd: cwd})
	h.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	return h, c
}

// systemOf prompts sid once and returns the system message of the
// request it made.
func systemOf(t *testing.T, h *harness, c *capturing, sid string) string {
	t.Helper()
	n := len(c.requests())
	if _, err := h.prompt(sid, "hi"); err != nil {
		t.Fatal(err)
	}
	reqs := c.requests()
	if len(reqs) != n+1 || len(reqs[n].Messages) == 0 || reqs[n].Messages[0].Role != "system" {
		t.Fatalf("%d requests, want %d with a system message", len(reqs), n+1)
	}
	return reqs[n].Messages[0].Content
}

// sessionCount is how many sessions session/list lists.
func sessionCount(t *testing.T, h *harness) int {
	t.Helper()
	var list acp.ListSessionsResponse
	h.mustCall("session/list", map[string]any{}, &list)
	return len(list.Sessions)
}

// TestClientSystemPrompt: the editor's systemPrompt (advertised with
// override) in append mode follows our instructions and AGENTS.md; in
// override mode it replaces our instructions, and the environment and
// AGENTS.md stay. An empty content array, a non-text block or an
// unknown mode is -32602 and no session is created, loaded or forked.
// It is logged: load and resume restore it, a resume may replace it; a
// fork inherits it unless it gives its own.
func TestClientSystemPrompt(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "AGENTS.md"), []byte("Indent with tabs.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, c := sysHarness(t, state, cwd)
	newWith := func(sp any) (string, error) {
		var ns acp.NewSessionResponse
		err := h.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "systemPrompt": sp}, &ns)
		return ns.SessionID, err
	}
	appendSID, err := newWith(sysPrompt("append", "Answer in French."))
	if err != nil {
		t.Fatal(err)
	}
	sys := systemOf(t, h, c, appendSID)
	if !strings.Contains(sys, "How to work:") || !strings.Contains(sys, "Indent with tabs.") ||
		!strings.HasSuffix(sys, "\nInstructions from the editor:\nAnswer in French.\n") {
		t.Errorf("append: system prompt\n%s", sys)
	}
	overrideSID, err := newWith(sysPrompt("override", "You are Bob, a terse reviewer."))
	if err != nil {
		t.Fatal(err)
	}
	sys = systemOf(t, h, c, overrideSID)
	if !strings.HasPrefix(sys, "You are Bob, a terse reviewer.\n") || strings.Contains(sys, "How to work:") || strings.Contains(sys, "You are dsh-acp") ||
		!strings.Contains(sys, "Working directory: "+cwd) || !strings.Contains(sys, "Indent with tabs.") {
		t.Errorf("override: system prompt\n%s", sys)
	}

	bad := []struct {
		sp   any
		says string
	}{
		{map[string]any{"mode": "append", "content": []any{}}, "systemPrompt.content is empty"},
		{map[string]any{"mode": "append", "content": []any{map[string]any{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}}}, `content[0]: only text blocks`},
		{sysPrompt("_house_style", "x"), `systemPrompt.mode "_house_style"`},
	}
	before := sessionCount(t, h)
	for _, b := range bad {
		for _, call := range []struct {
			method string
			params map[string]any
		}{
			{"session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}},
			{"session/fork", map[string]any{"sessionId": appendSID, "cwd": cwd}},
		} {
			call.params["systemPrompt"] = b.sp
			if code, msg := rpcError(t, h, call.method, call.params); code != acp.CodeInvalidParams || !strings.Contains(msg, b.says) {
				t.Errorf("%s with %v: %d %q, want -32602 saying %s", call.method, b.sp, code, msg, b.says)
			}
		}
	}
	if n := sessionCount(t, h); n != before {
		t.Errorf("%d sessions after the refused requests, want %d", n, before)
	}

	var fork acp.ForkSessionResponse
	h.mustCall("session/fork", map[string]any{"sessionId": appendSID, "cwd": cwd}, &fork)
	if sys := systemOf(t, h, c, fork.SessionID); !strings.HasSuffix(sys, "Answer in French.\n") {
		t.Errorf("a fork did not inherit the system prompt:\n%s", sys)
	}
	var own acp.ForkSessionResponse
	h.mustCall("session/fork", map[string]any{"sessionId": appendSID, "cwd": cwd, "systemPrompt": sysPrompt("override", "Fork's own.")}, &own)
	if sys := systemOf(t, h, c, own.SessionID); !strings.HasPrefix(sys, "Fork's own.\n") || strings.Contains(sys, "French") {
		t.Errorf("a fork with its own system prompt:\n%s", sys)
	}
	h.stop()

	// Another process: load restores the logged prompt, resume replaces
	// one, a refused load loads nothing.
	h2, c2 := sysHarness(t, state, cwd)
	if code, msg := rpcError(t, h2, "session/load", map[string]any{"sessionId": appendSID, "cwd": cwd, "mcpServers": []any{}, "systemPrompt": sysPrompt("replace", "x")}); code != acp.CodeInvalidParams || !strings.Contains(msg, `"replace"`) {
		t.Errorf("load with a bad mode: %d %q", code, msg)
	}
	if _, err := h2.load(appendSID, cwd, nil); err != nil {
		t.Fatal(err)
	}
	if sys := systemOf(t, h2, c2, appendSID); !strings.HasSuffix(sys, "Answer in French.\n") {
		t.Errorf("load did not restore the system prompt:\n%s", sys)
	}
	h2.mustCall("session/resume", map[string]any{"sessionId": overrideSID, "cwd": cwd, "systemPrompt": sysPrompt("append", "Be brief.")}, nil)
	if sys := systemOf(t, h2, c2, overrideSID); !strings.Contains(sys, "How to work:") || !strings.HasSuffix(sys, "Be brief.\n") || strings.Contains(sys, "Bob") {
		t.Errorf("resume with a new system prompt:\n%s", sys)
	}
	h2.stop()

	h3, c3 := sysHarness(t, state, cwd)
	h3.mustCall("session/resume", map[string]any{"sessionId": overrideSID, "cwd": cwd}, nil)
	if sys := systemOf(t, h3, c3, overrideSID); !strings.HasSuffix(sys, "Be brief.\n") {
		t.Errorf("resume did not restore the system prompt the last resume gave:\n%s", sys)
	}
}
