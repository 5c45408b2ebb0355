package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// logBigSession writes session id's log in cwd: turns of logTurns' shape
// (a read per step) with, every tenth turn, a call of an MCP tool and its
// logged definition (after the call, as recordDefinition logs it), and
// results of 100 KiB and 2 MiB among the 1 KiB ones (lines longer than
// the log reader's buffer). It returns the number of tool calls.
func logBigSession(tb testing.TB, root, id, cwd string, turns int) int {
	tb.Helper()
	l := session.NewLog(session.LogPath(root, cwd, id), session.NewHeader(id, cwd, 1700000000000))
	seq, calls := int64(0), 0
	add := func(d session.Data) {
		if err := l.Append(session.Event{Seq: seq, Time: 1700000000000 + seq, Data: d}); err != nil {
			tb.Fatal(err)
		}
		seq++
	}
	def := json.RawMessage(`{"server":"notes","tool":"read_note","title":"Read a note","readOnly":true}`)
	for turn := 1; turn <= turns; turn++ {
		add(session.TurnStart{Turn: turn})
		add(session.UserMessage{Turn: turn, Content: []tools.Content{tools.Text(fmt.Sprintf("Please go on with %d.", turn))}})
		for step := 1; step <= 3; step++ {
			call, name, args := fmt.Sprintf("call_%d_%d", turn, step), "read", fmt.Sprintf(`{"file_path":"%s/f%d.go"}`, cwd, step)
			if turn%10 == 0 && step == 2 {
				name, args = "mcp__notes__read_note", `{"name":"todo"}`
			}
			result := strings.Repeat("     1\tpackage main // a line of a file the model read\n", 20)
			switch {
			case turn == 7 && step == 1:
				result = strings.Repeat("y", 100<<10)
			case turn == turns/2 && step == 3:
				result = strings.Repeat("z\n", 1<<20)
			}
			add(session.AssistantMessage{Turn: turn, Step: step, Text: "Reading.", ToolCalls: []session.ToolCallRef{{CallID: call, Name: name, Arguments: args}}, FinishReason: "tool_calls"})
			add(session.ToolCall{Turn: turn, Step: step, CallID: call, Name: name, Arguments: args})
			if name != "read" {
				add(session.ToolDefinition{CallID: call, Name: name, Source: sourceMCP, Definition: def})
			}
			add(session.ToolResult{Turn: turn, Step: step, CallID: call, Content: []tools.Content{tools.Text(result)}})
			calls++
		}
		add(session.AssistantMessage{Turn: turn, Step: 4, Text: "Done.", FinishReason: "stop"})
		add(session.TurnEnd{Turn: turn, Reason: session.EndTurn})
	}
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	return calls
}

// loadOutput runs a session/load of id in a fresh bridge serving a real
// connection whose output is read 512 bytes at a time (a slow client: the
// replay waits on it), and returns every line the connection wrote. With
// fromMemory the session is first resumed and its store decoded whole,
// so the load replays the events held in memory (the live session's
// path) instead of reading the log again.
func loadOutput(t *testing.T, root, id, cwd string, fromMemory bool) []byte {
	t.Helper()
	br := New(Config{StateDir: root, Tools: tools.NewRegistry()})
	in, stop := io.Pipe()
	outR, outW := io.Pipe()
	got := make(chan []byte)
	go func() {
		var all bytes.Buffer
		p := make([]byte, 512)
		for {
			n, err := outR.Read(p)
			all.Write(p[:n])
			if err != nil {
				got <- all.Bytes()
				return
			}
		}
	}()
	conn := br.Serve(in, outW)
	ctx := context.Background()
	if fromMemory {
		run, err := br.ResumeSession(ctx, acp.ResumeSessionRequest{SessionID: id, Cwd: cwd})
		if err == nil {
			_, err = run(ctx)
		}
		if err == nil {
			err = br.session(id).agent.Store.Ready()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := load(br, acp.LoadSessionRequest{SessionID: id, Cwd: cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	br.session(id).agent.Store.Close()
	stop.Close()
	<-conn.Done()
	outW.Close()
	return <-got
}

// TestLoadStreamedAsFromMemory: a session/load of a big logged session,
// its log read and decoded a line at a time as the updates go out, writes
// the very bytes that a replay of the same events held in memory writes,
// to a client that reads slowly: every update, in order. The output holds
// each call's card, the MCP calls' cards titled from their logged
// definitions, and the long results whole.
func TestLoadStreamedAsFromMemory(t *testing.T) {
	root, cwd := t.TempDir(), t.TempDir()
	calls := logBigSession(t, root, "s_big", cwd, 300)
	streamed := loadOutput(t, root, "s_big", cwd, false)
	memory := loadOutput(t, root, "s_big", cwd, true)
	if !bytes.Equal(streamed, memory) {
		a, b := bytes.Split(streamed, []byte("\n")), bytes.Split(memory, []byte("\n"))
		i := 0
		for i < min(len(a), len(b)) && bytes.Equal(a[i], b[i]) {
			i++
		}
		t.Fatalf("streamed load: %d lines, from memory %d; first difference at line %d", len(a), len(b), i+1)
	}
	lines := bytes.Split(bytes.TrimSuffix(streamed, []byte("\n")), []byte("\n"))
	next := 0 // the next call expected, in log order
	order := make([]string, 0, calls)
	for turn := 1; turn <= 300; turn++ {
		for step := 1; step <= 3; step++ {
			order = append(order, fmt.Sprintf(`"toolCallId":"call_%d_%d"`, turn, step))
		}
	}
	mcpCards := 0
	for _, l := range lines {
		if !bytes.Contains(l, []byte(`"sessionUpdate":"tool_call"`)) {
			continue
		}
		if next == len(order) || !bytes.Contains(l, []byte(order[next])) {
			t.Fatalf("tool_call %d out of order: %.200s", next, l)
		}
		next++
		if bytes.Contains(l, []byte(`"title":"Read a note`)) {
			mcpCards++
		}
	}
	if next != calls || mcpCards != 30 {
		t.Errorf("%d tool_call cards of %d, %d titled from their definitions, want 30", next, calls, mcpCards)
	}
	if !bytes.Contains(streamed, []byte(strings.Repeat(`z\n`, 1<<20))) || !bytes.Contains(streamed, []byte(strings.Repeat("y", 100<<10))) {
		t.Error("a long result is not in the replay whole")
	}
}
