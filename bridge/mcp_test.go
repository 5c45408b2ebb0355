package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acptest"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/toolmcp"
	"github.com/dsh-acp/dsh-acp/tools"
)

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

// TestMCPServersConversion: every field of the three ACP transports
// reaches toolmcp; an unknown type is kept for toolmcp to refuse.
func TestMCPServersConversion(t *testing.T) {
	in := []acp.McpServer{
		{Name: "a", Command: "/bin/a", Args: []string{"-x"}, Env: []acp.EnvVariable{{Name: "K", Value: "v"}}},
		{Type: acp.McpHTTP, Name: "b", URL: "http://127.0.0.1:1/mcp", Headers: []acp.HTTPHeader{{Name: "H", Value: "1"}}},
		{Type: acp.McpSSE, Name: "c", URL: "http://127.0.0.1:2/sse"},
		{Type: "ws", Name: "d", URL: "ws://x"},
	}
	want := []toolmcp.Server{
		{Name: "a", Type: toolmcp.TransportStdio, Command: "/bin/a", Args: []string{"-x"}, Env: []toolmcp.EnvVariable{{Name: "K", Value: "v"}}},
		{Name: "b", Type: toolmcp.TransportHTTP, URL: "http://127.0.0.1:1/mcp", Headers: []toolmcp.HTTPHeader{{Name: "H", Value: "1"}}},
		{Name: "c", Type: toolmcp.TransportSSE, URL: "http://127.0.0.1:2/sse"},
		{Name: "d", Type: "ws", URL: "ws://x"},
	}
	if got := mcpServers(in); !reflect.DeepEqual(got, want) {
		t.Errorf("mcpServers:\n got %+v\nwant %+v", got, want)
	}
}

// TestReplayLookup: a replayed call of a session tool gets the tool its
// own logged definition describes, not another call's, and never the
// session's live tools; shared tools come from the registry; a call
// without a definition, or with one of an unknown source, has none.
func TestReplayLookup(t *testing.T) {
	reg := tools.NewRegistry()
	_ = reg.Register(tools.Tool{Name: "read", Parameters: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, *tools.Exec) (tools.Output, error) { return tools.Output{}, nil }})
	def := func(title string) json.RawMessage {
		return json.RawMessage(`{"server":"notes","tool":"read_note","title":"` + title + `","readOnly":true}`)
	}
	events := []session.Event{
		{Data: session.ToolCall{CallID: "c1", Name: "mcp__notes__read_note"}},
		{Data: session.ToolDefinition{CallID: "c1", Name: "mcp__notes__read_note", Source: sourceMCP, Definition: def("Old title")}},
		{Data: session.ToolCall{CallID: "c2", Name: "mcp__notes__read_note"}},
		{Data: session.ToolDefinition{CallID: "c2", Name: "mcp__notes__read_note", Source: sourceMCP, Definition: def("New title")}},
		{Data: session.ToolCall{CallID: "c3", Name: "mcp__notes__read_note"}},
		{Data: session.ToolCall{CallID: "c4", Name: "mcp__x__y"}},
		{Data: session.ToolDefinition{CallID: "c4", Name: "mcp__x__y", Source: "plugin", Definition: def("?")}},
	}
	l := newReplayLookup(reg, events)
	title := func(call string) string {
		l.next(session.Event{Data: session.ToolCall{CallID: call}})
		for _, ev := range events {
			if c, ok := ev.Data.(session.ToolCall); ok && c.CallID == call {
				tool, ok := l.Get(c.Name)
				if !ok {
					return "(none)"
				}
				return tool.CallView(json.RawMessage(`{"name":"todo"}`)).(tools.GenericCall).Title
			}
		}
		return ""
	}
	for call, want := range map[string]string{"c1": "Old title: todo", "c2": "New title: todo", "c3": "(none)", "c4": "(none)"} {
		if got := title(call); got != want {
			t.Errorf("%s: card title %q, want %q", call, got, want)
		}
	}
	if _, ok := l.Get("read"); !ok {
		t.Error("a shared tool is not found on replay")
	}
}

