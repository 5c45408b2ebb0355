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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/session"
)

// modelRequests is a fake model's view of the requests it was sent.
type modelRequests struct {
	mu   sync.Mutex
	reqs []modelRequest
}

// modelRequest is the part of a chat-completions body the tests read.
type modelRequest struct {
	Messages []struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID string `json:"id"`
		} `json:"tool_calls"`
	} `json:"messages"`
}

func (m *modelRequests) add(t *testing.T, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req modelRequest
	if err := json.Unmarshal(body, &req); err != nil {
		t.Errorf("model request %s: %v", body, err)
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
}

func (m *modelRequests) get(i int) modelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i >= len(m.reqs) {
		return modelRequest{}
	}
	return m.reqs[i]
}

// roles is the request's message roles, with the user and assistant
// texts: "user:first assistant(tools) tool assistant:Read it. ...".
func (r modelRequest) roles() string {
	var out []string
	for _, m := range r.Messages {
		switch {
		case m.Role == "system":
			continue
		case len(m.ToolCalls) > 0:
			out = append(out, m.Role+"(tools)")
		case m.Role == "tool":
			out = append(out, "tool")
		default:
			out = append(out, m.Role+":"+m.Content)
		}
	}
	return strings.Join(out, " ")
}

// textModel is a fake endpoint that records each request and answers it
// with the text "Answer N." (N from 1).
func textModel(t *testing.T, reqs *modelRequests) *fakeModel {
	return newFakeModel(t, func(n int, w http.ResponseWriter, r *http.Request) {
		reqs.add(t, r)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, e2etest.Text(nil, []string{fmt.Sprintf("Answer %d.", n)}, "stop"))
	})
}

// onlyResponse checks that the agent wrote, since the from'th message,
// the response to the last call and then only session sid's slash
// commands (available_commands_update): nothing is replayed.
func onlyResponse(t *testing.T, h *harness, from int, sid, what string) {
	t.Helper()
	h.answerThenCommands(from, sid, what)
	ms := agentMsgs(t, h, from)
	if len(ms) != 2 || ms[0].Result == nil || string(ms[1].Params.Update["sessionUpdate"]) != `"available_commands_update"` {
		t.Errorf("%s: the agent wrote %d messages, want only the response and the commands: %+v", what, len(ms), ms)
	}
}

