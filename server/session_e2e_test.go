package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/session"
)

// wireMsg is one message the agent wrote, as the tests look at it.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		SessionID string                     `json:"sessionId"`
		Update    map[string]json.RawMessage `json:"update"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// agentMsgs returns the messages the agent wrote, from the from'th on.
func agentMsgs(t *testing.T, h *harness, from int) []wireMsg {
	t.Helper()
	var out []wireMsg
	for _, l := range h.tr.Lines() {
		if l.FromClient {
			continue
		}
		var m wireMsg
		if err := json.Unmarshal(l.Raw, &m); err != nil {
			t.Fatalf("bad agent line %s: %v", l.Raw, err)
		}
		out = append(out, m)
	}
	return out[min(from, len(out)):]
}

// updatesOf keeps the session/update payloads of session sid.
func updatesOf(ms []wireMsg, sid string) []map[string]json.RawMessage {
	var out []map[string]json.RawMessage
	for _, m := range ms {
		if m.Method == "session/update" && m.Params.SessionID == sid {
			out = append(out, m.Params.Update)
		}
	}
	return out
}

func kindOf(u map[string]json.RawMessage) string {
	var k string
	_ = json.Unmarshal(u["sessionUpdate"], &k)
	return k
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// mergedFields are the parts of a tool call whose final state must be the
// same live and on replay.
var mergedFields = []string{"title", "kind", "status", "content", "locations", "rawInput", "rawOutput"}

// mergeToolCalls applies every tool_call and tool_call_update in order
// and returns each call's final state (compacted JSON per field).
func mergeToolCalls(us []map[string]json.RawMessage) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, u := range us {
		k := kindOf(u)
		if k != "tool_call" && k != "tool_call_update" {
			continue
		}
		id := str(u["toolCallId"])
		if out[id] == nil {
			out[id] = map[string]string{}
		}
		for _, f := range mergedFields {
			if v, ok := u[f]; ok {
				var b bytes.Buffer
				_ = json.Compact(&b, v)
				out[id][f] = b.String()
			}
		}
	}
	return out
}

// textOf concatenates the text of chunks of one kind.
func textOf(us []map[string]json.RawMessage, kind string) string {
	var b strings.Builder
	for _, u := range us {
		if kindOf(u) == kind {
			var c struct{ Text string }
			_ = json.Unmarshal(u["content"], &c)
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// kinds lists the update kinds, with the tool call id for tool updates.
func kinds(us []map[string]json.RawMessage) []string {
	var out []string
	for _, u := range us {
		k := kindOf(u)
		if id := str(u["toolCallId"]); id != "" {
			k += ":" + id + ":" + str(u["status"])
		}
		out = append(out, k)
	}
	return out
}

// stop ends a harness's process as stdin EOF does and waits for it.
func (h *harness) stop() {
	h.t.Helper()
	h.in.Close()
	select {
	case <-h.conn.Done():
	case <-time.After(10 * time.Second):
		h.t.Fatal("the agent did not stop")
	}
	// As the process exiting would: session logs closed, their locks
	// released.
	h.srv.Close()
}

// load sends session/load and returns the updates sent before the answer
// (checking that nothing follows the answer).
func (h *harness) load(sid, cwd string, caps map[string]any) ([]map[string]json.RawMessage, error) {
	h.t.Helper()
	init := map[string]any{"protocolVersion": 1}
	if caps != nil {
		init["clientCapabilities"] = caps
	}
	h.mustCall("initialize", init, nil)
	from := len(agentMsgs(h.t, h, 0))
	var res map[string]any
	err := h.call("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, &res)
	if err != nil {
		return nil, err
	}
	ms := h.answerThenCommands(from, sid, "the load")
	if res["modes"] == nil {
		h.t.Errorf("load answer without modes: %v", res)
	}
	return updatesOf(ms, sid), nil
}

// answerThenCommands waits for the available_commands_update of session
// sid that follows the answer to a request that opened it (new, load,
// resume, fork), the from'th message on: the answer must come first,
// then the update, with nothing of sid's in between. It returns the
// messages up to and including the answer.
func (h *harness) answerThenCommands(from int, sid, what string) []wireMsg {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ms := agentMsgs(h.t, h, from)
		answer := -1
		for i, m := range ms {
			if m.Result != nil || m.Error != nil {
				answer = i
				break
			}
		}
		if answer >= 0 {
			for _, m := range ms[:answer] {
				if m.Method == "session/update" && m.Params.SessionID == sid && string(m.Params.Update["sessionUpdate"]) == `"available_commands_update"` {
					h.t.Fatalf("%s: available_commands_update before the answer", what)
				}
			}
			for _, m := range ms[answer+1:] {
				if m.Method != "session/update" || m.Params.SessionID != sid {
					continue
				}
				if string(m.Params.Update["sessionUpdate"]) != `"available_commands_update"` {
					h.t.Fatalf("%s: the first update after the answer is %s, want available_commands_update", what, m.Params.Update["sessionUpdate"])
				}
				h.clientHasCommands(sid, deadline)
				return ms[:answer+1]
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s: no answer followed by available_commands_update: %+v", what, ms)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// logOf returns the path of session sid's log in state.
func logOf(t *testing.T, state, sid string) string {
	t.Helper()
	p, err := session.Find(state, sid)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// lastTurnEnd reads a log, checks it needs no repair, and returns its
// last event (which must end a turn).
func lastTurnEnd(t *testing.T, path string) session.TurnEnd {
	t.Helper()
	l, err := session.ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.NeedsRepair() {
		t.Fatalf("the log needs repair: %d bytes torn, %d synthetic events", l.Dropped(), l.Synthetic)
	}
	end, ok := l.Events[len(l.Events)-1].Data.(session.TurnEnd)
	if !ok {
		t.Fatalf("the log ends with %T", l.Events[len(l.Events)-1].Data)
	}
	return end
}

var termCaps = map[string]any{"_meta": map[string]any{"terminal_output": true}}

// richRecording is a turn with a read, an edit, a shell command and a
// todo_write (in that order over three steps), then a final answer; then
// a second, plain turn.
func richRecording(t *testing.T, cwd string) string {
	file := filepath.Join(cwd, "config.txt")
	if err := os.WriteFile(file, []byte("mode=DEBUG\nlevel=info\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	todos := `{"todos":[{"content":"Read the config","status":"completed"},{"content":"Switch to release","status":"in_progress"},{"content":"Run the tests","status":"pending"}]}`
	return e2etest.Replay(t,
		e2etest.ToolCalls([2]string{"read", fmt.Sprintf(`{"file_path":%q}`, file)}),
		e2etest.ToolCalls([2]string{"edit", fmt.Sprintf(`{"file_path":%q,"old_string":"DEBUG","new_string":"RELEASE"}`, file)}),
		e2etest.ToolCalls([2]string{"bash", `{"command":"grep -c RELEASE config.txt && echo TESTS_OK","description":"Run the tests"}`}, [2]string{"todo_write", todos}),
		e2etest.Text([]string{"All ", "checked."}, []string{"Done: ", "release mode."}, "stop"),
		e2etest.Text(nil, []string{"Nothing else."}, "stop"),
	)
}

// TestSessionRestartLoad runs a real turn (read, edit, shell command,
// todo_write) and a second one, stops the process, starts another on the
// same state directory, lists and loads the session, and checks that the
// replay gives every tool call the same final state as live, shows the
// prompts, thoughts, answers, plan and title, precedes the load answer,
// and that the session then continues with its history.
func TestSessionRestartLoad(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	h1 := newHarness(t, harnessOpts{replay: richRecording(t, cwd), stateDir: state, cwd: cwd})
	sid := h1.start(harnessOpts{caps: termCaps})
	h1.promptAll(sid, "Switch the config to release\nand run the tests", "Anything else?")
	live := updatesOf(agentMsgs(t, h1, 0), sid)
	h1.stop()
	if data, _ := os.ReadFile(filepath.Join(cwd, "config.txt")); string(data) != "mode=RELEASE\nlevel=info\n" {
		t.Fatalf("the edit did not happen: %q", data)
	}

	var requests []string
	var mu sync.Mutex
	fake := newFakeModel(t, func(n int, w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		requests = append(requests, string(body))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, e2etest.Text(nil, []string{"Continued."}, "stop"))
	})
	h2 := newHarness(t, harnessOpts{model: fake.client("k"), stateDir: state, cwd: cwd})
	h2.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	var list acp.ListSessionsResponse
	h2.mustCall("session/list", map[string]any{"cwd": cwd}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != sid || list.Sessions[0].Title != "Switch the config to release" ||
		list.Sessions[0].Cwd != cwd || list.NextCursor != "" {
		t.Fatalf("session/list = %+v", list)
	}
	if at, err := time.Parse(time.RFC3339, list.Sessions[0].UpdatedAt); err != nil || time.Since(at) > time.Minute || time.Since(at) < -time.Second {
		t.Errorf("updatedAt %q (%v)", list.Sessions[0].UpdatedAt, err)
	}
	var other acp.ListSessionsResponse
	h2.mustCall("session/list", map[string]any{"cwd": filepath.Join(cwd, "elsewhere")}, &other)
	if len(other.Sessions) != 0 {
		t.Errorf("another cwd lists %+v", other.Sessions)
	}

	replay, err := h2.load(sid, cwd, termCaps)
	if err != nil {
		t.Fatal(err)
	}
	liveCalls, replayCalls := mergeToolCalls(live), mergeToolCalls(replay)
	// Four calls and the card of the turn's changes (the edit).
	if len(liveCalls) != 5 || !strings.HasPrefix(liveCalls["turn1-changes"]["title"], `"Changed 1 file`) {
		t.Fatalf("live has %d tool calls, want 4 and the changes card: %v", len(liveCalls), liveCalls)
	}
	if !reflect.DeepEqual(liveCalls, replayCalls) {
		for id, lc := range liveCalls {
			if !reflect.DeepEqual(lc, replayCalls[id]) {
				t.Errorf("tool call %s\n live   %v\n replay %v", id, lc, replayCalls[id])
			}
		}
		t.Fatalf("replayed tool calls differ (live %d, replay %d)", len(liveCalls), len(replayCalls))
	}
	checkToolCallsEndRaw(t, replay)
	byTitle := map[string]map[string]string{}
	for _, c := range liveCalls {
		byTitle[c["kind"]] = c
	}
	for kind, want := range map[string]string{"read": "mode=DEBUG", "edit": "RELEASE", "execute": `"exitCode":0`, "other": "Updated todo list"} {
		if c := byTitle[`"`+kind+`"`]; c == nil || c["status"] != `"completed"` || !strings.Contains(c["rawOutput"]+c["content"], want) {
			t.Errorf("live %s call: %v", kind, c)
		}
	}
	// The shell command's terminal: the replay sends the result text the
	// model saw as one terminal_output, with the same terminal_exit.
	exits := func(us []map[string]json.RawMessage) (exit, data []string) {
		for _, u := range us {
			var m struct {
				Out  *struct{ Data string } `json:"terminal_output"`
				Exit json.RawMessage        `json:"terminal_exit"`
			}
			if json.Unmarshal(u["_meta"], &m) == nil && m.Exit != nil {
				exit = append(exit, string(m.Exit))
				data = append(data, m.Out.Data)
			}
		}
		return exit, data
	}
	liveExit, _ := exits(live)
	replayExit, replayData := exits(replay)
	if !reflect.DeepEqual(liveExit, replayExit) || len(replayExit) != 1 || !strings.Contains(replayExit[0], `"exit_code":0`) ||
		replayData[0] != "1\nTESTS_OK\n" {
		t.Errorf("terminal exit live %q, replay %q with output %q", liveExit, replayExit, replayData)
	}
	for _, kind := range []string{"agent_message_chunk", "agent_thought_chunk"} {
		if l, r := textOf(live, kind), textOf(replay, kind); l != r || l == "" {
			t.Errorf("%s: live %q, replay %q", kind, l, r)
		}
	}
	if got := textOf(replay, "user_message_chunk"); got != "Switch the config to release\nand run the testsAnything else?" {
		t.Errorf("replayed user messages %q", got)
	}
	if textOf(live, "user_message_chunk") != "" {
		t.Error("live sent the user's own message back")
	}
	checkPlanBetween(t, live)
	checkPlanBetween(t, replay)
	var titles []string
	for _, u := range replay {
		if kindOf(u) == "session_info_update" {
			titles = append(titles, str(u["title"]))
		}
	}
	if !reflect.DeepEqual(titles, []string{"Switch the config to release"}) {
		t.Errorf("replayed titles %q", titles)
	}
	// A title, two prompts, five thoughts (one per model response) and
	// two answers, a plan, one tool_call and one final update per call
	// and for the turn's changes card, and one usage_update per model
	// response: nothing streamed.
	if n := len(kinds(replay)); n != 1+2+5+2+1+5*2+5 {
		t.Errorf("replay has %d updates: %q", n, kinds(replay))
	}
	// The usage figures are replayed as they were sent.
	usages := func(us []map[string]json.RawMessage) (out []string) {
		for _, u := range us {
			if kindOf(u) == "usage_update" {
				b, _ := json.Marshal(u)
				out = append(out, string(b))
			}
		}
		return out
	}
	if l, r := usages(live), usages(replay); len(l) != 5 || !reflect.DeepEqual(l, r) {
		t.Errorf("usage updates live %q, replayed %q", l, r)
	}

	// The session goes on with its history.
	if stop, err := h2.prompt(sid, "Continue"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt after load = %q, %v", stop, err)
	}
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    string `json:"content"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	if len(requests) != 1 || json.Unmarshal([]byte(requests[0]), &req) != nil {
		t.Fatalf("model requests: %d", len(requests))
	}
	var roles []string
	tools := map[string]bool{}
	for _, m := range req.Messages {
		roles = append(roles, m.Role)
		if m.Role == "tool" {
			tools[m.ToolCallID] = true
		}
	}
	want := "system user assistant tool assistant tool assistant tool tool assistant user assistant user"
	if got := strings.Join(roles, " "); got != want {
		t.Errorf("history roles\n got %s\nwant %s", got, want)
	}
	// The changes card is the user's, not a call of the model's.
	for id := range liveCalls {
		if call := id != "turn1-changes"; tools[id] != call {
			t.Errorf("the history has a result of %s: %v, want %v", id, tools[id], call)
		}
	}
	if end := lastTurnEnd(t, logOf(t, state, sid)); end.Turn != 3 || end.Reason != session.EndTurn {
		t.Errorf("last turn end %+v", end)
	}
}

// checkToolCallsEndRaw: every tool call is announced once and has exactly
// one final status.
func checkToolCallsEndRaw(t *testing.T, us []map[string]json.RawMessage) {
	t.Helper()
	announced, final := map[string]int{}, map[string]int{}
	for _, u := range us {
		id := str(u["toolCallId"])
		switch kindOf(u) {
		case "tool_call":
			announced[id]++
		case "tool_call_update":
			if announced[id] == 0 {
				t.Errorf("update of unannounced call %s", id)
			}
		default:
			continue
		}
		if s := str(u["status"]); s == "completed" || s == "failed" {
			final[id]++
		}
	}
	for id, n := range announced {
		if n != 1 || final[id] != 1 {
			t.Errorf("call %s: %d tool_call, %d final updates", id, n, final[id])
		}
	}
}

// checkPlanBetween: the plan update lies between the todo_write call's
// tool_call and its final update, and holds the whole list.
func checkPlanBetween(t *testing.T, us []map[string]json.RawMessage) {
	t.Helper()
	todoID := ""
	for _, u := range us {
		if str(u["title"]) == "Update todo list" {
			todoID = str(u["toolCallId"])
		}
	}
	plan, call, final := -1, -1, -1
	for i, u := range us {
		switch kindOf(u) {
		case "tool_call":
			if str(u["toolCallId"]) == todoID {
				call = i
			}
		case "plan":
			plan = i
			want := `[{"content":"Read the config","priority":"medium","status":"completed"},{"content":"Switch to release","priority":"medium","status":"in_progress"},{"content":"Run the tests","priority":"medium","status":"pending"}]`
			var b bytes.Buffer
			_ = json.Compact(&b, u["entries"])
			if b.String() != want {
				t.Errorf("plan entries %s", b.String())
			}
		case "tool_call_update":
			if s := str(u["status"]); str(u["toolCallId"]) == todoID && (s == "completed" || s == "failed") {
				final = i
				if s != "completed" || !strings.Contains(string(u["content"]), "Updated todo list: 1 pending, 1 in progress, 1 completed.") {
					t.Errorf("todo_write final update %s", u["content"])
				}
			}
		}
	}
	if todoID == "" || !(call >= 0 && call < plan && plan < final) {
		t.Errorf("todo tool_call at %d, plan at %d, final update at %d: %q", call, plan, final, kinds(us))
	}
}

// TestSessionCrashRepair: a log cut inside the line after a shell
// command's tool/call (the process died while the command ran) loads: the
// torn line is dropped, the call fails with the interrupted text, a
// backup of the cut log lies beside it, and the session goes on.
func TestSessionCrashRepair(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	h1 := newHarness(t, harnessOpts{replay: richRecording(t, cwd), stateDir: state, cwd: cwd})
	sid := h1.start(harnessOpts{caps: termCaps})
	if _, err := h1.prompt(sid, "go"); err != nil {
		t.Fatal(err)
	}
	h1.stop()
	path := logOf(t, state, sid)
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	cut := -1
	for i, l := range lines {
		if strings.HasPrefix(l, `{"type":"tool/call"`) && strings.Contains(l, `"bash"`) {
			cut = i
		}
	}
	if cut < 0 {
		t.Fatal("no bash call in the log")
	}
	torn := strings.Join(lines[:cut+1], "") + lines[cut+1][:len(lines[cut+1])/2]
	if err := os.WriteFile(path, []byte(torn), 0o600); err != nil {
		t.Fatal(err)
	}

	fake := newFakeModel(t, func(n int, w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), session.InterruptedText) {
			t.Errorf("the model does not see the interrupted result: %s", body)
		}
		io.WriteString(w, e2etest.Text(nil, []string{"Sorry about that."}, "stop"))
	})
	h2 := newHarness(t, harnessOpts{model: fake.client("k"), stateDir: state, cwd: cwd})
	replay, err := h2.load(sid, cwd, termCaps)
	if err != nil {
		t.Fatal(err)
	}
	checkToolCallsEndRaw(t, replay)
	last := replay[len(replay)-1]
	meta := string(last["_meta"])
	if kindOf(last) != "tool_call_update" || str(last["status"]) != "failed" || !strings.Contains(meta, session.InterruptedText) ||
		!strings.Contains(string(last["rawOutput"]), session.InterruptedText) {
		t.Errorf("last replayed update %v", last)
	}
	backups, _ := filepath.Glob(path + ".*.bak")
	if len(backups) != 1 {
		t.Fatalf("backups %q", backups)
	}
	if b, _ := os.ReadFile(backups[0]); string(b) != torn {
		t.Error("the backup is not the log as the crash left it")
	}
	if fi, _ := os.Stat(backups[0]); fi.Mode().Perm() != 0o600 {
		t.Errorf("backup mode %o", fi.Mode().Perm())
	}
	if end := lastTurnEnd(t, path); end.Reason != session.EndInterrupted {
		t.Errorf("repaired log ends with %+v", end)
	}
	if stop, err := h2.prompt(sid, "what happened?"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt after repair = %q, %v", stop, err)
	}
	if end := lastTurnEnd(t, path); end.Turn != 2 || end.Reason != session.EndTurn {
		t.Errorf("after the next turn the log ends with %+v", end)
	}
}

// TestSessionLoadErrors: unknown session, cwd mismatch, relative cwd, a
// corrupt log (left unchanged), and a session whose prompt is running.
func TestSessionLoadErrors(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	rec := e2etest.Replay(t, e2etest.Text(nil, []string{"Hi."}, "stop"),
		e2etest.ToolCalls([2]string{"card_term", `{"command":"sleep 100","description":"Wait","hang":true}`}))
	h := newHarness(t, harnessOpts{replay: rec, stateDir: state, cwd: cwd})
	sid := h.start(harnessOpts{caps: termCaps})
	if _, err := h.prompt(sid, "hello"); err != nil {
		t.Fatal(err)
	}
	load := func(id, cwd string) (int, string) {
		return rpcError(t, h, "session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}})
	}
	if code, msg := load("sess_nope", cwd); code != -32002 {
		t.Errorf("unknown session: %d %s", code, msg)
	}
	if code, msg := load(sid, t.TempDir()); code != -32602 || !strings.Contains(msg, "does not match") {
		t.Errorf("cwd mismatch: %d %s", code, msg)
	}
	if code, _ := load(sid, "relative/dir"); code != -32602 {
		t.Errorf("relative cwd: %d", code)
	}
	if code, msg := rpcError(t, h, "session/list", map[string]any{"cursor": "garbage!"}); code != -32602 {
		t.Errorf("bad cursor: %d %s", code, msg)
	}

	// A prompt is running: the session cannot be loaded.
	from := len(h.tr.AgentLines())
	_, ch, _ := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "wait"}}})
	h.waitAgentLine(from, "line two")
	if code, msg := load(sid, cwd); code != -32602 || !strings.Contains(msg, "prompt running") {
		t.Errorf("load while a prompt runs: %d %s", code, msg)
	}
	h.cancelPrompt(sid, ch, 10*time.Second)

	// Another server on the same state directory while this one holds
	// the session: -32603 LOG_LOCKED naming the holder (here this very
	// process; cmd/dsh-acp tests two processes), the log untouched.
	path := logOf(t, state, sid)
	data, _ := os.ReadFile(path)
	hx := newHarness(t, harnessOpts{stateDir: state, cwd: cwd})
	hx.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	for _, m := range []string{"session/load", "session/prompt"} {
		code, msg := rpcError(t, hx, m, map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{},
			"prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
		if code != -32603 || !strings.Contains(msg, fmt.Sprintf("pid %d", os.Getpid())) {
			t.Errorf("%s of a session held elsewhere: %d %s", m, code, msg)
		}
	}
	if now, _ := os.ReadFile(path); string(now) != string(data) {
		t.Error("the held log was changed")
	}
	hx.stop()
	h.stop()

	// A corrupt log: -32603, and the file is left as it was.
	data, _ = os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	lines[2] = "{not json\n"
	corrupt := strings.Join(lines, "")
	os.WriteFile(path, []byte(corrupt), 0o600)
	h2 := newHarness(t, harnessOpts{stateDir: state, cwd: cwd})
	h2.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	code, msg := rpcError(t, h2, "session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}})
	if code != -32603 || !strings.Contains(msg, "corrupt at line 3") || !strings.Contains(msg, "left unchanged") {
		t.Errorf("corrupt log: %d %s", code, msg)
	}
	if now, _ := os.ReadFile(path); string(now) != corrupt {
		t.Error("the corrupt log was changed")
	}
	if backups, _ := filepath.Glob(path + ".*.bak"); len(backups) != 0 {
		t.Errorf("backups of a log that was not repaired: %q", backups)
	}
}

// TestSessionReconnectAndClose: an idle session open in this process can
// be loaded again (same replay as from disk) and goes on; a closed
// session is gone from the process, its log closed, and loads again.
func TestSessionReconnectAndClose(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	rec := e2etest.Replay(t,
		e2etest.ToolCalls([2]string{"card_generic", `{"path":"src/a.go"}`}),
		e2etest.Text(nil, []string{"Read it."}, "stop"),
		e2etest.Text(nil, []string{"Again."}, "stop"),
		e2etest.Text(nil, []string{"Third."}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec, stateDir: state, cwd: cwd})
	sid := h.start(harnessOpts{})
	if _, err := h.prompt(sid, "read a.go"); err != nil {
		t.Fatal(err)
	}
	again, err := h.load(sid, cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := e2etest.CallID(0, 0, "card_generic", `{"path":"src/a.go"}`)
	if got := kinds(again); !reflect.DeepEqual(got, []string{"session_info_update", "user_message_chunk", "agent_thought_chunk", "usage_update",
		"tool_call:" + id + ":pending", "tool_call_update:" + id + ":completed", "agent_thought_chunk", "agent_message_chunk", "usage_update"}) {
		t.Errorf("reconnect replay %q", got)
	}
	// The mode chosen in this process survives a reconnect.
	h.mustCall("session/set_mode", map[string]any{"sessionId": sid, "modeId": "acceptEdits"}, nil)
	var res struct {
		Modes struct {
			CurrentModeID string `json:"currentModeId"`
		} `json:"modes"`
	}
	h.mustCall("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, &res)
	if res.Modes.CurrentModeID != "acceptEdits" {
		t.Errorf("mode after reconnect %q", res.Modes.CurrentModeID)
	}
	if stop, err := h.prompt(sid, "again"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt after reconnect = %q, %v", stop, err)
	}
	if end := lastTurnEnd(t, logOf(t, state, sid)); end.Turn != 2 {
		t.Errorf("turn after reconnect: %+v", end)
	}
	h.mustCall("session/close", map[string]any{"sessionId": sid}, nil)
	if code, _ := rpcError(t, h, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "x"}}}); code != -32002 {
		t.Errorf("prompt after close: %d", code)
	}
	fromDisk, err := h.load(sid, cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The second turn adds its user message, thought, answer and usage;
	// set_mode was logged, so the replay also says which mode was chosen.
	if n := len(kinds(fromDisk)); n != len(again)+5 || !slices.Contains(kinds(fromDisk), "current_mode_update") {
		t.Errorf("replay from disk has %d updates: %q", n, kinds(fromDisk))
	}
	if stop, err := h.prompt(sid, "third"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt after reload = %q, %v", stop, err)
	}
	if end := lastTurnEnd(t, logOf(t, state, sid)); end.Turn != 3 {
		t.Errorf("turn after reload: %+v", end)
	}
}

// TestSessionTurnEndings: end_turn, max_tokens, max_turn_requests,
// cancelled and a model error are all logged, each leaving a log that
// needs no repair, and the whole session loads in a new process.
func TestSessionTurnEndings(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	bodies := []string{e2etest.Text(nil, []string{"Fine."}, "stop"), e2etest.Text(nil, []string{"Cut"}, "length")}
	for range 8 { // MaxSteps in the harness
		bodies = append(bodies, e2etest.ToolCalls([2]string{"card_generic", `{"path":"a"}`}))
	}
	bodies = append(bodies, e2etest.ToolCalls([2]string{"card_term", `{"command":"sleep 100","description":"Wait","hang":true}`}))
	h := newHarness(t, harnessOpts{replay: e2etest.Replay(t, bodies...), stateDir: state, cwd: cwd})
	sid := h.start(harnessOpts{caps: termCaps})
	path := ""
	for _, want := range []string{session.EndTurn, session.EndMaxTokens, session.EndMaxTurnReqs} {
		stop, err := h.prompt(sid, want)
		if err != nil || string(stop) != want {
			t.Fatalf("prompt: %q, %v; want %s", stop, err, want)
		}
		path = logOf(t, state, sid)
		if end := lastTurnEnd(t, path); end.Reason != want {
			t.Errorf("logged %+v, want %s", end, want)
		}
	}
	from := len(h.tr.AgentLines())
	_, ch, _ := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "wait"}}})
	h.waitAgentLine(from, "line two")
	h.cancelPrompt(sid, ch, 10*time.Second)
	if end := lastTurnEnd(t, path); end.Reason != session.EndCancelled {
		t.Errorf("logged %+v, want cancelled", end)
	}
	if _, err := h.prompt(sid, "no more recordings"); err == nil {
		t.Fatal("a prompt without a recording succeeded")
	}
	if end := lastTurnEnd(t, path); end.Reason != session.EndError || end.Message == "" {
		t.Errorf("logged %+v, want error", end)
	}
	h.stop()
	h2 := newHarness(t, harnessOpts{stateDir: state, cwd: cwd})
	replay, err := h2.load(sid, cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkToolCallsEndRaw(t, replay)
	if n := len(mergeToolCalls(replay)); n != 9 {
		t.Errorf("%d tool calls replayed, want 9", n)
	}
}

// TestSeveralSessions: a prompt in one session does not wait for a
// running prompt in another, and each keeps its capability snapshot.
func TestSeveralSessions(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	rec := e2etest.Replay(t,
		e2etest.ToolCalls([2]string{"card_term", `{"command":"sleep 100","description":"Wait","hang":true}`}),
		e2etest.Text(nil, []string{"Quick."}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec, stateDir: state, cwd: cwd})
	a := h.start(harnessOpts{caps: termCaps})
	b := h.start(harnessOpts{})
	from := len(h.tr.AgentLines())
	_, ch, _ := h.client.Send("session/prompt", map[string]any{"sessionId": a, "prompt": []any{map[string]any{"type": "text", "text": "wait"}}})
	h.waitAgentLine(from, "line two")
	start := time.Now()
	if stop, err := h.prompt(b, "quick"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("second session: %q, %v", stop, err)
	}
	// The first session's tool runs for 100 s.
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the second session waited %v", took)
	}
	select {
	case m := <-ch:
		t.Fatalf("the first prompt ended early: %s", m.Result)
	default:
	}
	_ = h.client.Notify("session/cancel", map[string]any{"sessionId": a})
	<-ch
	us := updatesOf(agentMsgs(t, h, 0), a)
	if !strings.Contains(string(us[len(us)-1]["_meta"]), "terminal_exit") {
		t.Errorf("session a lost its terminal capability: %v", us[len(us)-1])
	}
	var list acp.ListSessionsResponse
	h.mustCall("session/list", nil, &list)
	if len(list.Sessions) != 2 || list.Sessions[0].Title == "" {
		t.Errorf("list = %+v", list)
	}
	if textOf(updatesOf(agentMsgs(t, h, 0), b), "agent_message_chunk") != "Quick." {
		t.Error("session b's answer went elsewhere")
	}
}

// clientHasCommands waits, until deadline, for the client to have
// decoded an available_commands_update of sid: the transcript records a
// line as it is written, the client's list of updates a moment later,
// so a test counting updates from here counts them all.
func (h *harness) clientHasCommands(sid string, deadline time.Time) {
	h.t.Helper()
	for {
		h.mu.Lock()
		got := false
		for _, n := range h.updates {
			if string(n.SessionID) == sid && n.Update.SessionUpdateKind() == acp.UpdateAvailableCommands {
				got = true
				break
			}
		}
		h.mu.Unlock()
		if got {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the client never got the commands of %s", sid)
		}
		time.Sleep(time.Millisecond)
	}
}
