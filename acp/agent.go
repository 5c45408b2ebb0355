package acp

import "context"

// Agent is what every ACP agent serves (the methods the schema requires).
// [NewAgentConn] calls its methods from the method table; an error that
// is an *Error chooses the JSON-RPC code, any other is answered with
// -32603. Each request runs on its own goroutine with a context that is
// cancelled by `$/cancel_request` and by shutdown, except the first stage
// of a [Deferred] method, which runs on the read goroutine.
//
// An agent offers more by implementing the optional interfaces
// (SessionLoader, SessionLister, SessionCloser, ModeSetter,
// ConfigOptionSetter, SessionResumer, SessionDeleter, SessionForker,
// SessionTitleSetter, Logouter): a method whose interface is missing is answered with -32601,
// and `initialize` advertises exactly the interfaces implemented
// ([Capabilities]).
type Agent interface {
	// Initialize answers `initialize`. The capability bits of the
	// optional interfaces are filled in by the connection.
	Initialize(ctx context.Context, p InitializeRequest) (InitializeResponse, error)
	// Authenticate answers `authenticate`.
	Authenticate(ctx context.Context, p AuthenticateRequest) (AuthenticateResponse, error)
	// NewSession answers `session/new`.
	NewSession(ctx context.Context, p NewSessionRequest) (NewSessionResponse, error)
	// Prompt answers `session/prompt` in two stages (see Deferred): the
	// call validates p and registers the turn, so that a `session/cancel`
	// read next finds it; the returned function runs the turn.
	Prompt(ctx context.Context, p PromptRequest) (Deferred[PromptResponse], error)
	// Cancel handles the `session/cancel` notification, on the read
	// goroutine in arrival order; it must not block. An error is logged.
	Cancel(ctx context.Context, p CancelNotification) error
}

// Deferred is the second stage of a request served in two: the agent's
// method (the first stage) runs on the connection's read goroutine,
// before the next message is read, and must not block on the editor;
// what it records is therefore in place for every later message. The
// Deferred it returns then runs on the request's own goroutine, with the
// request's context, and its result answers the request. An error from
// either stage answers the request.
type Deferred[R any] func(ctx context.Context) (R, error)

// SessionLoader serves `session/load` (advertised as loadSession): replay
// the session's history as `session/update`s, then answer. Two stages, as
// Agent.Prompt.
type SessionLoader interface {
	LoadSession(ctx context.Context, p LoadSessionRequest) (Deferred[LoadSessionResponse], error)
}

// SessionLister serves `session/list` (sessionCapabilities.list).
type SessionLister interface {
	ListSessions(ctx context.Context, p ListSessionsRequest) (ListSessionsResponse, error)
}

// SessionCloser serves `session/close` (sessionCapabilities.close).
type SessionCloser interface {
	CloseSession(ctx context.Context, p CloseSessionRequest) (CloseSessionResponse, error)
}

// ModeSetter serves `session/set_mode` (modes are offered in the session
// responses, not in initialize).
type ModeSetter interface {
	SetSessionMode(ctx context.Context, p SetSessionModeRequest) (SetSessionModeResponse, error)
}

// ConfigOptionSetter serves `session/set_config_option` (options are
// offered in the session responses, not in initialize).
type ConfigOptionSetter interface {
	SetSessionConfigOption(ctx context.Context, p SetSessionConfigOptionRequest) (SetSessionConfigOptionResponse, error)
}

// SessionResumer serves `session/resume` (sessionCapabilities.resume):
// reopen a session without replaying it. Two stages, as Agent.Prompt.
type SessionResumer interface {
	ResumeSession(ctx context.Context, p ResumeSessionRequest) (Deferred[ResumeSessionResponse], error)
}

// SessionDeleter serves `session/delete` (sessionCapabilities.delete).
type SessionDeleter interface {
	DeleteSession(ctx context.Context, p DeleteSessionRequest) (DeleteSessionResponse, error)
}

// SessionForker serves `session/fork` (sessionCapabilities.fork; unstable
// schema).
type SessionForker interface {
	ForkSession(ctx context.Context, p ForkSessionRequest) (ForkSessionResponse, error)
}

// SessionTitleSetter serves `session/set_title` (sessionCapabilities.title;
// unstable schema): the user's title, stored before the answer.
type SessionTitleSetter interface {
	SetSessionTitle(ctx context.Context, p SetSessionTitleRequest) (SetSessionTitleResponse, error)
}

// Logouter serves `logout` (agentCapabilities.auth.logout).
type Logouter interface {
	Logout(ctx context.Context, p LogoutRequest) (LogoutResponse, error)
}

// thenKey keys the request's after-response slot in its context.
type thenKey struct{}

// Then makes f run right after the response to ctx's request has been
// written, on the request's goroutine: a notification f sends (e.g. the
// commands after `session/new`) is queued behind the response on the
// writer, never raced with it. It reports false, and f never runs, when
// ctx is not a request's context. Several calls run their functions in
// order. f does not run when the request fails.
func Then(ctx context.Context, f func()) bool {
	s, ok := ctx.Value(thenKey{}).(*thenSlot)
	if !ok {
		return false
	}
	s.mu.Lock()
	s.fns = append(s.fns, f)
	s.mu.Unlock()
	return true
}

// After makes f run once the response to ctx's request has been
// written, or failed to be, whatever the answer (a result or an error):
// on the request's goroutine, after what Then registered. It reports
// false, and f never runs, when ctx is not a request's context.
func After(ctx context.Context, f func()) bool {
	s, ok := ctx.Value(thenKey{}).(*thenSlot)
	if !ok {
		return false
	}
	s.mu.Lock()
	s.after = append(s.after, f)
	s.mu.Unlock()
	return true
}