// TestSessionResume: a session prompted in one process is resumed in a
// new one: the answer carries the logged mode, no update is replayed,
// and the next prompt's model request holds the whole history. Resumed
// in the process that holds it, a session keeps the files it observed:
// an edit after the resume needs no new read.
func TestSessionResume(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	file := filepath.Join(cwd, "config.txt")
	if err := os.WriteFile(file, []byte("mode=DEBUG\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := e2etest.Replay(t,
		e2etest.ToolCalls([2]string{"read", fmt.Sprintf(`{"file_path":%q}`, file)}),
		e2etest.Text(nil, []string{"Read it."}, "stop"),
		e2etest.ToolCalls([2]string{"edit", fmt.Sprintf(`{"file_path":%q,"old_string":"DEBUG","new_string":"RELEASE"}`, file)}),
		e2etest.Text(nil, []string{"Edited."}, "stop"))
	h1 := newHarness(t, harnessOpts{replay: rec, stateDir: state, cwd: cwd})
	sid := h1.start(harnessOpts{})
	if stop, err := h1.prompt(sid, "first"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("first prompt = %q, %v", stop, err)
	}
	// Resumed here: nothing replayed, and the read is still known.
	from := len(agentMsgs(t, h1, 0))
	var res acp.ResumeSessionResponse
	h1.mustCall("session/resume", map[string]any{"sessionId": sid, "cwd": cwd}, &res)
	onlyResponse(t, h1, from, sid, "resume in the same process")
	if stop, err := h1.prompt(sid, "edit it"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("edit prompt = %q, %v", stop, err)
	}
	if data, _ := os.ReadFile(file); string(data) != "mode=RELEASE\n" {
		t.Fatalf("the edit after the resume did not happen (%q): %v", data, finalStatuses(h1.sessionUpdates()))
	}
	h1.mustCall("session/set_mode", map[string]any{"sessionId": sid, "modeId": "acceptEdits"}, nil)
	// Another agent on the same state directory cannot resume (nor delete)
	// the session while this one has it open.
	other := newHarness(t, harnessOpts{stateDir: state, cwd: cwd})
	other.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	for _, m := range []string{"session/resume", "session/delete"} {
		if code, msg := rpcError(t, other, m, map[string]any{"sessionId": sid, "cwd": cwd}); code != -32603 || !strings.Contains(msg, "in another process") {
			t.Errorf("%s of a session open elsewhere: %d %s", m, code, msg)
		}
	}
	h1.stop()

	var reqs modelRequests
	h2 := newHarness(t, harnessOpts{model: textModel(t, &reqs).client("k"), stateDir: state, cwd: cwd})
	h2.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	from = len(agentMsgs(t, h2, 0))
	res = acp.ResumeSessionResponse{}
	h2.mustCall("session/resume", map[string]any{"sessionId": sid, "cwd": cwd}, &res)
	onlyResponse(t, h2, from, sid, "resume in a new process")
	if res.Modes == nil || res.Modes.CurrentModeID != "acceptEdits" || len(res.Modes.AvailableModes) != 4 {
		t.Errorf("resume answer modes %+v", res.Modes)
	}
	if stop, err := h2.prompt(sid, "third"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt after resume = %q, %v", stop, err)
	}
	want := "user:first assistant(tools) tool assistant:Read it. user:edit it assistant(tools) tool assistant:Edited. user:third"
	if got := reqs.get(0).roles(); got != want {
		t.Errorf("history after resume\n got %s\nwant %s", got, want)
	}
	if end := lastTurnEnd(t, logOf(t, state, sid)); end.Turn != 3 || end.Reason != session.EndTurn {
		t.Errorf("last turn end %+v", end)
	}
	if got := joined(h2.sessionUpdates(), acp.UpdateAgentMessageChunk); got != "Answer 1." {
		t.Errorf("the new process sent messages %q", got)
	}

	// Errors as load's.
	if code, _ := rpcError(t, h2, "session/resume", map[string]any{"sessionId": "sess_nope", "cwd": cwd}); code != -32002 {
		t.Errorf("resume of an unknown session: %d", code)
	}
	if code, msg := rpcError(t, h2, "session/resume", map[string]any{"sessionId": sid, "cwd": t.TempDir()}); code != -32602 || !strings.Contains(msg, "does not match") {
		t.Errorf("resume with another cwd: %d %s", code, msg)
	}
}

// TestSessionResumeCorruptPayload: a resume answers without decoding
// every event, so a payload that does not decode surfaces at the next
// prompt, as LOG_CORRUPT, and the log is left as it was.
func TestSessionResumeCorruptPayload(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	h1 := newHarness(t, harnessOpts{replay: e2etest.Replay(t, e2etest.Text(nil, []string{"Hi."}, "stop")), stateDir: state, cwd: cwd})
	sid := h1.start(harnessOpts{})
	if _, err := h1.prompt(sid, "hello"); err != nil {
		t.Fatal(err)
	}
	h1.stop()
	path := logOf(t, state, sid)
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	if !strings.Contains(lines[3], `"type":"user/message"`) {
		t.Fatalf("line 4 is %s", lines[3])
	}
	lines[3] = strings.Replace(lines[3], `"content":[`, `"content":[bad`, 1)
	corrupt := strings.Join(lines, "")
	os.WriteFile(path, []byte(corrupt), 0o600)

	h2 := newHarness(t, harnessOpts{stateDir: state, cwd: cwd})
	h2.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	h2.mustCall("session/resume", map[string]any{"sessionId": sid, "cwd": cwd}, nil)
	code, msg := rpcError(t, h2, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "x"}}})
	if code != -32603 || !strings.Contains(msg, "corrupt at line 4") {
		t.Errorf("prompt after resuming a corrupt log: %d %s", code, msg)
	}
	if now, _ := os.ReadFile(path); string(now) != corrupt {
		t.Error("the corrupt log was changed")
	}
}

