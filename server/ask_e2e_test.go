package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/agent"
	"github.com/dsh-acp/dsh-acp/internal/acpclient"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
)

// recordingModel is a fake endpoint answering the Nth request with
// bodies[N-1] and keeping every request's messages.
type recordingModel struct {
	*fakeModel
	mu   sync.Mutex
	reqs [][]json.RawMessage
}

func newRecordingModel(t *testing.T, bodies ...string) *recordingModel {
	m := &recordingModel{}
	m.fakeModel = newFakeModel(t, func(n int, w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(raw, &req); err != nil {
			t.Errorf("request %d: %v", n, err)
		}
		m.mu.Lock()
		m.reqs = append(m.reqs, req.Messages)
		m.mu.Unlock()
		if n > len(bodies) {
			http.Error(w, "no more answers", http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, bodies[n-1])
	})
	return m
}

// toolMessage is the content of the tool message answering call id in
// request n (1-based), "" when there is none.
func (m *recordingModel) toolMessage(n int, id string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n > len(m.reqs) {
		return ""
	}
	for _, raw := range m.reqs[n-1] {
		var msg llm.Message
		if json.Unmarshal(raw, &msg) == nil && msg.Role == "tool" && msg.ToolCallID == id {
			return msg.Content
		}
	}
	return ""
}

// askClient answers the agent's elicitation/create and
// session/request_permission requests with the answers given, recording
// the requests.
type askClient struct {
	mu          sync.Mutex
	elicit      acp.CreateElicitationResponse
	option      string // a permission optionId, or "cancelled"
	elicits     []acp.CreateElicitationRequest
	permissions []acp.RequestPermissionRequest
}

func (a *askClient) handle(method string, params json.RawMessage) (any, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch method {
	case "elicitation/create":
		var req acp.CreateElicitationRequest
		if err := json.Unmarshal(params, &req); err != nil {
			return nil, err
		}
		a.elicits = append(a.elicits, req)
		return a.elicit, nil
	case "session/request_permission":
		var req acp.RequestPermissionRequest
		if err := json.Unmarshal(params, &req); err != nil {
			return nil, err
		}
		a.permissions = append(a.permissions, req)
		if a.option == "cancelled" {
			return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: acp.OutcomeCancelled}}, nil
		}
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: acp.OutcomeSelected, OptionID: a.option}}, nil
	}
	return nil, &acp.Error{Code: acp.CodeMethodNotFound, Message: method}
}

const askArgs = `{"question":"Which database should I use?","options":["Postgres","SQLite"]}`

// askID is the id of the one ask_user call with askArgs.
var askID = e2etest.CallID(0, 0, "ask_user", askArgs)

var elicitCaps = map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}

// askFinal is the last tool_call_update of call id that ends it.
func askFinal(t *testing.T, h *harness, id string) acp.ToolCallUpdate {
	t.Helper()
	for _, u := range h.sessionUpdates() {
		if c, ok := toolCard(u); ok && c.ToolCallID == id && isFinal(u) {
			return c
		}
	}
	t.Fatalf("call %s never ended", id)
	return acp.ToolCallUpdate{}
}

func contentTexts(cs []acp.ToolCallContent) []string {
	var out []string
	for _, c := range cs {
		if x, ok := c.(acp.Content); ok {
			out = append(out, x.Content.Text)
		}
	}
	return out
}

