package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// baseAgent implements only the required methods. Prompt's first stage
// records the turn under its session id, and Cancel cancels it, so the
// tests can see whether a cancel found its prompt.
type baseAgent struct {
	client Client

	mu     sync.Mutex
	turns  map[string]context.CancelFunc
	missed []string // sessions whose cancel found no turn
	calls  []string // methods that reached the agent
}

func newBaseAgent() *baseAgent { return &baseAgent{turns: map[string]context.CancelFunc{}} }

func (a *baseAgent) called(m string) {
	a.mu.Lock()
	a.calls = append(a.calls, m)
	a.mu.Unlock()
}

func (a *baseAgent) Initialize(_ context.Context, p InitializeRequest) (InitializeResponse, error) {
	a.called(MethodInitialize)
	// Claims it all: the connection must correct what is not implemented.
	return InitializeResponse{ProtocolVersion: ProtocolVersion, AuthMethods: []AuthMethod{},
		AgentCapabilities: AgentCapabilities{LoadSession: true, SessionCapabilities: &SessionCapabilities{List: &Empty{}, Delete: &Empty{}},
			Auth: &AgentAuthCapabilities{Logout: &Empty{}}}}, nil
}

func (a *baseAgent) Authenticate(context.Context, AuthenticateRequest) (AuthenticateResponse, error) {
	a.called(MethodAuthenticate)
	return AuthenticateResponse{}, nil
}

func (a *baseAgent) NewSession(ctx context.Context, p NewSessionRequest) (NewSessionResponse, error) {
	a.called(MethodSessionNew)
	// A notification queued behind the response.
	Then(ctx, func() {
		_ = a.client.SessionUpdate(context.Background(), SessionNotification{SessionID: "s1",
			Update: AvailableCommandsUpdate{AvailableCommands: []AvailableCommand{{Name: "compact", Description: "Compact"}}}})
	})
	return NewSessionResponse{SessionID: "s1"}, nil
}

func (a *baseAgent) Prompt(ctx context.Context, p PromptRequest) (Deferred[PromptResponse], error) {
	a.called(MethodSessionPrompt)
	if p.SessionID == "" {
		return nil, InvalidParams("Invalid params: sessionId is required")
	}
	turn, cancel := context.WithCancel(ctx)
	a.mu.Lock()
	a.turns[p.SessionID] = cancel
	a.mu.Unlock()
	return func(context.Context) (PromptResponse, error) {
		defer func() {
			a.mu.Lock()
			delete(a.turns, p.SessionID)
			a.mu.Unlock()
		}()
		select {
		case <-turn.Done():
			return PromptResponse{StopReason: StopCancelled}, nil
		case <-time.After(20 * time.Second):
			return PromptResponse{StopReason: StopEndTurn}, nil
		}
	}, nil
}

func (a *baseAgent) Cancel(_ context.Context, p CancelNotification) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	cancel := a.turns[p.SessionID]
	if cancel == nil {
		a.missed = append(a.missed, p.SessionID)
		return fmt.Errorf("no turn in session %s", p.SessionID)
	}
	cancel()
	return nil
}

// fullAgent implements every optional interface too.
type fullAgent struct{ *baseAgent }

