package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/session"
)

// titleModel is a fake endpoint that tells title requests (no tools
// field) from turn requests. Turn requests are answered by turn (n
// counts them from 1), title requests by title, which may block; both
// bodies are kept.
type titleModel struct {
	t      *testing.T
	mu     sync.Mutex
	turns  []map[string]json.RawMessage
	titles []map[string]json.RawMessage
	// titled is signalled (non-blocking) when a title request arrives.
	titled chan struct{}
}

func newTitleModel(t *testing.T, turn func(n int, w http.ResponseWriter, r *http.Request), title func(w http.ResponseWriter, r *http.Request)) (*titleModel, *fakeModel) {
	m := &titleModel{t: t, titled: make(chan struct{}, 8)}
	f := newFakeModel(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]json.RawMessage
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("model request %s: %v", body, err)
			return
		}
		m.mu.Lock()
		if _, tools := req["tools"]; !tools {
			m.titles = append(m.titles, req)
			m.mu.Unlock()
			m.titled <- struct{}{}
			title(w, r)
			return
		}
		m.turns = append(m.turns, req)
		n := len(m.turns)
		m.mu.Unlock()
		turn(n, w, r)
	})
	return m, f
}

func (m *titleModel) titleRequests() []map[string]json.RawMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]map[string]json.RawMessage(nil), m.titles...)
}

// sse answers with body as an event stream.
func sse(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, body)
}

// titleUpdates lists the titles of h's session_info_updates.
func titleUpdates(h *harness) []string {
	var out []string
	for _, u := range h.sessionUpdates() {
		if i, ok := u.(acp.SessionInfoUpdate); ok && i.Title != nil {
			out = append(out, *i.Title)
		}
	}
	return out
}

// waitUntil polls cond for up to 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// listTitle is session sid's title in session/list.
func listTitle(t *testing.T, h *harness, sid string) string {
	t.Helper()
	var list acp.ListSessionsResponse
	h.mustCall("session/list", map[string]any{}, &list)
	for _, s := range list.Sessions {
		if s.SessionID == sid {
			return s.Title
		}
	}
	t.Fatalf("session %s not listed", sid)
	return ""
}