// TestSessionDelete: a deleted session is gone from session/list, load
// and resume of it are -32002, and its log and the log's backup are
// removed; a session deleted while its prompt runs is closed first (the
// prompt ends cancelled) and its log does not come back.
func TestSessionDelete(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	h1 := newHarness(t, harnessOpts{replay: richRecording(t, cwd), stateDir: state, cwd: cwd})
	sid := h1.start(harnessOpts{})
	if _, err := h1.prompt(sid, "go"); err != nil {
		t.Fatal(err)
	}
	h1.stop()
	// Tear the log's last line, so that the next load repairs it and
	// leaves a backup beside it.
	path := logOf(t, state, sid)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:len(data)-10], 0o600)

	rec := e2etest.Replay(t, e2etest.ToolCalls([2]string{"card_term", `{"command":"sleep 100","description":"Wait","hang":true}`}))
	h2 := newHarness(t, harnessOpts{replay: rec, stateDir: state, cwd: cwd})
	if _, err := h2.load(sid, cwd, termCaps); err != nil {
		t.Fatal(err)
	}
	if backups, _ := filepath.Glob(path + ".*.bak"); len(backups) != 1 {
		t.Fatalf("backups before the delete: %q", backups)
	}
	h2.mustCall("session/delete", map[string]any{"sessionId": sid}, nil)
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
	if len(left) != 0 {
		t.Errorf("files left after the delete: %q", left)
	}
	var list acp.ListSessionsResponse
	h2.mustCall("session/list", map[string]any{}, &list)
	if len(list.Sessions) != 0 {
		t.Errorf("session/list after the delete: %+v", list.Sessions)
	}
	for _, m := range []string{"session/load", "session/resume"} {
		if code, _ := rpcError(t, h2, m, map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}); code != -32002 {
			t.Errorf("%s after the delete: %d", m, code)
		}
	}
	if code, _ := rpcError(t, h2, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "x"}}}); code != -32002 {
		t.Errorf("prompt after the delete: %d", code)
	}
	if code, _ := rpcError(t, h2, "session/delete", map[string]any{"sessionId": sid}); code != -32002 {
		t.Errorf("second delete: %d", code)
	}

	// A running session: closed, then deleted; its turn's last events
	// do not bring the log back.
	var ns acp.NewSessionResponse
	h2.mustCall("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &ns)
	from := len(h2.tr.AgentLines())
	_, ch, _ := h2.client.Send("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "wait"}}})
	h2.waitAgentLine(from, "line two")
	running := logOf(t, state, ns.SessionID)
	h2.mustCall("session/delete", map[string]any{"sessionId": ns.SessionID}, nil)
	select {
	case m := <-ch:
		var pr acp.PromptResponse
		if m.Error != nil || json.Unmarshal(m.Result, &pr) != nil || pr.StopReason != acp.StopCancelled {
			t.Errorf("the deleted session's prompt answered %s / %v", m.Result, m.Error)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the deleted session's prompt did not end")
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(running); !os.IsNotExist(err) {
		t.Errorf("the deleted session's log exists after its turn ended: %v", err)
	}
	list = acp.ListSessionsResponse{}
	h2.mustCall("session/list", map[string]any{}, &list)
	if len(list.Sessions) != 0 {
		t.Errorf("session/list after deleting the running session: %+v", list.Sessions)
	}
}

// forkRecording is two turns: a tool call step then an answer, then a
// plain answer.
func forkRecording(t *testing.T) string {
	return e2etest.Replay(t,
		e2etest.ToolCalls([2]string{"card_generic", `{"path":"src/a.go"}`}),
		e2etest.Text([]string{"Thinking."}, []string{"Read it."}, "stop"),
		e2etest.Text(nil, []string{"Second."}, "stop"))
}

// TestSessionFork forks a session whole and at a message, checks the
// errors, then, in a new process, that each fork's replay equals the
// source's up to the fork point and that all three go on independently.
func TestSessionFork(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	h1 := newHarness(t, harnessOpts{replay: forkRecording(t), stateDir: state, cwd: cwd})
	sid := h1.start(harnessOpts{})
	h1.promptAll(sid, "first", "second")
	h1.mustCall("session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"}, nil)
	// set_mode's answer is followed by the option list with the new mode.
	waitFor(t, func() bool {
		ms := agentMsgs(t, h1, 0)
		return len(ms) > 0 && ms[len(ms)-1].Method == "session/update" && kindOf(ms[len(ms)-1].Params.Update) == "config_option_update"
	})
	before, _ := os.ReadFile(logOf(t, state, sid))
	fork := func(meta map[string]any) string {
		t.Helper()
		params := map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}
		if meta != nil {
			params["_meta"] = meta
		}
		from := len(agentMsgs(t, h1, 0))
		var res acp.ForkSessionResponse
		h1.mustCall("session/fork", params, &res)
		onlyResponse(t, h1, from, res.SessionID, "fork")
		if res.SessionID == "" || res.SessionID == sid || res.Modes == nil || res.Modes.CurrentModeID != "plan" {
			t.Errorf("fork answer %+v", res)
		}
		return res.SessionID
	}
	whole := fork(nil)
	cut := fork(map[string]any{"messageId": "turn1-step1"})
	if after, _ := os.ReadFile(logOf(t, state, sid)); !bytes.Equal(after, before) {
		t.Error("forking changed the source's log")
	}
	for _, c := range []struct {
		params map[string]any
		code   int
	}{
		{map[string]any{"sessionId": "sess_nope", "cwd": cwd}, -32002},
		{map[string]any{"sessionId": sid, "cwd": t.TempDir()}, -32602},
		{map[string]any{"sessionId": sid, "cwd": cwd, "_meta": map[string]any{"messageId": "turn9-step1"}}, -32602},
		{map[string]any{"sessionId": sid, "cwd": cwd, "_meta": map[string]any{"messageId": 7}}, -32602},
	} {
		if code, msg := rpcError(t, h1, "session/fork", c.params); code != c.code {
			t.Errorf("fork %v: %d %s, want %d", c.params, code, msg, c.code)
		}
	}
	var list acp.ListSessionsResponse
	h1.mustCall("session/list", map[string]any{"cwd": cwd}, &list)
	if len(list.Sessions) != 3 {
		t.Errorf("session/list after two forks: %+v", list.Sessions)
	}
	h1.stop()

	var reqs modelRequests
	h2 := newHarness(t, harnessOpts{model: textModel(t, &reqs).client("k"), stateDir: state, cwd: cwd})
	replays := map[string][]string{}
	for _, id := range []string{sid, whole, cut} {
		us, err := h2.load(id, cwd, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range us {
			b, _ := json.Marshal(u)
			replays[id] = append(replays[id], string(b))
		}
	}
	src := replays[sid]
	if !reflect.DeepEqual(replays[whole], src) {
		t.Errorf("the whole fork's replay differs from the source's\n fork   %q\n source %q", replays[whole], src)
	}
	// The cut: the title, the prompt, the step's thought, its usage and
	// its call.
	if n := len(replays[cut]); n != 6 || !reflect.DeepEqual(replays[cut], src[:n]) {
		t.Errorf("the cut fork's replay is not the source's first 6 updates\n fork   %q\n source %q", replays[cut], src)
	}

	// All three go on, each with its own history.
	for i, c := range []struct{ id, prompt, history string }{
		{cut, "cut-next", "user:first assistant(tools) tool user:cut-next"},
		{sid, "source-next", "user:first assistant(tools) tool assistant:Read it. user:second assistant:Second. user:source-next"},
		{whole, "whole-next", "user:first assistant(tools) tool assistant:Read it. user:second assistant:Second. user:whole-next"},
	} {
		if stop, err := h2.prompt(c.id, c.prompt); err != nil || stop != acp.StopEndTurn {
			t.Fatalf("prompt %q = %q, %v", c.prompt, stop, err)
		}
		if got := reqs.get(i).roles(); got != c.history {
			t.Errorf("%s: history\n got %s\nwant %s", c.prompt, got, c.history)
		}
	}
	if end := lastTurnEnd(t, logOf(t, state, cut)); end.Turn != 2 {
		t.Errorf("the cut fork's next turn is %d, want 2", end.Turn)
	}
	ld, err := session.ReadLog(logOf(t, state, whole))
	if err != nil || ld.Header.ForkedFrom != sid {
		t.Errorf("the fork's header %+v (%v)", ld.Header, err)
	}
}

// syncBuffer is a bytes.Buffer safe for the agent's log writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestNotices: a model request retried after HTTP 429 gives the user a
// `notice` (warning) during the turn when the editor advertised
// session.notices, and only a log line otherwise; a load never replays
// it.
func TestNotices(t *testing.T) {
	for _, withCap := range []bool{true, false} {
		t.Run(fmt.Sprintf("notices=%v", withCap), func(t *testing.T) {
			state, cwd := t.TempDir(), t.TempDir()
			fake := newFakeModel(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.WriteHeader(http.StatusTooManyRequests)
					io.WriteString(w, `{"error":{"message":"Rate limit reached"}}`)
					return
				}
				io.WriteString(w, e2etest.Text(nil, []string{"Fine."}, "stop"))
			})
			logs := &syncBuffer{}
			h := newHarness(t, harnessOpts{model: fake.client("k"), stateDir: state, cwd: cwd, logs: logs})
			var caps map[string]any
			if withCap {
				caps = map[string]any{"session": map[string]any{"notices": map[string]any{}}}
			}
			sid := h.start(harnessOpts{caps: caps})
			if stop, err := h.prompt(sid, "hi"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			var notices []acp.Notice
			for _, u := range h.sessionUpdates() {
				if n, ok := u.(acp.Notice); ok {
					notices = append(notices, n)
				}
			}
			logged := strings.Contains(logs.String(), "notice: Retrying the model request")
			if withCap {
				if len(notices) != 1 || notices[0].Severity != acp.NoticeWarning || notices[0].Title != "Retrying the model request" ||
					!strings.Contains(notices[0].Description, "HTTP 429") || !strings.Contains(notices[0].Description, "Rate limit reached") ||
					!strings.Contains(notices[0].Description, "Attempt 1 of 3") {
					t.Errorf("notices %+v", notices)
				}
				if logged {
					t.Error("a notice sent to the editor was also logged as one it could not show")
				}
			} else {
				if len(notices) != 0 {
					t.Errorf("notices sent without the capability: %+v", notices)
				}
				if !logged {
					t.Errorf("the notice was not logged:\n%s", logs.String())
				}
			}
			if got := joined(h.sessionUpdates(), acp.UpdateAgentMessageChunk); got != "Fine." {
				t.Errorf("the conversation shows %q", got)
			}
			h.stop()
			h2 := newHarness(t, harnessOpts{stateDir: state, cwd: cwd})
			replay, err := h2.load(sid, cwd, caps)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range replay {
				if kindOf(u) == acp.UpdateNotice {
					t.Errorf("a load replayed a notice: %v", u)
				}
			}
		})
	}
}

// TestAdditionalDirectories: in acceptEdits, files in an additional
// directory are read (through the editor, as files of the project are),
// edited and written without asking, while a read outside every root
// asks; the directories are listed and kept in the log; a relative or
// missing directory is -32602 on new, load, resume and fork.
func TestAdditionalDirectories(t *testing.T) {
	state, cwd, extra, outside := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	notes, created, other := filepath.Join(extra, "notes.txt"), filepath.Join(extra, "new.txt"), filepath.Join(outside, "o.txt")
	os.WriteFile(notes, []byte("alpha\n"), 0o644)
	os.WriteFile(other, []byte("other\n"), 0o644)
	rec := e2etest.Replay(t,
		e2etest.ToolCalls([2]string{"read", fmt.Sprintf(`{"file_path":%q}`, notes)}),
		e2etest.ToolCalls([2]string{"edit", fmt.Sprintf(`{"file_path":%q,"old_string":"alpha","new_string":"beta"}`, notes)}),
		e2etest.ToolCalls([2]string{"write", fmt.Sprintf(`{"file_path":%q,"content":"new\n"}`, created)}),
		e2etest.ToolCalls([2]string{"read", fmt.Sprintf(`{"file_path":%q}`, other)}),
		e2etest.Text(nil, []string{"Done."}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec, stateDir: state, cwd: cwd, mode: "acceptEdits"})
	pc := &permissionClient{outcome: "allow-once"}
	var mu sync.Mutex
	var editorReads []string
	h.client.OnRequest = func(method string, params json.RawMessage) (any, error) {
		if method != "fs/read_text_file" {
			return pc.handle(method, params)
		}
		var req acp.ReadTextFileRequest
		_ = json.Unmarshal(params, &req)
		mu.Lock()
		editorReads = append(editorReads, req.Path)
		mu.Unlock()
		data, err := os.ReadFile(req.Path)
		if err != nil {
			return nil, &acp.Error{Code: acp.CodeResourceNotFound, Message: err.Error()}
		}
		return acp.ReadTextFileResponse{Content: string(data)}, nil
	}
	h.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true}}}, nil)
	for _, dirs := range [][]string{{"relative/dir"}, {filepath.Join(extra, "missing")}, {notes}} {
		if code, msg := rpcError(t, h, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "additionalDirectories": dirs}); code != -32602 {
			t.Errorf("session/new with %q: %d %s", dirs, code, msg)
		}
	}
	var ns acp.NewSessionResponse
	h.mustCall("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "additionalDirectories": []string{extra}}, &ns)
	sid := ns.SessionID
	if stop, err := h.prompt(sid, "work in the other root"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if got := finalStatuses(h.sessionUpdates()); got != "completed,completed,completed,completed" {
		t.Errorf("final statuses %s", got)
	}
	if data, _ := os.ReadFile(notes); string(data) != "beta\n" {
		t.Errorf("notes.txt = %q", data)
	}
	if data, _ := os.ReadFile(created); string(data) != "new\n" {
		t.Errorf("new.txt = %q", data)
	}
	if pc.count() != 1 || pc.asked[0].ToolCall.Title == nil || !strings.Contains(*pc.asked[0].ToolCall.Title, "o.txt") {
		t.Errorf("asked %d times (want once, for the read outside): %+v", pc.count(), pc.asked)
	}
	// The editor serves reads but not writes: the file tools use the disk
	// and only compare the editor's text with it, for
	// the read and after the edit of notes.txt; never for the new file or
	// the file outside every root.
	mu.Lock()
	if !reflect.DeepEqual(editorReads, []string{notes, notes}) {
		t.Errorf("reads through the editor %q, want %s twice", editorReads, notes)
	}
	mu.Unlock()

	var list acp.ListSessionsResponse
	h.mustCall("session/list", map[string]any{"cwd": cwd}, &list)
	if len(list.Sessions) != 1 || !reflect.DeepEqual(list.Sessions[0].AdditionalDirectories, []string{extra}) {
		t.Errorf("session/list %+v", list.Sessions)
	}
	path := logOf(t, state, sid)
	if ld, err := session.ReadLog(path); err != nil || !reflect.DeepEqual(ld.Header.AdditionalDirectories, []string{extra}) {
		t.Errorf("log header %+v (%v)", ld.Header, err)
	}
	for _, m := range []string{"session/load", "session/resume", "session/fork"} {
		params := map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}, "additionalDirectories": []string{"rel"}}
		if code, msg := rpcError(t, h, m, params); code != -32602 {
			t.Errorf("%s with a relative directory: %d %s", m, code, msg)
		}
		params["additionalDirectories"] = []string{filepath.Join(outside, "gone")}
		if code, msg := rpcError(t, h, m, params); code != -32602 {
			t.Errorf("%s with a missing directory: %d %s", m, code, msg)
		}
	}
	// Resumed with another list: the log records it.
	h.mustCall("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "additionalDirectories": []string{outside, extra}}, nil)
	ld, err := session.ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	last, ok := ld.Events[len(ld.Events)-1].Data.(session.Directories)
	if !ok || !reflect.DeepEqual(last.Dirs, []string{outside, extra}) {
		t.Errorf("the log ends with %+v", ld.Events[len(ld.Events)-1].Data)
	}
}