func (a fullAgent) LoadSession(_ context.Context, p LoadSessionRequest) (Deferred[LoadSessionResponse], error) {
	a.called(MethodSessionLoad)
	return func(context.Context) (LoadSessionResponse, error) { return LoadSessionResponse{}, nil }, nil
}
func (a fullAgent) ListSessions(context.Context, ListSessionsRequest) (ListSessionsResponse, error) {
	a.called(MethodSessionList)
	return ListSessionsResponse{Sessions: []SessionInfo{}}, nil
}
func (a fullAgent) CloseSession(context.Context, CloseSessionRequest) (CloseSessionResponse, error) {
	a.called(MethodSessionClose)
	return CloseSessionResponse{}, nil
}
func (a fullAgent) SetSessionMode(context.Context, SetSessionModeRequest) (SetSessionModeResponse, error) {
	a.called(MethodSessionSetMode)
	return SetSessionModeResponse{}, nil
}
func (a fullAgent) SetSessionConfigOption(_ context.Context, p SetSessionConfigOptionRequest) (SetSessionConfigOptionResponse, error) {
	a.called(MethodSessionSetConfigOption)
	return SetSessionConfigOptionResponse{ConfigOptions: []SessionConfigOption{}}, nil
}
func (a fullAgent) ResumeSession(context.Context, ResumeSessionRequest) (Deferred[ResumeSessionResponse], error) {
	a.called(MethodSessionResume)
	return func(context.Context) (ResumeSessionResponse, error) { return ResumeSessionResponse{}, nil }, nil
}
func (a fullAgent) DeleteSession(context.Context, DeleteSessionRequest) (DeleteSessionResponse, error) {
	a.called(MethodSessionDelete)
	return DeleteSessionResponse{}, nil
}
func (a fullAgent) ForkSession(context.Context, ForkSessionRequest) (ForkSessionResponse, error) {
	a.called(MethodSessionFork)
	return ForkSessionResponse{SessionID: "s2"}, nil
}
func (a fullAgent) SetSessionTitle(_ context.Context, p SetSessionTitleRequest) (SetSessionTitleResponse, error) {
	a.called(MethodSessionSetTitle)
	return SetSessionTitleResponse{Title: p.Title}, nil
}
func (a fullAgent) Logout(context.Context, LogoutRequest) (LogoutResponse, error) {
	a.called(MethodLogout)
	return LogoutResponse{}, nil
}
func (a fullAgent) AuthStatus(context.Context, AuthStatusRequest) (AuthStatusResponse, error) {
	a.called(MethodAuthStatus)
	return AuthStatusResponse{State: AuthUnknown}, nil
}
func (a fullAgent) ArchiveSession(context.Context, ArchiveSessionRequest) (ArchiveSessionResponse, error) {
	return ArchiveSessionResponse{}, nil
}
func (a fullAgent) UnarchiveSession(context.Context, UnarchiveSessionRequest) (UnarchiveSessionResponse, error) {
	return UnarchiveSessionResponse{}, nil
}
func (a fullAgent) SessionStatus(context.Context, SessionStatusRequest) (SessionStatusResponse, error) {
	return SessionStatusResponse{Status: SessionSaved}, nil
}
func (a fullAgent) ListProviders(context.Context, ListProvidersRequest) (ListProvidersResponse, error) {
	a.called(MethodProvidersList)
	return ListProvidersResponse{Providers: []ProviderInfo{}}, nil
}
func (a fullAgent) SetProvider(context.Context, SetProviderRequest) (SetProviderResponse, error) {
	return SetProviderResponse{}, nil
}
func (a fullAgent) DisableProvider(context.Context, DisableProviderRequest) (DisableProviderResponse, error) {
	return DisableProviderResponse{}, nil
}

// rpcPeer drives a connection as the editor would.
type rpcPeer struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func serveAgent(t *testing.T, make func(Client) Agent) *rpcPeer {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := NewAgentConn(inR, outW, make, nil)
	t.Cleanup(func() { inW.Close(); <-c.Done(); outW.Close() })
	return &rpcPeer{t: t, in: inW, out: bufio.NewReader(outR)}
}

// reply is one message the agent wrote.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
	raw    string
}

func (p *rpcPeer) read() reply {
	p.t.Helper()
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() { l, err := p.out.ReadString('\n'); ch <- result{l, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			p.t.Fatal(r.err)
		}
		var m reply
		if err := json.Unmarshal([]byte(r.line), &m); err != nil {
			p.t.Fatalf("%v: %s", err, r.line)
		}
		m.raw = strings.TrimSpace(r.line)
		return m
	case <-time.After(10 * time.Second):
		p.t.Fatal("no answer from the agent")
	}
	return reply{}
}

// request sends a request (params nil: none) and returns its answer.
func (p *rpcPeer) request(method string, params any) reply {
	p.t.Helper()
	p.id++
	msg := map[string]any{"jsonrpc": "2.0", "id": p.id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	p.send(msg)
	return p.read()
}

func (p *rpcPeer) send(msg any) {
	p.t.Helper()
	b, _ := json.Marshal(msg)
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		p.t.Fatal(err)
	}
}