// TestTitleFromModel: no title request after a failed turn nor after a
// cancelled one; after the first turn that ends normally, one: streamed,
// without a tools field, with max_tokens 64, carrying the prompt and the
// answer's start. Its cleaned answer is sent as session_info_update
// after the prompt's answer, logged, and shown by session/list; later
// turns make no title request.
func TestTitleFromModel(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	release := make(chan struct{})
	m, f := newTitleModel(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`)
		case 2:
			// Held until the prompt is cancelled.
			w.Header().Set("Content-Type", "text/event-stream")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			sse(w, e2etest.LiveText([]string{"Looking."}, []string{"I fixed the date parser: ", "it read months as days."}, small))
		}
	}, func(w http.ResponseWriter, r *http.Request) {
		<-release
		sse(w, e2etest.LiveText([]string{"Naming."}, []string{`"Fix the date parser."`}, small))
	})
	h := newHarness(t, harnessOpts{model: f.client("k"), stateDir: state, cwd: cwd, titles: true})
	sid := h.start(harnessOpts{})
	if _, err := h.prompt(sid, "fix the parser\nit breaks on dates"); err == nil {
		t.Fatal("the first prompt did not fail")
	}
	_, ch, err := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []acp.ContentBlock{acp.TextBlock("try again")}})
	if err != nil {
		t.Fatal(err)
	}
	// Its body read whole (a cancel while it is sent would cut it).
	waitUntil(t, "the second turn's request", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.turns) >= 2
	})
	h.cancelPrompt(sid, ch, 5*time.Second)
	if stop, err := h.prompt(sid, "the date parser, please"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("third prompt = %q, %v", stop, err)
	}
	select {
	case <-m.titled:
	case <-time.After(10 * time.Second):
		t.Fatal("no title request after the first normal turn")
	}
	reqs := m.titleRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d title requests, want 1", len(reqs))
	}
	req := reqs[0]
	if string(req["stream"]) != "true" || string(req["max_tokens"]) != "64" || req["tools"] != nil {
		t.Errorf("title request stream %s max_tokens %s tools %s", req["stream"], req["max_tokens"], req["tools"])
	}
	var msgs []struct{ Role, Content string }
	_ = json.Unmarshal(req["messages"], &msgs)
	if len(msgs) != 2 || msgs[0].Role != "system" || msgs[1].Role != "user" ||
		msgs[1].Content != "Request:\nthe date parser, please\n\nStart of the answer:\nI fixed the date parser: it read months as days." {
		t.Errorf("title request messages %+v", msgs)
	}
	from := len(agentMsgs(t, h, 0))
	close(release)
	waitUntil(t, "the model's title", func() bool {
		ts := titleUpdates(h)
		return len(ts) > 0 && ts[len(ts)-1] == "Fix the date parser"
	})
	// After the third prompt's answer (written before the title request
	// could start), nothing else of the session in between.
	if ms := agentMsgs(t, h, from); len(ms) != 1 || string(ms[0].Params.Update["sessionUpdate"]) != `"session_info_update"` {
		t.Errorf("after the release the agent wrote %+v", ms)
	}
	if got := titleUpdates(h); strings.Join(got, "|") != "fix the parser|Fix the date parser" {
		t.Errorf("titles sent %q", got)
	}
	if got := listTitle(t, h, sid); got != "Fix the date parser" {
		t.Errorf("session/list title %q", got)
	}
	if stop, err := h.prompt(sid, "and the tests"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("fourth prompt = %q, %v", stop, err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(m.titleRequests()); n != 1 {
		t.Errorf("%d title requests after a later turn, want still 1", n)
	}
	ld, err := session.ReadLog(logOf(t, state, sid))
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	for _, ev := range ld.Events {
		if ti, ok := ev.Data.(session.Title); ok {
			logged = append(logged, ti.Title+"/"+ti.Source)
		}
	}
	if strings.Join(logged, "|") != "fix the parser/|Fix the date parser/model" {
		t.Errorf("logged titles %q", logged)
	}
	// A load replays it, as the last title.
	replay, err := h.load(sid, cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	last := ""
	for _, u := range replay {
		if string(u["sessionUpdate"]) == `"session_info_update"` {
			_ = json.Unmarshal(u["title"], &last)
		}
	}
	if last != "Fix the date parser" {
		t.Errorf("replayed title %q", last)
	}
}

// TestUserTitleWins: session/set_title stores the user's title (blanks
// collapsed) before it answers; a model title that arrives after it is
// dropped, and none is asked for once it is set; a session only logged
// (closed) can be retitled; bad titles and unknown sessions are errors.
func TestUserTitleWins(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	release := make(chan struct{})
	m, f := newTitleModel(t, func(n int, w http.ResponseWriter, r *http.Request) {
		sse(w, e2etest.LiveText([]string{"Ok."}, []string{"Answer."}, small))
	}, func(w http.ResponseWriter, r *http.Request) {
		<-release
		sse(w, e2etest.LiveText([]string{"Naming."}, []string{"The model's title"}, small))
	})
	h := newHarness(t, harnessOpts{model: f.client("k"), stateDir: state, cwd: cwd, titles: true})
	sid := h.start(harnessOpts{})
	if _, err := h.prompt(sid, "first prompt"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.titled:
	case <-time.After(10 * time.Second):
		t.Fatal("no title request")
	}
	var res acp.SetSessionTitleResponse
	h.mustCall("session/set_title", map[string]any{"sessionId": sid, "title": "  My   own\ntitle "}, &res)
	if res.Title != "My own title" {
		t.Errorf("set_title answered %q", res.Title)
	}
	if got := listTitle(t, h, sid); got != "My own title" {
		t.Errorf("listed %q right after set_title", got)
	}
	close(release)
	time.Sleep(100 * time.Millisecond)
	if got := titleUpdates(h); strings.Join(got, "|") != "first prompt|My own title" {
		t.Errorf("titles sent %q (the model's must be dropped)", got)
	}
	if _, err := h.prompt(sid, "second prompt"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(m.titleRequests()); n != 1 {
		t.Errorf("%d title requests, want 1", n)
	}
	if got := listTitle(t, h, sid); got != "My own title" {
		t.Errorf("listed %q", got)
	}
	for _, c := range []struct {
		params map[string]any
		code   int
	}{
		{map[string]any{"sessionId": sid, "title": " \n\t"}, acp.CodeInvalidParams},
		{map[string]any{"sessionId": "sess_nope", "title": "x"}, acp.CodeResourceNotFound},
		{map[string]any{"sessionId": sid}, acp.CodeInvalidParams},
	} {
		if code, msg := rpcError(t, h, "session/set_title", c.params); code != c.code {
			t.Errorf("set_title %v = %d %s, want %d", c.params, code, msg, c.code)
		}
	}
	// Closed: only logged. Retitled through its log.
	h.mustCall("session/close", map[string]any{"sessionId": sid}, nil)
	h.mustCall("session/set_title", map[string]any{"sessionId": sid, "title": "Renamed while closed"}, &res)
	if got := listTitle(t, h, sid); got != "Renamed while closed" {
		t.Errorf("listed %q after retitling a closed session", got)
	}
	ld, err := session.ReadLog(logOf(t, state, sid))
	if err != nil {
		t.Fatal(err)
	}
	if ti, ok := session.LastTitle(ld.Events); !ok || ti.Title != "Renamed while closed" || ti.Source != session.TitleFromUser {
		t.Errorf("last logged title %+v", ti)
	}
}

// TestTitleAfterDelete: a session deleted while its title request runs
// gets nothing afterwards: no update, no log, no title file.
func TestTitleAfterDelete(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	release := make(chan struct{})
	m, f := newTitleModel(t, func(n int, w http.ResponseWriter, r *http.Request) {
		sse(w, e2etest.LiveText([]string{"Ok."}, []string{"Answer."}, small))
	}, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		sse(w, e2etest.LiveText([]string{"Naming."}, []string{"Too late"}, small))
	})
	h := newHarness(t, harnessOpts{model: f.client("k"), stateDir: state, cwd: cwd, titles: true})
	sid := h.start(harnessOpts{})
	if _, err := h.prompt(sid, "first prompt"); err != nil {
		t.Fatal(err)
	}
	<-m.titled
	path := logOf(t, state, sid)
	h.mustCall("session/delete", map[string]any{"sessionId": sid}, nil)
	close(release)
	time.Sleep(150 * time.Millisecond)
	for _, p := range []string{path, session.TitlePath(path)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists after the delete", p)
		}
	}
	if got := titleUpdates(h); strings.Join(got, "|") != "first prompt" {
		t.Errorf("titles sent %q", got)
	}
}

// TestPromptTitleAfterModeChange: a mode chosen before the first prompt
// (logged first) does not cost the session its first-line title; a
// second prompt gives no other.
func TestPromptTitleAfterModeChange(t *testing.T) {
	rec := e2etest.Replay(t, e2etest.LiveText([]string{"Ok."}, []string{"One."}, small), e2etest.LiveText([]string{"Ok."}, []string{"Two."}, small))
	h := newHarness(t, harnessOpts{replay: rec})
	sid := h.start(harnessOpts{})
	h.mustCall("session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"}, nil)
	for _, p := range []string{"plan the release\nwith details", "and then?"} {
		if _, err := h.prompt(sid, p); err != nil {
			t.Fatal(err)
		}
	}
	if got := titleUpdates(h); strings.Join(got, "|") != "plan the release" {
		t.Errorf("titles %q", got)
	}
	if got := listTitle(t, h, sid); got != "plan the release" {
		t.Errorf("listed %q", got)
	}
}
