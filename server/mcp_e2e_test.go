package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acptest"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
)

// The MCP end-to-end tests: the editor's mcpServers in session/new and
// session/load, through the real bridge over pipes, with the test MCP
// server of toolmcp/testdata/mcpserver (built once per test binary).

func TestMain(m *testing.M) {
	code := m.Run()
	acptest.RemoveBuilt()
	os.Exit(code)
}

// testMCPServer returns the path of toolmcp's test MCP server, built
// once per test binary.
func testMCPServer(t testing.TB) string {
	t.Helper()
	return acptest.Build(t, "./toolmcp/testdata/mcpserver")
}

// stdioMCP is an ACP stdio server entry for the test server named name,
// writing the tool calls it sees to events (which also marks its
// command line, for /proc).
func stdioMCP(t testing.TB, name, events string, flags ...string) map[string]any {
	return map[string]any{"name": name, "command": testMCPServer(t),
		"args": append([]string{"-events", events, "-name", name}, flags...), "env": []any{}}
}

// capturingModel answers from a replay folder and keeps every request.
type capturingModel struct {
	inner llm.Client
	mu    sync.Mutex
	reqs  []llm.Request
}

func newCapturingModel(t testing.TB, bodies ...string) *capturingModel {
	return &capturingModel{inner: llm.NewReplay(e2etest.Replay(t, bodies...))}
}

func (c *capturingModel) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, req)
	c.mu.Unlock()
	return c.inner.Stream(ctx, req, onDelta)
}

// request returns the nth (1-based) request.
func (c *capturingModel) request(t *testing.T, n int) llm.Request {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.reqs) < n {
		t.Fatalf("%d model requests, want at least %d", len(c.reqs), n)
	}
	return c.reqs[n-1]
}

// toolNames are the function names a request offers, with the prefix.
func toolNames(req llm.Request, prefix string) []string {
	var out []string
	for _, s := range req.Tools {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, s.Name)
		}
	}
	return out
}

// toolMessage is the content of the request's tool message answering id.
func toolMessage(t *testing.T, req llm.Request, id string) string {
	t.Helper()
	for _, m := range req.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			return m.Content
		}
	}
	t.Fatalf("no tool message for %s in %+v", id, req.Messages)
	return ""
}

// newMCPSession sends session/new with servers and returns the id and
// how long the answer took.
func (h *harness) newMCPSession(servers ...map[string]any) (string, time.Duration) {
	h.t.Helper()
	began := time.Now()
	var ns acp.NewSessionResponse
	h.mustCall("session/new", map[string]any{"cwd": h.cwd, "mcpServers": servers}, &ns)
	return ns.SessionID, time.Since(began)
}

func (h *harness) initialize() {
	h.t.Helper()
	h.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]string{"name": "test-client", "version": "1"}}, nil)
}

// serverProcesses lists the live processes whose command line holds
// marker (an events path), waiting up to 10 s for there to be want of
// them.
func serverProcesses(t *testing.T, marker string, want int) []string {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got = e2etest.ProcessesWith(marker); len(got) == want {
			return got
		}
	}
	t.Fatalf("%d processes with %s, want %d: %q", len(got), marker, want, got)
	return nil
}