// TestMethodTableErrors: a method the table does not have is -32601; every
// method of the table that needs params, called without them (or with
// null), is -32602 before reaching the agent; params that do not decode
// are -32602; the methods whose params are optional reach the agent
// without them.
func TestMethodTableErrors(t *testing.T) {
	base := newBaseAgent()
	p := serveAgent(t, func(c Client) Agent { base.client = c; return fullAgent{base} })
	if r := p.request("session/fly", map[string]any{}); r.Error == nil || r.Error.Code != CodeMethodNotFound || !strings.Contains(r.Error.Message, "session/fly") {
		t.Errorf("unknown method: %s", r.raw)
	}
	optional := map[string]bool{}
	for _, m := range agentMethods() {
		r := p.request(m.name, nil)
		if r.Error != nil && r.Error.Code == CodeInvalidParams {
			if !strings.Contains(r.Error.Message, "missing params") {
				t.Errorf("%s without params: %s", m.name, r.raw)
			}
			p.id++
			p.send(map[string]any{"jsonrpc": "2.0", "id": p.id, "method": m.name, "params": nil})
			if r := p.read(); r.Error == nil || r.Error.Code != CodeInvalidParams {
				t.Errorf("%s with null params: %s", m.name, r.raw)
			}
			if r := p.request(m.name, []int{1}); r.Error == nil || r.Error.Code != CodeInvalidParams || !strings.Contains(r.Error.Message, "Invalid params") {
				t.Errorf("%s with params that do not decode: %s", m.name, r.raw)
			}
			continue
		}
		if r.Error != nil {
			t.Errorf("%s without params: %s", m.name, r.raw)
		}
		optional[m.name] = true
	}
	if len(optional) != 4 || !optional[MethodSessionList] || !optional[MethodLogout] || !optional[MethodAuthStatus] || !optional[MethodProvidersList] {
		t.Errorf("methods answered without params: %v, want session/list, logout, auth/status and providers/list", optional)
	}
	base.mu.Lock()
	defer base.mu.Unlock()
	if strings.Join(base.calls, ",") != MethodSessionList+","+MethodLogout+","+MethodAuthStatus+","+MethodProvidersList {
		t.Errorf("the agent saw %v", base.calls)
	}
}

// TestOptionalInterfaces: an agent with only the required methods gets
// -32601 for every optional method and advertises none of them, whatever
// its Initialize claimed; an agent with all of them serves each and
// advertises every capability bit.
func TestOptionalInterfaces(t *testing.T) {
	optional := map[string]any{
		MethodSessionLoad:            map[string]any{"sessionId": "s1", "cwd": "/p", "mcpServers": []any{}},
		MethodSessionList:            map[string]any{},
		MethodSessionClose:           map[string]any{"sessionId": "s1"},
		MethodSessionSetMode:         map[string]any{"sessionId": "s1", "modeId": "plan"},
		MethodSessionSetConfigOption: map[string]any{"sessionId": "s1", "configId": "model", "value": "fast"},
		MethodSessionResume:          map[string]any{"sessionId": "s1", "cwd": "/p"},
		MethodSessionDelete:          map[string]any{"sessionId": "s1"},
		MethodSessionFork:            map[string]any{"sessionId": "s1", "cwd": "/p"},
		MethodSessionSetTitle:        map[string]any{"sessionId": "s1", "title": "Mine"},
		MethodLogout:                 map[string]any{},
	}
	init := map[string]any{"protocolVersion": 1}

	base := newBaseAgent()
	p := serveAgent(t, func(c Client) Agent { base.client = c; return base })
	r := p.request(MethodInitialize, init)
	if want := `{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false}},"authMethods":[]}`; string(r.Result) != want {
		t.Errorf("initialize of the base agent\n got %s\nwant %s", r.Result, want)
	}
	for m, params := range optional {
		if r := p.request(m, params); r.Error == nil || r.Error.Code != CodeMethodNotFound {
			t.Errorf("%s on the base agent: %s", m, r.raw)
		}
	}

	full := newBaseAgent()
	p = serveAgent(t, func(c Client) Agent { full.client = c; return fullAgent{full} })
	r = p.request(MethodInitialize, init)
	var res InitializeResponse
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	c, sc := res.AgentCapabilities, res.AgentCapabilities.SessionCapabilities
	if !c.LoadSession || sc == nil || sc.List == nil || sc.Close == nil || sc.Resume == nil || sc.Delete == nil || sc.Fork == nil ||
		sc.Title == nil || c.Auth == nil || c.Auth.Logout == nil {
		t.Errorf("initialize of the full agent: %s", r.Result)
	}
	for m, params := range optional {
		if r := p.request(m, params); r.Error != nil {
			t.Errorf("%s on the full agent: %s", m, r.raw)
		}
	}
	full.mu.Lock()
	defer full.mu.Unlock()
	if len(full.calls) != 1+len(optional) {
		t.Errorf("the full agent saw %v", full.calls)
	}
}