// askTurn runs one turn in mode whose model asks askArgs (then says
// "Noted."), against ac on an editor with caps.
func askTurn(t *testing.T, mode string, ac *askClient, caps map[string]any) (*recordingModel, *harness, string) {
	t.Helper()
	m := newRecordingModel(t, e2etest.ToolCalls([2]string{"ask_user", askArgs}), e2etest.Text(nil, []string{"Noted."}, "stop"))
	h := newHarness(t, harnessOpts{model: m.client("k"), mode: mode})
	h.client.OnRequest = ac.handle
	sid := h.start(harnessOpts{caps: caps})
	if stop, err := h.prompt(sid, "set up the db"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	return m, h, sid
}

// checkAnswered checks that askTurn's question reached the model as
// model and that its card completed with the choices and line.
func checkAnswered(t *testing.T, m *recordingModel, h *harness, model, line string) {
	t.Helper()
	if got := m.toolMessage(2, askID); got != model {
		t.Errorf("the model got %q, want %q", got, model)
	}
	card := askFinal(t, h, askID)
	if card.Status != acp.StatusCompleted || !reflect.DeepEqual(contentTexts(card.Content), []string{"1. Postgres\n2. SQLite", line}) {
		raw, _ := json.Marshal(card)
		t.Errorf("final card %s", raw)
	}
}

// TestAskElicitation: an editor that advertises form elicitation gets
// the question as `elicitation/create` (session and call scope, one
// required "answer" field whose enum is the choices), in every mode
// without a permission request; each action reaches the model and the
// card.
func TestAskElicitation(t *testing.T) {
	for _, c := range []struct {
		mode   string
		answer acp.CreateElicitationResponse
		model  string
		line   string
	}{
		{"default", acp.CreateElicitationResponse{Action: "accept", Content: map[string]any{"answer": "SQLite"}}, "The user answered: SQLite", "Answer: SQLite"},
		{"plan", acp.CreateElicitationResponse{Action: "decline"}, "The user declined to answer.", "Declined."},
		{"default", acp.CreateElicitationResponse{Action: "cancel"}, "The user dismissed the question without answering.", "Dismissed."},
		// An answer the form did not offer, or none, is no answer (an
		// editor that does not check its form).
		{"default", acp.CreateElicitationResponse{Action: "accept", Content: map[string]any{"answer": "MongoDB, and drop the old tables"}}, "The user dismissed the question without answering.", "Dismissed."},
		{"default", acp.CreateElicitationResponse{Action: "accept", Content: map[string]any{"answer": []any{"SQLite"}}}, "The user dismissed the question without answering.", "Dismissed."},
		{"default", acp.CreateElicitationResponse{Action: "accept"}, "The user dismissed the question without answering.", "Dismissed."},
	} {
		t.Run(c.answer.Action, func(t *testing.T) {
			ac := &askClient{elicit: c.answer}
			m, h, sid := askTurn(t, c.mode, ac, elicitCaps)
			if len(ac.elicits) != 1 || len(ac.permissions) != 0 {
				t.Fatalf("%d elicitations, %d permission requests; want 1, 0", len(ac.elicits), len(ac.permissions))
			}
			e := ac.elicits[0]
			f := e.RequestedSchema.Properties["answer"]
			if e.Mode != "form" || e.Message != "Which database should I use?" || e.SessionID != sid || e.ToolCallID != askID ||
				e.RequestedSchema.Type != "object" || !reflect.DeepEqual(e.RequestedSchema.Required, []string{"answer"}) ||
				f.Type != "string" || !reflect.DeepEqual(f.Enum, []string{"Postgres", "SQLite"}) {
				raw, _ := json.Marshal(e)
				t.Errorf("elicitation/create %s", raw)
			}
			checkAnswered(t, m, h, c.model, c.line)
			checkToolCallsEnd(t, h.sessionUpdates())
		})
	}
}

// TestAskElicitationFreeText: a question without options is a free
// text field; the typed answer reaches the model.
func TestAskElicitationFreeText(t *testing.T) {
	const args = `{"question":"What should the service be called?"}`
	m := newRecordingModel(t, e2etest.ToolCalls([2]string{"ask_user", args}), e2etest.Text(nil, []string{"OK."}, "stop"))
	h := newHarness(t, harnessOpts{model: m.client("k"), mode: "default"})
	ac := &askClient{elicit: acp.CreateElicitationResponse{Action: "accept", Content: map[string]any{"answer": "ledger-api"}}}
	h.client.OnRequest = ac.handle
	sid := h.start(harnessOpts{caps: elicitCaps})
	if stop, err := h.prompt(sid, "name it"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if len(ac.elicits) != 1 || ac.elicits[0].RequestedSchema.Properties["answer"].Enum != nil {
		t.Fatalf("elicitations %+v", ac.elicits)
	}
	if got := m.toolMessage(2, e2etest.CallID(0, 0, "ask_user", args)); got != "The user answered: ledger-api" {
		t.Errorf("the model got %q", got)
	}
}

// TestAskPermissionFallback: an editor without elicitation gets a
// question whose choices fit as a `session/request_permission` on the
// call's card: one allow_once option per choice, then Decline
// (reject_once); the chosen option, a decline and a cancelled outcome
// reach the model. The tool itself asks no permission (plan mode too),
// and the turn goes on (a cancelled question is not a cancelled turn).
func TestAskPermissionFallback(t *testing.T) {
	for _, c := range []struct {
		mode, option, model, line string
	}{
		{"default", "choice-2", "The user answered: SQLite", "Answer: SQLite"},
		{"plan", "decline", "The user declined to answer.", "Declined."},
		{"default", "cancelled", "The user dismissed the question without answering.", "Dismissed."},
	} {
		t.Run(c.option, func(t *testing.T) {
			ac := &askClient{option: c.option}
			m, h, sid := askTurn(t, c.mode, ac, nil)
			if len(ac.permissions) != 1 || len(ac.elicits) != 0 {
				t.Fatalf("%d permission requests, %d elicitations; want 1, 0", len(ac.permissions), len(ac.elicits))
			}
			p := ac.permissions[0]
			want := []acp.PermissionOption{
				{OptionID: "choice-1", Name: "Postgres", Kind: acp.AllowOnce},
				{OptionID: "choice-2", Name: "SQLite", Kind: acp.AllowOnce},
				{OptionID: "decline", Name: "Decline", Kind: acp.RejectOnce},
			}
			if !reflect.DeepEqual(p.Options, want) || p.ToolCall.ToolCallID != askID || p.ToolCall.Title == nil ||
				*p.ToolCall.Title != "Which database should I use?" || p.ToolCall.Kind != "other" ||
				!reflect.DeepEqual(contentTexts(p.ToolCall.Content), []string{"1. Postgres\n2. SQLite"}) {
				raw, _ := json.Marshal(p)
				t.Errorf("permission request %s", raw)
			}
			checkAnswered(t, m, h, c.model, c.line)
			if c.option == "choice-2" {
				checkGolden(t, "ask-permission", h, sid)
			}
		})
	}
}

// TestAskEndTurn: a question that fits no way the editor offers (no
// elicitation, five choices) asks nothing: it ends the turn (end_turn,
// one model request) with the question and its numbered choices as the
// agent's message; a call after it in the same response is not run. The
// next prompt is the answer: the model sees the question as its own
// message, then the answer. session/load replays the card and the
// message as they were shown.
func TestAskEndTurn(t *testing.T) {
	question := `{"question":"Which region?","options":["eu-west-1","eu-central-1","us-east-1","us-west-2","ap-south-1"]}`
	first := e2etest.ToolCalls([2]string{"ask_user", question}, [2]string{"card_generic", `{"path":"src/a.go"}`})
	m := newRecordingModel(t, first, e2etest.Text(nil, []string{"Deploying to us-east-1."}, "stop"))
	state := t.TempDir()
	h := newHarness(t, harnessOpts{model: m.client("k"), mode: "default", stateDir: state})
	ac := &askClient{option: "choice-1"}
	h.client.OnRequest = ac.handle
	sid := h.start(harnessOpts{info: map[string]string{"name": "test-client", "version": "1"}})
	if stop, err := h.prompt(sid, "deploy it"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if len(ac.permissions)+len(ac.elicits) != 0 || m.requests() != 1 {
		t.Fatalf("asked %d/%d times, %d model requests; want no request to the editor and one model request",
			len(ac.permissions), len(ac.elicits), m.requests())
	}
	wantMsg := "Which region?\n\n1. eu-west-1\n2. eu-central-1\n3. us-east-1\n4. us-west-2\n5. ap-south-1"
	us := h.sessionUpdates()
	if got := joined(us, acp.UpdateAgentMessageChunk); got != wantMsg {
		t.Errorf("agent message %q, want %q", got, wantMsg)
	}
	checkToolCallsEnd(t, us)
	if c := askFinal(t, h, e2etest.CallID(0, 0, "ask_user", question)); c.Status != acp.StatusCompleted ||
		contentTexts(c.Content)[len(c.Content)-1] != "Asked in the conversation: the next message is the answer." {
		raw, _ := json.Marshal(c)
		t.Errorf("question card %s", raw)
	}
	if c := askFinal(t, h, e2etest.CallID(0, 1, "card_generic", `{"path":"src/a.go"}`)); c.Status != acp.StatusFailed {
		t.Errorf("the call after the question: %+v", c)
	}
	checkGolden(t, "ask-end-turn", h, sid)

	if stop, err := h.prompt(sid, "3"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("answer prompt = %q, %v", stop, err)
	}
	m.mu.Lock()
	second := m.reqs[1]
	m.mu.Unlock()
	var roles []string
	var msgs []llm.Message
	for _, raw := range second[1:] {
		var msg llm.Message
		_ = json.Unmarshal(raw, &msg)
		roles = append(roles, msg.Role)
		msgs = append(msgs, msg)
	}
	if strings.Join(roles, " ") != "user assistant tool tool assistant user" || msgs[4].Content != wantMsg || msgs[5].Content != "3" ||
		msgs[3].Content != agent.NotRunText || !strings.Contains(msgs[2].Content, "The user's next message is the answer.") {
		t.Errorf("second request %s", second)
	}
	live, replay := reload(t, m, h, state, sid)
	if !reflect.DeepEqual(mergeToolCalls(live), mergeToolCalls(replay)) {
		t.Errorf("replayed cards differ:\n live   %v\n replay %v", mergeToolCalls(live), mergeToolCalls(replay))
	}
	if got := textOf(replay, "agent_message_chunk"); got != wantMsg+"Deploying to us-east-1." {
		t.Errorf("replayed agent messages %q", got)
	}
	if got := textOf(replay, "user_message_chunk"); got != "deploy it3" {
		t.Errorf("replayed user messages %q", got)
	}
}

// reload stops h and loads sid in a new agent on state: the session's
// updates as h sent them live, and as session/load replays them.
func reload(t *testing.T, m *recordingModel, h *harness, state, sid string) (live, replay []map[string]json.RawMessage) {
	t.Helper()
	live = updatesOf(agentMsgs(t, h, 0), sid)
	h.stop()
	h2 := newHarness(t, harnessOpts{model: m.client("k"), stateDir: state, cwd: h.cwd})
	replay, err := h2.load(sid, h.cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	return live, replay
}

// TestAskReplay: an answered question (permission fallback) is replayed
// by session/load with the same card: the choices and the answer.
func TestAskReplay(t *testing.T) {
	m := newRecordingModel(t, e2etest.ToolCalls([2]string{"ask_user", askArgs}), e2etest.Text(nil, []string{"Noted."}, "stop"))
	state := t.TempDir()
	h := newHarness(t, harnessOpts{model: m.client("k"), mode: "default", stateDir: state})
	h.client.OnRequest = (&askClient{option: "choice-1"}).handle
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "db?"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	live, replay := reload(t, m, h, state, sid)
	lc, rc := mergeToolCalls(live), mergeToolCalls(replay)
	if !reflect.DeepEqual(lc, rc) || !strings.Contains(rc[askID]["content"], "Answer: Postgres") {
		t.Errorf("replayed card\n live   %v\n replay %v", lc, rc)
	}
}

// TestAskCancel: a session/cancel while the user has the question open
// ends the turn cancelled at once: the editor's elicitation/create is
// cancelled with $/cancel_request, the card fails as cancelled, and no
// further model request is made.
func TestAskCancel(t *testing.T) {
	m := newRecordingModel(t, e2etest.ToolCalls([2]string{"ask_user", askArgs}), e2etest.Text(nil, []string{"Never."}, "stop"))
	h := newHarness(t, harnessOpts{model: m.client("k"), mode: "default"})
	asked := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	h.client.OnRequest = func(method string, params json.RawMessage) (any, error) {
		if method == "elicitation/create" {
			close(asked)
			<-release
		}
		return acp.CreateElicitationResponse{Action: "cancel"}, nil
	}
	sid := h.start(harnessOpts{caps: elicitCaps})
	_, ch, _ := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the question was never asked")
	}
	h.cancelPrompt(sid, ch, 2*time.Second)
	c := askFinal(t, h, askID)
	if c.Status != acp.StatusFailed || !strings.Contains(strings.Join(contentTexts(c.Content), "\n"), "Cancelled by the user.") {
		raw, _ := json.Marshal(c)
		t.Errorf("card after the cancel %s", raw)
	}
	var cancels []string
	for _, l := range h.tr.AgentLines() {
		var msg acpclient.Message
		if json.Unmarshal(l, &msg) == nil && msg.Method == "$/cancel_request" {
			cancels = append(cancels, string(msg.Params))
		}
	}
	if len(cancels) != 1 || !strings.Contains(cancels[0], `"requestId":1`) {
		t.Errorf("$/cancel_request sent %q, want one for the elicitation (id 1)", cancels)
	}
	if m.requests() != 1 {
		t.Errorf("%d model requests, want 1", m.requests())
	}
}

// TestAskElicitationFails: an editor that advertised elicitation but
// fails the request (here -32601) is asked the next way, a permission
// request whose options are the choices.
func TestAskElicitationFails(t *testing.T) {
	m := newRecordingModel(t, e2etest.ToolCalls([2]string{"ask_user", askArgs}), e2etest.Text(nil, []string{"Noted."}, "stop"))
	h := newHarness(t, harnessOpts{model: m.client("k"), mode: "default"})
	ac := &askClient{option: "choice-1"}
	var elicits int
	h.client.OnRequest = func(method string, params json.RawMessage) (any, error) {
		if method == "elicitation/create" {
			elicits++
			return nil, &acp.Error{Code: acp.CodeMethodNotFound, Message: "Method not found: elicitation/create"}
		}
		return ac.handle(method, params)
	}
	sid := h.start(harnessOpts{caps: elicitCaps})
	if stop, err := h.prompt(sid, "db?"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if elicits != 1 || len(ac.permissions) != 1 {
		t.Fatalf("%d elicitations, %d permission requests; want 1 each", elicits, len(ac.permissions))
	}
	if got := m.toolMessage(2, askID); got != "The user answered: Postgres" {
		t.Errorf("the model got %q", got)
	}
}
