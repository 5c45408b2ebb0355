package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/session"
)

// rpc is one JSON-RPC message as read from stdout.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
	Params json.RawMessage `json:"params"`
}

// request sends a request with id and returns its answer and the
// notifications before it.
func (p *proc) request(t *testing.T, id int, method string, params any) (rpc, []rpc) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	p.send(t, string(b))
	var notes []rpc
	for {
		var m rpc
		if err := json.Unmarshal(p.next(t), &m); err != nil {
			t.Fatal(err)
		}
		if string(m.ID) == fmt.Sprint(id) && m.Method == "" {
			if m.Error == nil && opens[method] {
				p.commands(t)
			}
			return m, notes
		}
		notes = append(notes, m)
	}
}

// opens are the methods that open a session: their answer is followed
// by the session's slash commands.
var opens = map[string]bool{"session/new": true, "session/load": true, "session/resume": true, "session/fork": true}

// commands reads the available_commands_update that follows the answer
// to a request that opened a session; any other line is an error.
func (p *proc) commands(t *testing.T) {
	t.Helper()
	var m struct {
		Method string `json:"method"`
		Params struct {
			Update struct {
				Kind string `json:"sessionUpdate"`
			} `json:"update"`
		} `json:"params"`
	}
	line := p.next(t)
	if err := json.Unmarshal(line, &m); err != nil || m.Method != "session/update" || m.Params.Update.Kind != "available_commands_update" {
		t.Fatalf("after the answer: %s, want the available_commands_update", line)
	}
}

func prompt(text string) []any { return []any{map[string]any{"type": "text", "text": text}} }

// TestTwoProcessesOneStateDir: two agents on one state
// directory. While A holds a session, B's load and prompt of it fail
// with -32603 LOG_LOCKED naming A's pid, and A goes on; once A closes
// it, B loads every turn A made and adds its own; after B is killed
// with SIGKILL a third process loads all of it: no answer lost, no
// LOG_CORRUPT.
func TestTwoProcessesOneStateDir(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	env := []string{"DSH_STATE_DIR=" + state}
	a := startProcWith(t, env, "--replay", e2etest.Replay(t, e2etest.Text(nil, []string{"one."}, "stop"), e2etest.Text(nil, []string{"two."}, "stop")))
	b := startProcWith(t, env, "--replay", e2etest.Replay(t, e2etest.Text(nil, []string{"three."}, "stop")))
	for _, p := range []*proc{a, b} {
		p.request(t, 1, "initialize", map[string]any{"protocolVersion": 1})
	}
	res, _ := a.request(t, 2, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	var created struct{ SessionID string }
	if err := json.Unmarshal(res.Result, &created); err != nil || created.SessionID == "" {
		t.Fatalf("session/new: %s", res.Result)
	}
	sid := created.SessionID
	if res, _ := a.request(t, 3, "session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("first")}); res.Error != nil {
		t.Fatalf("A's first prompt: %+v", res.Error)
	}
	path, err := session.Find(state, sid)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)

	apid := a.cmd.Process.Pid
	for i, m := range []string{"session/load", "session/prompt"} {
		res, notes := b.request(t, 10+i, m, map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}, "prompt": prompt("steal")})
		if res.Error == nil || res.Error.Code != -32603 || res.Error.Data["reason"] != "LOG_LOCKED" ||
			res.Error.Data["pid"] != float64(apid) || !strings.Contains(res.Error.Message, fmt.Sprintf("pid %d", apid)) {
			t.Fatalf("B's %s of A's session: %+v, want -32603 LOG_LOCKED naming pid %d", m, res.Error, apid)
		}
		if len(notes) != 0 {
			t.Errorf("B's refused %s sent %d updates", m, len(notes))
		}
	}
	if now, _ := os.ReadFile(path); string(now) != string(before) {
		t.Fatal("B's refused calls changed the log")
	}
	if res, _ := a.request(t, 4, "session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("second")}); res.Error != nil {
		t.Fatalf("A's second prompt: %+v", res.Error)
	}
	if res, _ := a.request(t, 5, "session/close", map[string]any{"sessionId": sid}); res.Error != nil {
		t.Fatalf("A's close: %+v", res.Error)
	}

	res, notes := b.request(t, 20, "session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}})
	if res.Error != nil {
		t.Fatalf("B's load after A closed: %+v", res.Error)
	}
	replayed := ""
	for _, n := range notes {
		replayed += string(n.Params)
	}
	for _, want := range []string{"first", "one.", "second", "two."} {
		if !strings.Contains(replayed, `"text":"`+want+`"`) {
			t.Errorf("B's replay lacks %q", want)
		}
	}
	if res, _ := b.request(t, 21, "session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("third")}); res.Error != nil {
		t.Fatalf("B's prompt: %+v", res.Error)
	}
	if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-b.done

	c := startProcWith(t, env, "--replay", e2etest.Replay(t))
	c.request(t, 1, "initialize", map[string]any{"protocolVersion": 1})
	res, notes = c.request(t, 2, "session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}})
	if res.Error != nil {
		t.Fatalf("a third process's load after B was killed: %+v", res.Error)
	}
	replayed = ""
	for _, n := range notes {
		replayed += string(n.Params)
	}
	for _, want := range []string{"first", "one.", "second", "two.", "third", "three."} {
		if !strings.Contains(replayed, `"text":"`+want+`"`) {
			t.Errorf("the final replay lacks %q", want)
		}
	}
	ld, err := session.ReadLog(path)
	if err != nil {
		t.Fatalf("the log: %v", err)
	}
	turns := 0
	for _, ev := range ld.Events {
		if _, ok := ev.Data.(session.TurnEnd); ok {
			turns++
		}
	}
	if turns != 3 {
		t.Errorf("%d turns logged, want 3", turns)
	}
	a.stdin.Close()
	c.stdin.Close()
	a.wait(t)
	c.wait(t)
}