// TestCancelAlwaysFindsItsPrompt: a session/cancel read right after a
// session/prompt (in the same write) always finds the turn the prompt's
// first stage registered, and the prompt answers cancelled.
func TestCancelAlwaysFindsItsPrompt(t *testing.T) {
	base := newBaseAgent()
	p := serveAgent(t, func(c Client) Agent { base.client = c; return base })
	for i := range 200 {
		sid := fmt.Sprintf("s%d", i)
		prompt, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": MethodSessionPrompt,
			"params": map[string]any{"sessionId": sid, "prompt": []ContentBlock{TextBlock("hi")}}})
		cancel, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": MethodSessionCancel, "params": map[string]any{"sessionId": sid}})
		if _, err := p.in.Write(append(append(append(prompt, '\n'), cancel...), '\n')); err != nil {
			t.Fatal(err)
		}
		if r := p.read(); string(r.Result) != `{"stopReason":"cancelled"}` {
			t.Fatalf("prompt %d: %s", i, r.raw)
		}
	}
	base.mu.Lock()
	defer base.mu.Unlock()
	if len(base.missed) > 0 {
		t.Errorf("cancels that found no turn: %v", base.missed)
	}
}

// TestThenFollowsTheResponse: a notification a typed handler queues with
// Then is written right after its response; Then outside a request
// refuses.
func TestThenFollowsTheResponse(t *testing.T) {
	base := newBaseAgent()
	p := serveAgent(t, func(c Client) Agent { base.client = c; return base })
	r := p.request(MethodSessionNew, map[string]any{"cwd": "/p", "mcpServers": []any{}})
	if string(r.Result) != `{"sessionId":"s1"}` {
		t.Fatalf("session/new: %s", r.raw)
	}
	n := p.read()
	if n.Method != MethodSessionUpdate || !strings.Contains(n.raw, `"sessionUpdate":"available_commands_update"`) {
		t.Errorf("after the response: %s", n.raw)
	}
	if Then(context.Background(), func() { t.Error("ran") }) {
		t.Error("Then accepted a context that is no request's")
	}
}

// TestDeferredErrors: an error from the first stage answers the request
// (the second never runs); a panic in a handler is -32603.
func TestDeferredErrors(t *testing.T) {
	base := newBaseAgent()
	p := serveAgent(t, func(c Client) Agent { base.client = c; return panicky{base} })
	if r := p.request(MethodSessionPrompt, map[string]any{"prompt": []any{}}); r.Error == nil || r.Error.Code != CodeInvalidParams ||
		!strings.Contains(r.Error.Message, "sessionId") {
		t.Errorf("first-stage error: %s", r.raw)
	}
	if r := p.request(MethodAuthenticate, map[string]any{"methodId": "x"}); r.Error == nil || r.Error.Code != CodeInternalError {
		t.Errorf("panic: %s", r.raw)
	}
	var e *Error
	if err := error(InvalidParams("x")); !errors.As(err, &e) || e.Code != CodeInvalidParams {
		t.Errorf("InvalidParams = %v", err)
	}
}

type panicky struct{ *baseAgent }

func (panicky) Authenticate(context.Context, AuthenticateRequest) (AuthenticateResponse, error) {
	panic("boom")
}