func eventLines(path string) []string {
	b, _ := os.ReadFile(path)
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// TestMCPToolsPerSession: two sessions with different servers each
// offer the model their own server's tools only (a call of the other's
// is an unknown tool that never reaches a server); a read-only MCP tool
// runs unasked in default mode, its result reaches the next model
// request, and its card says what the server said.
func TestMCPToolsPerSession(t *testing.T) {
	read := [2]string{"mcp__notes__read_note", `{"name":"todo"}`}
	model := newCapturingModel(t,
		e2etest.ToolCalls(read),
		e2etest.Text(nil, []string{"Read."}, "stop"),
		e2etest.ToolCallsAt(2, read),
		e2etest.Text(nil, []string{"No such tool."}, "stop"))
	idA, idB := e2etest.CallID(0, 0, read[0], read[1]), e2etest.CallID(2, 0, read[0], read[1])
	h := newHarness(t, harnessOpts{model: model, mode: "default"})
	pc := &permissionClient{outcome: "allow-once"}
	h.client.OnRequest = pc.handle
	dir := t.TempDir()
	notesEvents, jotsEvents := filepath.Join(dir, "notes.events"), filepath.Join(dir, "jots.events")
	h.initialize()
	a, tookA := h.newMCPSession(stdioMCP(t, "notes", notesEvents))
	b, tookB := h.newMCPSession(stdioMCP(t, "jots", jotsEvents))
	t.Logf("session/new with one stdio server: %v and %v", tookA, tookB)

	if stop, err := h.prompt(a, "read the todo note"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt in A = %q, %v", stop, err)
	}
	if stop, err := h.prompt(b, "read the todo note of the other session"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt in B = %q, %v", stop, err)
	}
	reqA, reqB := model.request(t, 1), model.request(t, 3)
	if got := toolNames(reqA, "mcp__"); !slices.Contains(got, "mcp__notes__read_note") || len(got) != 12 || len(toolNames(reqA, "mcp__jots__")) != 0 {
		t.Errorf("session A offers %q", got)
	}
	if got := toolNames(reqB, "mcp__"); !slices.Contains(got, "mcp__jots__read_note") || len(got) != 12 || len(toolNames(reqB, "mcp__notes__")) != 0 {
		t.Errorf("session B offers %q", got)
	}
	if got := toolMessage(t, model.request(t, 2), idA); got != "buy milk" {
		t.Errorf("the result the model got in A: %q", got)
	}
	if got := toolMessage(t, model.request(t, 4), idB); !strings.Contains(got, "mcp__notes__read_note") || !strings.HasPrefix(got, "Error: ") {
		t.Errorf("B calling A's tool: %q", got)
	}
	if got := eventLines(notesEvents); !reflect.DeepEqual(got, []string{"read_note todo"}) {
		t.Errorf("A's server saw %q", got)
	}
	if got := eventLines(jotsEvents); len(got) != 0 {
		t.Errorf("B's server saw %q", got)
	}
	if pc.count() != 0 {
		t.Errorf("a read-only MCP tool asked: %+v", pc.asked)
	}
	cards := mergeToolCalls(updatesOf(agentMsgs(t, h, 0), a))
	c := cards[idA]
	if c["title"] != `"Read note: todo"` || c["kind"] != `"read"` || c["status"] != `"completed"` ||
		c["content"] != `[{"type":"content","content":{"type":"text","text":"buy milk"}}]` || c["rawInput"] != `{"name":"todo"}` {
		t.Errorf("A's card: %v", c)
	}
	var raw struct {
		Content []struct{ Type, Text string }
	}
	if err := json.Unmarshal([]byte(c["rawOutput"]), &raw); err != nil || len(raw.Content) != 1 || raw.Content[0].Text != "buy milk" {
		t.Errorf("A's card rawOutput (the CallToolResult): %s", c["rawOutput"])
	}
	if c := mergeToolCalls(updatesOf(agentMsgs(t, h, 0), b))[idB]; c["status"] != `"failed"` {
		t.Errorf("B's card for A's tool: %v", c)
	}
}

// TestMCPPermissionModes: an MCP tool that is not read-only (here one
// the server calls destructive) asks in default and acceptEdits,
// showing that it is destructive, is refused in plan and runs unasked in
// bypassPermissions; a read-only one (by the server's hint) runs unasked
// in default, acceptEdits and bypassPermissions, and in plan only when
// the server is trusted (--mcp-trusted): else plan refuses it too.
func TestMCPPermissionModes(t *testing.T) {
	cases := []struct {
		mode          string
		trusted       bool
		asked         int
		write, read   string // final statuses
		writeResultOK bool
	}{
		{"default", false, 1, "completed", "completed", true},
		{"acceptEdits", false, 1, "completed", "completed", true},
		{"plan", false, 0, "failed", "failed", false},
		{"plan", true, 0, "failed", "completed", false},
		{"bypassPermissions", false, 0, "completed", "completed", true},
	}
	for _, c := range cases {
		name := c.mode
		if c.trusted {
			name += "-trusted"
		}
		t.Run(name, func(t *testing.T) {
			write, read := [2]string{"mcp__notes__write_note", `{"name":"todo","text":"buy oat milk"}`}, [2]string{"mcp__notes__read_note", `{"name":"todo"}`}
			model := newCapturingModel(t, e2etest.ToolCalls(write, read), e2etest.Text(nil, []string{"Done."}, "stop"))
			writeID, readID := e2etest.CallID(0, 0, write[0], write[1]), e2etest.CallID(0, 1, read[0], read[1])
			opts := harnessOpts{model: model, mode: c.mode}
			if c.trusted {
				opts.options = func(o *server.Options) { o.MCPTrusted = []string{"notes"} }
			}
			h := newHarness(t, opts)
			pc := &permissionClient{outcome: "allow-once"}
			h.client.OnRequest = pc.handle
			events := filepath.Join(t.TempDir(), "events")
			h.initialize()
			sid, _ := h.newMCPSession(stdioMCP(t, "notes", events))
			if stop, err := h.prompt(sid, "rewrite the todo note"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			if pc.count() != c.asked {
				t.Errorf("asked %d times, want %d", pc.count(), c.asked)
			}
			if c.asked > 0 {
				req := pc.asked[0]
				body, _ := json.Marshal(req.ToolCall)
				if req.ToolCall.ToolCallID != writeID || req.ToolCall.Title == nil || *req.ToolCall.Title != "Write note: todo (destructive)" ||
					req.ToolCall.Kind != acp.ToolKind("other") || !strings.Contains(string(body), `Destructive: MCP server \"notes\", tool \"write_note\"`) {
					t.Errorf("permission request: %s", body)
				}
			}
			cards := mergeToolCalls(updatesOf(agentMsgs(t, h, 0), sid))
			if cards[writeID]["status"] != `"`+c.write+`"` || cards[readID]["status"] != `"`+c.read+`"` {
				t.Errorf("write %v, read %v", cards[writeID], cards[readID])
			}
			got := toolMessage(t, model.request(t, 2), writeID)
			if c.writeResultOK != (got == "wrote 12 bytes to todo") {
				t.Errorf("write_note result for the model: %q", got)
			}
			if !c.writeResultOK && !strings.Contains(got, "plan mode") {
				t.Errorf("plan mode refusal: %q", got)
			}
			wantRead := "buy milk"
			if c.writeResultOK {
				wantRead = "buy oat milk"
			}
			if c.read == "failed" {
				wantRead = "Error: not allowed: the session is in plan mode, which runs only tools known to change nothing: this tool's server says it only reads, but the user has not marked the server trusted; do without it, or ask the user to leave plan mode"
			}
			if got := toolMessage(t, model.request(t, 2), readID); got != wantRead {
				t.Errorf("read_note result for the model: %q, want %q", got, wantRead)
			}
		})
	}
}

// TestMCPAlwaysAllow: "Always allow" for an MCP tool covers its later
// calls in the session (asked once for two calls in two steps), and is
// logged, so a load in another process restores it.
func TestMCPAlwaysAllow(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	write := func(text string) [2]string {
		return [2]string{"mcp__notes__write_note", `{"name":"todo","text":"` + text + `"}`}
	}
	model := newCapturingModel(t, e2etest.ToolCalls(write("one")), e2etest.ToolCallsAt(1, write("two")), e2etest.Text(nil, []string{"Done."}, "stop"))
	h := newHarness(t, harnessOpts{model: model, mode: "default", stateDir: state, cwd: cwd})
	pc := &permissionClient{outcome: "allow-always"}
	h.client.OnRequest = pc.handle
	events := filepath.Join(t.TempDir(), "events")
	h.initialize()
	sid, _ := h.newMCPSession(stdioMCP(t, "notes", events))
	if stop, err := h.prompt(sid, "write twice"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if pc.count() != 1 {
		t.Errorf("asked %d times, want once", pc.count())
	}
	if got := eventLines(events); !reflect.DeepEqual(got, []string{"write_note todo", "write_note todo"}) {
		t.Errorf("the server saw %q", got)
	}
	h.stop()

	model2 := newCapturingModel(t, e2etest.ToolCalls(write("three")), e2etest.Text(nil, []string{"Done."}, "stop"))
	h2 := newHarness(t, harnessOpts{model: model2, mode: "default", stateDir: state, cwd: cwd})
	pc2 := &permissionClient{outcome: "reject-once"}
	h2.client.OnRequest = pc2.handle
	h2.initialize()
	h2.mustCall("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{stdioMCP(t, "notes", events)}}, nil)
	if stop, err := h2.prompt(sid, "write again"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt after load = %q, %v", stop, err)
	}
	if pc2.count() != 0 || len(eventLines(events)) != 3 {
		t.Errorf("after load: asked %d times, server events %q", pc2.count(), eventLines(events))
	}
}

// TestMCPServersThatFail: servers that exit at start, cannot be found or
// use a transport nobody knows leave the session working with the other
// server's tools, and the log names each server and the reason.
func TestMCPServersThatFail(t *testing.T) {
	var log syncBuffer
	model := newCapturingModel(t, e2etest.Text(nil, []string{"Fine."}, "stop"))
	h := newHarness(t, harnessOpts{model: model, logs: &log})
	h.initialize()
	events := filepath.Join(t.TempDir(), "events")
	sid, took := h.newMCPSession(
		stdioMCP(t, "broken", events, "-exit-at-start"),
		map[string]any{"name": "missing", "command": "/nonexistent/mcp-server", "args": []any{}, "env": []any{}},
		map[string]any{"type": "carrier-pigeon", "name": "pigeon", "url": "http://127.0.0.1:1/", "headers": []any{}},
		stdioMCP(t, "notes", events))
	if took > 8*time.Second {
		t.Errorf("session/new took %v", took)
	}
	if stop, err := h.prompt(sid, "hello"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if got := toolNames(model.request(t, 1), "mcp__"); len(got) != 12 || len(toolNames(model.request(t, 1), "mcp__notes__")) != 12 {
		t.Errorf("tools offered: %q", got)
	}
	for _, want := range []string{"server=broken", "server=missing", "server=pigeon"} {
		var line string
		for _, l := range strings.Split(log.String(), "\n") {
			if strings.Contains(l, want) && strings.Contains(l, "session="+sid) && strings.Contains(l, "level=WARN") {
				line = l
			}
		}
		if line == "" {
			t.Errorf("no warning naming %s in the session %s:\n%s", want, sid, log.String())
			continue
		}
		t.Logf("%s", line)
	}
	if !strings.Contains(log.String(), "exit status 3") || !strings.Contains(log.String(), "/nonexistent/mcp-server") || !strings.Contains(log.String(), `carrier-pigeon\" is not supported`) {
		t.Errorf("the reasons are missing:\n%s", log.String())
	}
}

// TestMCPFailureNotices: an editor that advertises session.notices gets
// one warning notice per server that failed, naming it and the reason,
// after the session/new answer (never before the editor knows the
// session), and nothing in the conversation.
func TestMCPFailureNotices(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"session": map[string]any{"notices": map[string]any{}}}}, nil)
	events := filepath.Join(t.TempDir(), "events")
	sid, _ := h.newMCPSession(stdioMCP(t, "broken", events, "-exit-at-start"), stdioMCP(t, "notes", events))
	var notices []acp.Notice
	for deadline := time.Now().Add(10 * time.Second); len(notices) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		notices = nil
		for _, u := range h.sessionUpdates() {
			if n, ok := u.(acp.Notice); ok {
				notices = append(notices, n)
			}
		}
	}
	if len(notices) != 1 || notices[0].Severity != acp.NoticeWarning || notices[0].Title != `MCP server "broken" did not start` ||
		!strings.Contains(notices[0].Description, "exit status 3") {
		t.Fatalf("notices %+v", notices)
	}
	// The answer comes first on the wire.
	answered := false
	for _, l := range h.tr.Lines() {
		var m wireMsg
		if l.FromClient || json.Unmarshal(l.Raw, &m) != nil {
			continue
		}
		if m.Result != nil && strings.Contains(string(m.Result), sid) {
			answered = true
		}
		if m.Method == "session/update" && kindOf(m.Params.Update) == "notice" && !answered {
			t.Errorf("a notice before the session/new answer: %s", l.Raw)
		}
	}
}

// TestMCPSlowServerBound: a server that takes longer than the bound to
// start delays session/new by the bound and no more; the first request
// goes without its tools, which join once it is ready, for the next
// request; a server that never answers fails after its start timeout.
func TestMCPSlowServerBound(t *testing.T) {
	var log syncBuffer
	model := newCapturingModel(t, e2etest.Text(nil, []string{"Early."}, "stop"), e2etest.Text(nil, []string{"Later."}, "stop"))
	h := newHarness(t, harnessOpts{model: model, logs: &log}) // the default bound, 2 s
	h.initialize()
	events := filepath.Join(t.TempDir(), "events")
	sid, took := h.newMCPSession(stdioMCP(t, "slow", events, "-start-delay", "5s"))
	t.Logf("session/new with a server that starts in 5 s: %v (bound 2 s)", took)
	if took < 1900*time.Millisecond || took > 2*time.Second+3*time.Second {
		t.Errorf("session/new took %v, want the 2 s bound (generous margin)", took)
	}
	if !strings.Contains(log.String(), "MCP servers still starting") {
		t.Errorf("no log line about the server still starting:\n%s", log.String())
	}
	if stop, err := h.prompt(sid, "now"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if got := toolNames(model.request(t, 1), "mcp__"); len(got) != 0 {
		t.Errorf("tools of a server still starting: %q", got)
	}
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(log.String(), "MCP server ready"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the slow server never became ready:\n%s", log.String())
		}
	}
	if stop, err := h.prompt(sid, "later"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if got := toolNames(model.request(t, 2), "mcp__slow__"); len(got) != 12 {
		t.Errorf("tools once the server is ready: %q", got)
	}
}

// TestMCPServersStop: a session's stdio server runs while the session
// is open and is gone (no process left, /proc) after session/close,
// after a reload of the live session (which starts the reload's own
// server), and when the agent closes.
func TestMCPServersStop(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.initialize()
	dir := t.TempDir()
	closed := filepath.Join(dir, "closed.events")
	sid, _ := h.newMCPSession(stdioMCP(t, "notes", closed))
	serverProcesses(t, closed, 1)
	h.mustCall("session/close", map[string]any{"sessionId": sid}, nil)
	serverProcesses(t, closed, 0)

	reloaded := filepath.Join(dir, "reloaded.events")
	sid, _ = h.newMCPSession(stdioMCP(t, "notes", reloaded))
	before := serverProcesses(t, reloaded, 1)
	h.mustCall("session/load", map[string]any{"sessionId": sid, "cwd": h.cwd, "mcpServers": []any{stdioMCP(t, "notes", reloaded)}}, nil)
	after := serverProcesses(t, reloaded, 1)
	if before[0] == after[0] {
		t.Errorf("the reload kept the old server process: %q", after)
	}

	other := filepath.Join(dir, "exit.events")
	h.newMCPSession(stdioMCP(t, "notes", other))
	serverProcesses(t, other, 1)
	h.srv.Close() // what the process does at exit
	serverProcesses(t, reloaded, 0)
	serverProcesses(t, other, 0)
}

// TestMCPLoadReplay: session/load shows an MCP session's cards as they
// were live (a read, an image result, an allowed write, an isError
// result), with or without the servers in the load request, without a
// single call reaching a server; the servers the load names are started
// and serve the next prompt.
func TestMCPLoadReplay(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	events := filepath.Join(t.TempDir(), "events")
	model := newCapturingModel(t,
		e2etest.ToolCalls([2]string{"mcp__notes__read_note", `{"name":"todo"}`}, [2]string{"mcp__notes__picture", `{}`}),
		e2etest.ToolCallsAt(1, [2]string{"mcp__notes__write_note", `{"name":"todo","text":"buy oat milk"}`}),
		e2etest.ToolCallsAt(2, [2]string{"mcp__notes__fail", `{}`}),
		e2etest.Text(nil, []string{"Done."}, "stop"))
	readID, pictureID := e2etest.CallID(0, 0, "mcp__notes__read_note", `{"name":"todo"}`), e2etest.CallID(0, 1, "mcp__notes__picture", `{}`)
	h1 := newHarness(t, harnessOpts{model: model, mode: "default", stateDir: state, cwd: cwd})
	pc := &permissionClient{outcome: "allow-once"}
	h1.client.OnRequest = pc.handle
	h1.initialize()
	sid, _ := h1.newMCPSession(stdioMCP(t, "notes", events))
	if stop, err := h1.prompt(sid, "use the notes"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	live := mergeToolCalls(updatesOf(agentMsgs(t, h1, 0), sid))
	h1.stop()
	seen := eventLines(events)
	if !reflect.DeepEqual(seen, []string{"read_note todo", "picture", "write_note todo", "fail"}) &&
		!reflect.DeepEqual(seen, []string{"picture", "read_note todo", "write_note todo", "fail"}) {
		t.Fatalf("the server saw %q", seen)
	}
	if len(live) != 4 || live[readID]["kind"] != `"read"` || !strings.Contains(live[readID]["content"], `"buy milk"`) ||
		!strings.Contains(live[pictureID]["content"], `{"type":"image","data":"`) || !strings.Contains(live[pictureID]["content"], `"type":"resource_link","uri":"note://all","name":"all notes"`) ||
		live[readID]["status"] != `"completed"` {
		t.Fatalf("live cards: %v", live)
	}

	for _, withServers := range []bool{false, true} {
		t.Run(fmt.Sprintf("servers=%v", withServers), func(t *testing.T) {
			model2 := newCapturingModel(t,
				e2etest.ToolCalls([2]string{"mcp__notes__read_note", `{"name":"todo"}`}),
				e2etest.Text(nil, []string{"Again."}, "stop"))
			h2 := newHarness(t, harnessOpts{model: model2, mode: "default", stateDir: state, cwd: cwd})
			h2.initialize()
			servers := []any{}
			if withServers {
				servers = append(servers, stdioMCP(t, "notes", events))
			}
			from := len(agentMsgs(t, h2, 0))
			h2.mustCall("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": servers}, nil)
			replay := mergeToolCalls(updatesOf(agentMsgs(t, h2, from), sid))
			if !reflect.DeepEqual(live, replay) {
				for id, lc := range live {
					if !reflect.DeepEqual(lc, replay[id]) {
						t.Errorf("tool call %s\n live   %v\n replay %v", id, lc, replay[id])
					}
				}
			}
			if got := eventLines(events); len(got) != len(seen) {
				t.Errorf("the load reached the server: %q", got[len(seen):])
			}
			if !withServers {
				h2.stop()
				return
			}
			serverProcesses(t, events, 1)
			if stop, err := h2.prompt(sid, "read it again"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt after load = %q, %v", stop, err)
			}
			if got := toolMessage(t, model2.request(t, 2), e2etest.CallID(0, 0, "mcp__notes__read_note", `{"name":"todo"}`)); got != "buy milk" {
				t.Errorf("read_note after load: %q (a fresh server process)", got)
			}
			h2.stop()
		})
	}
}

// TestMCPHTTPAndSSE: servers reached over streamable HTTP and over
// HTTP+SSE (both advertised in mcpCapabilities), with the headers the
// editor gives, serve a prompt turn.
func TestMCPHTTPAndSSE(t *testing.T) {
	var init map[string]any
	web, old := [2]string{"mcp__web__read_note", `{"name":"todo"}`}, [2]string{"mcp__old__read_note", `{"name":"todo"}`}
	model := newCapturingModel(t, e2etest.ToolCalls(web, old), e2etest.Text(nil, []string{"Both."}, "stop"))
	h := newHarness(t, harnessOpts{model: model})
	h.mustCall("initialize", map[string]any{"protocolVersion": 1}, &init)
	if caps, _ := init["agentCapabilities"].(map[string]any); !reflect.DeepEqual(caps["mcpCapabilities"], map[string]any{"http": true, "sse": true}) {
		t.Errorf("mcpCapabilities = %v", caps["mcpCapabilities"])
	}
	events := filepath.Join(t.TempDir(), "events")
	header := []any{map[string]any{"name": "X-Token", "value": "s3cret"}}
	sid, _ := h.newMCPSession(
		map[string]any{"type": "http", "name": "web", "url": httpMCP(t, "http", events, "-want-header", "X-Token: s3cret"), "headers": header},
		map[string]any{"type": "sse", "name": "old", "url": httpMCP(t, "sse", events, "-want-header", "X-Token: s3cret"), "headers": header})
	if stop, err := h.prompt(sid, "read over both"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	for _, id := range []string{e2etest.CallID(0, 0, web[0], web[1]), e2etest.CallID(0, 1, old[0], old[1])} {
		if got := toolMessage(t, model.request(t, 2), id); got != "buy milk" {
			t.Errorf("%s: %q", id, got)
		}
	}
}

// httpMCP starts the test server over HTTP or SSE and returns its URL.
func httpMCP(t *testing.T, transport, events string, flags ...string) string {
	t.Helper()
	cmd := exec.Command(testMCPServer(t), append([]string{"-transport", transport, "-events", events}, flags...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "URL ")
	if err != nil || !ok {
		t.Fatalf("the server's first line %q: %v", line, err)
	}
	return u
}

// TestMCPCancel: cancelling a turn while an MCP call runs ends the turn
// at once and cancels the call on the server.
func TestMCPCancel(t *testing.T) {
	model := newCapturingModel(t, e2etest.ToolCalls([2]string{"mcp__notes__slow", `{"ms":60000}`}))
	h := newHarness(t, harnessOpts{model: model})
	h.initialize()
	events := filepath.Join(t.TempDir(), "events")
	sid, _ := h.newMCPSession(stdioMCP(t, "notes", events))
	_, ch, err := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []acp.ContentBlock{acp.TextBlock("wait")}})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !slices.Contains(eventLines(events), "slow start"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the slow call never started: %q", eventLines(events))
		}
	}
	took := h.cancelPrompt(sid, ch, 3*time.Second)
	t.Logf("cancel answered after %v", took)
	for deadline := time.Now().Add(10 * time.Second); !slices.Contains(eventLines(events), "slow cancelled"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server never saw the cancellation: %q", eventLines(events))
		}
	}
	if c := mergeToolCalls(updatesOf(agentMsgs(t, h, 0), sid))[e2etest.CallID(0, 0, "mcp__notes__slow", `{"ms":60000}`)]; c["status"] != `"failed"` {
		t.Errorf("the cancelled card: %v", c)
	}
}