// mcpBridge is a bridge over a registry with the permission step, whose
// session s1 has the test MCP server "notes".
func mcpBridge(tb testing.TB, mode string) (*Bridge, *tools.Registry, *liveSession) {
	tb.Helper()
	reg := tools.NewRegistry()
	b := New(Config{Tools: reg, Mode: mode})
	reg.Use(b.Permission)
	b.client = nopClient{}
	s := b.openSession("s1", tb.TempDir(), nil)
	set := b.startMCP(s, []acp.McpServer{{Name: "notes", Command: testMCPServer(tb)}})
	tb.Cleanup(b.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := set.Wait(ctx); err != nil {
		tb.Fatal(err)
	}
	return b, reg, s
}

// TestRecordDefinition: a call of an MCP tool logs its definition beside
// it, also when the call is refused (plan mode), and ReplayTool reads it
// back; shared tools log nothing.
func TestRecordDefinition(t *testing.T) {
	_, reg, s := mcpBridge(t, "plan")
	_ = reg.Register(tools.Tool{Name: "read", Class: tools.ClassReadOnly, Parameters: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, *tools.Exec) (tools.Output, error) { return tools.Output{}, nil }})
	for _, c := range []struct{ id, name string }{{"c1", "mcp__notes__write_note"}, {"c2", "read"}, {"c3", "mcp__notes__read_note"}} {
		reg.Execute(context.Background(), &tools.Exec{CallID: c.id, Name: c.name, Args: json.RawMessage(`{"name":"todo","text":"x"}`), Session: s.agent.Tools})
	}
	var defs []session.ToolDefinition
	for _, ev := range s.agent.Store.Events() {
		if d, ok := ev.Data.(session.ToolDefinition); ok {
			defs = append(defs, d)
		}
	}
	if len(defs) != 2 || defs[0].CallID != "c1" || defs[1].CallID != "c3" || defs[0].Source != sourceMCP {
		t.Fatalf("definitions logged: %+v", defs)
	}
	tool, err := toolmcp.ReplayTool(defs[0].Name, defs[0].Definition)
	if err != nil || tool.CallView(json.RawMessage(`{"name":"todo"}`)).(tools.GenericCall).Title != "Write note: todo (destructive)" {
		t.Errorf("replayed from %s: %v", defs[0].Definition, err)
	}
}

// BenchmarkMCPCallDirect is one tools/call of the test server's
// read_note straight through the SDK client (stdio): the floor.
func BenchmarkMCPCallDirect(b *testing.B) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(testMCPServer(b))}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "read_note", Arguments: map[string]any{"name": "todo"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cs.CallTool(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMCPCallBridge is the same call as a prompt turn makes it,
// without the model: the execute chain with the bridge's permission
// step (default mode; read_note is read-only, so it runs unasked) and
// the definition logged beside the call, the registry's schema check,
// toolmcp's call and result conversion, and the cards the presenter
// makes of the call and its result.
func BenchmarkMCPCallBridge(b *testing.B) {
	_, reg, s := mcpBridge(b, "default")
	args := `{"name":"todo"}`
	b.ReportAllocs()
	for b.Loop() {
		ex := &tools.Exec{CallID: "c", Name: "mcp__notes__read_note", Args: json.RawMessage(args), Session: s.agent.Tools}
		s.pres.Updates(session.Event{Data: session.ToolCall{CallID: "c", Name: ex.Name, Arguments: args}})
		r := reg.Execute(context.Background(), ex)
		if r.IsError {
			b.Fatal(tools.JoinText(r.Content))
		}
		s.pres.Updates(session.Event{Data: session.ToolResult{CallID: "c", Content: r.Content, Meta: r.Meta}})
	}
}

// BenchmarkNewSessionMCP is session/new as the editor sees it: with no
// server, and with one stdio server (the test server: process start,
// initialize, tools/list), whose tools are then ready before the
// answer. Closing the session (stopping the server) is not timed.
func BenchmarkNewSessionMCP(b *testing.B) {
	for _, n := range []int{0, 1} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			cwd := b.TempDir()
			bin := testMCPServer(b)
			br := New(Config{Tools: tools.NewRegistry()})
			br.client = nopClient{}
			defer br.Close()
			var servers []acp.McpServer
			for range n {
				servers = append(servers, acp.McpServer{Name: "notes", Command: bin})
			}
			for b.Loop() {
				res, err := br.NewSession(context.Background(), acp.NewSessionRequest{Cwd: cwd, McpServers: servers})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				s := br.session(res.SessionID)
				if n > 0 {
					if st := s.agent.Tools.Value(mcpKey{}, nil).(*toolmcp.Set).Status(); st[0].State != toolmcp.StateReady {
						b.Fatalf("not ready at the answer: %+v", st)
					}
				}
				if _, err := br.CloseSession(context.Background(), acp.CloseSessionRequest{SessionID: res.SessionID}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
