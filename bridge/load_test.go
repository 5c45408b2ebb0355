package bridge

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// logTurns writes a log of n events of realistic turns (a user message,
// three steps of an assistant message with reasoning and a tool call, the
// call and a 1 KiB result, then an answer) for session id in cwd.
func logTurns(tb testing.TB, root, id, cwd string, n int) {
	tb.Helper()
	l := session.NewLog(session.LogPath(root, cwd, id), session.NewHeader(id, cwd, 1700000000000))
	seq := 0
	add := func(d session.Data) {
		if seq < n {
			if err := l.Append(session.Event{Seq: int64(seq), Time: 1700000000000 + int64(seq), Data: d}); err != nil {
				tb.Fatal(err)
			}
			seq++
		}
	}
	result := strings.Repeat("     1\tpackage main // a line of a file the model read\n", 20)
	for turn := 1; seq < n; turn++ {
		add(session.TurnStart{Turn: turn})
		add(session.UserMessage{Turn: turn, Content: []tools.Content{tools.Text(fmt.Sprintf("Please fix file %d.", turn))}})
		for step := 1; step <= 3; step++ {
			add(session.StepStart{Turn: turn, Step: step})
			id := fmt.Sprintf("call_%d_%d", turn, step)
			args := fmt.Sprintf(`{"file_path":"%s/src/file%d.go"}`, cwd, step)
			add(session.AssistantMessage{Turn: turn, Step: step, Text: "Let me read it.", Reasoning: strings.Repeat("thinking ", 20),
				ToolCalls: []session.ToolCallRef{{CallID: id, Name: "read", Arguments: args}}, FinishReason: "tool_calls"})
			add(session.ToolCall{Turn: turn, Step: step, CallID: id, Name: "read", Arguments: args})
			add(session.ToolResult{Turn: turn, Step: step, CallID: id, Content: []tools.Content{tools.Text(result)}})
			add(session.StepEnd{Turn: turn, Step: step})
		}
		add(session.StepStart{Turn: turn, Step: 4})
		add(session.AssistantMessage{Turn: turn, Step: 4, Text: "Fixed.", FinishReason: "stop"})
		add(session.StepEnd{Turn: turn, Step: 4})
		add(session.TurnEnd{Turn: turn, Reason: session.EndTurn})
	}
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
}

// countingWriter counts the lines written to it.
type countingWriter struct{ lines int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.lines += strings.Count(string(p), "\n")
	return len(p), nil
}

// BenchmarkLoadSession10k is a whole session/load of a 10,000-event log
// in a fresh process: read and check the log, build the session, replay
// every event through the presenter and write each update through an
// acp.Conn to a discarding writer (about 6,700 notifications). Target:
// ≤ 100 ms.
func BenchmarkLoadSession10k(b *testing.B) {
	root, cwd := b.TempDir(), "/work/project"
	logTurns(b, root, "sess_bench", cwd, 10000)
	params := acp.LoadSessionRequest{SessionID: "sess_bench", Cwd: "/work/project", McpServers: []acp.McpServer{}}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		br := New(Config{StateDir: root, Tools: tools.NewRegistry()})
		in, stop := io.Pipe()
		out := &countingWriter{}
		conn := br.Serve(in, out)
		b.StartTimer()
		if _, err := load(br, params); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if out.lines < 6600 {
			b.Fatalf("%d updates", out.lines)
		}
		br.session("sess_bench").agent.Store.Close()
		stop.Close()
		<-conn.Done()
		b.StartTimer()
	}
}

// TestLoadReplaysOnce: a load sends the history once through the replay
// presenter, then live events go through a live presenter (the user's
// message is not echoed).
func TestLoadReplaysOnce(t *testing.T) {
	root, cwd := t.TempDir(), t.TempDir()
	logTurns(t, root, "s1", cwd, 21)
	br := New(Config{StateDir: root, Tools: tools.NewRegistry()})
	c := &recordingClient{}
	br.SetClient(c)
	params := acp.LoadSessionRequest{SessionID: "s1", Cwd: cwd, McpServers: []acp.McpServer{}}
	if _, err := load(br, params); err != nil {
		t.Fatal(err)
	}
	if got := c.kinds(); got != "user_message_chunk agent_thought_chunk agent_message_chunk tool_call tool_call_update "+
		"agent_thought_chunk agent_message_chunk tool_call tool_call_update agent_thought_chunk agent_message_chunk tool_call tool_call_update agent_message_chunk" {
		t.Errorf("replay: %s", got)
	}
	s := br.session("s1")
	c.sent = nil
	s.agent.Store.Emit(session.UserMessage{Turn: 2, Content: []tools.Content{tools.Text("live")}})
	s.agent.Store.Emit(session.Title{Title: "t"})
	if got := c.kinds(); got != "session_info_update" {
		t.Errorf("live after load: %s", got)
	}
	if ev := s.agent.Store.Events(); len(ev) != 23 || ev[22].Seq != 22 {
		t.Errorf("%d events after load", len(ev))
	}
	s.agent.Store.Close()
	// A second load of the same id while the first is loading is refused.
	if !br.loads.claim("s1") {
		t.Fatal("claim failed")
	}
	_, err := load(br, params)
	var ae *acp.Error
	if e, ok := err.(*acp.Error); ok {
		ae = e
	}
	if ae == nil || ae.Code != acp.CodeInvalidParams {
		t.Errorf("second load: %v", err)
	}
	br.loads.release("s1")
}

// load runs both stages of a session/load.
func load(br *Bridge, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	run, err := br.LoadSession(context.Background(), p)
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	return run(context.Background())
}

// nopClient is an acp.Client that drops what it is sent and answers every
// call with a zero result; test clients embed it.
type nopClient struct{}

func (nopClient) SessionUpdate(context.Context, acp.SessionNotification) error { return nil }
func (nopClient) RequestPermission(context.Context, acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	return acp.RequestPermissionResponse{}, nil
}
func (nopClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, nil
}
func (nopClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, nil
}
func (nopClient) CreateElicitation(context.Context, acp.CreateElicitationRequest) (acp.CreateElicitationResponse, error) {
	return acp.CreateElicitationResponse{}, nil
}
func (nopClient) CompleteElicitation(context.Context, acp.CompleteElicitationNotification) error {
	return nil
}

// recordingClient keeps the session updates it is sent.
type recordingClient struct {
	nopClient
	sent []acp.Update
}

func (c *recordingClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.sent = append(c.sent, n.Update)
	return nil
}

func (c *recordingClient) kinds() string {
	var k []string
	for _, u := range c.sent {
		k = append(k, u.SessionUpdateKind())
	}
	return strings.Join(k, " ")
}