// TestMCPResumeForkDelete: session/resume starts the servers its request
// names (in a new process, for a logged session), session/fork starts
// its own request's servers for the fork alone (the source keeps its
// own), and session/delete stops the deleted session's servers.
func TestMCPResumeForkDelete(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	dir := t.TempDir()
	notesEvents, jotsEvents := filepath.Join(dir, "notes.events"), filepath.Join(dir, "jots.events")
	h1 := newHarness(t, harnessOpts{model: newCapturingModel(t, e2etest.Text(nil, []string{"Hi."}, "stop")), stateDir: state, cwd: cwd})
	h1.initialize()
	sid, _ := h1.newMCPSession(stdioMCP(t, "notes", notesEvents))
	if _, err := h1.prompt(sid, "hello"); err != nil {
		t.Fatal(err)
	}
	h1.stop()
	serverProcesses(t, notesEvents, 0)

	model := newCapturingModel(t,
		e2etest.ToolCalls([2]string{"mcp__notes__read_note", `{"name":"todo"}`}), e2etest.Text(nil, []string{"Read."}, "stop"),
		e2etest.Text(nil, []string{"Forked."}, "stop"))
	h2 := newHarness(t, harnessOpts{model: model, stateDir: state, cwd: cwd})
	h2.initialize()
	h2.mustCall("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{stdioMCP(t, "notes", notesEvents)}}, nil)
	if stop, err := h2.prompt(sid, "read the note"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt after resume = %q, %v", stop, err)
	}
	if got := toolMessage(t, model.request(t, 2), e2etest.CallID(0, 0, "mcp__notes__read_note", `{"name":"todo"}`)); got != "buy milk" {
		t.Errorf("read_note after resume: %q", got)
	}
	var fork acp.ForkSessionResponse
	h2.mustCall("session/fork", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{stdioMCP(t, "jots", jotsEvents)}}, &fork)
	serverProcesses(t, jotsEvents, 1)
	if stop, err := h2.prompt(fork.SessionID, "and now?"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt in the fork = %q, %v", stop, err)
	}
	if got := toolNames(model.request(t, 3), "mcp__"); len(toolNames(model.request(t, 3), "mcp__jots__")) != 12 || len(got) != 12 {
		t.Errorf("the fork offers %q", got)
	}
	h2.mustCall("session/delete", map[string]any{"sessionId": fork.SessionID}, nil)
	serverProcesses(t, jotsEvents, 0)
	serverProcesses(t, notesEvents, 1) // the source's server runs on
}
