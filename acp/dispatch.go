package acp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
)

// NewAgentConn serves an agent over r (the editor's messages) and w
// (ours). newAgent is called once, before the first message is read,
// with the connection as the agent's [Client]; the agent it returns
// serves every method through the method table. See [NewConn] for the
// connection's life.
func NewAgentConn(r io.Reader, w io.Writer, newAgent func(Client) Agent, log *slog.Logger) *Conn {
	return NewAgentConnLimits(r, w, newAgent, log, Limits{})
}

// NewAgentConnLimits is NewAgentConn with the given Limits (zero fields:
// defaults).
func NewAgentConnLimits(r io.Reader, w io.Writer, newAgent func(Client) Agent, log *slog.Logger, lim Limits) *Conn {
	c := newConn(r, w, log, lim)
	c.start(newAgentHandler(newAgent(c), c.log))
	return c
}

// prepareFunc decodes a request's params and runs its first stage; the
// RequestFunc it returns does the rest on the request's goroutine.
type prepareFunc func(ctx context.Context, params json.RawMessage) RequestFunc

// notifyFunc decodes a notification's params and handles it.
type notifyFunc func(ctx context.Context, params json.RawMessage) error

// paramsRule says whether a method may be called without params.
type paramsRule bool

const (
	paramsRequired paramsRule = false
	paramsOptional paramsRule = true
)

// method is one row of the method table: the method's name, how to bind
// it to an agent (nil when the agent lacks its interface) and the
// capability the interface earns in `initialize` (nil when none).
type method struct {
	name      string
	bind      func(Agent) prepareFunc
	advertise func(*AgentCapabilities)
}

// agentMethods is the method table: every request an agent can serve.
// (A function, not a variable, because initialize's row refers to
// Capabilities, which reads the table.)
func agentMethods() []method {
	return []method{
		{MethodInitialize, handle(initialize, paramsRequired), nil},
		{MethodAuthenticate, handle(Agent.Authenticate, paramsRequired), nil},
		{MethodSessionNew, handle(Agent.NewSession, paramsRequired), nil},
		{MethodSessionPrompt, deferred(Agent.Prompt, paramsRequired), nil},
		{MethodSessionLoad, deferred(SessionLoader.LoadSession, paramsRequired),
			func(c *AgentCapabilities) { c.LoadSession = true }},
		{MethodSessionList, handle(SessionLister.ListSessions, paramsOptional),
			func(c *AgentCapabilities) { c.SessionCapabilities.List = &Empty{} }},
		{MethodSessionClose, handle(SessionCloser.CloseSession, paramsRequired),
			func(c *AgentCapabilities) { c.SessionCapabilities.Close = &Empty{} }},
		{MethodSessionSetMode, handle(ModeSetter.SetSessionMode, paramsRequired), nil},
		{MethodSessionSetConfigOption, handle(ConfigOptionSetter.SetSessionConfigOption, paramsRequired), nil},
		{MethodSessionResume, deferred(SessionResumer.ResumeSession, paramsRequired),
			func(c *AgentCapabilities) { c.SessionCapabilities.Resume = &Empty{} }},
		{MethodSessionDelete, handle(SessionDeleter.DeleteSession, paramsRequired),
			func(c *AgentCapabilities) { c.SessionCapabilities.Delete = &Empty{} }},
		{MethodSessionFork, handle(SessionForker.ForkSession, paramsRequired),
			func(c *AgentCapabilities) { c.SessionCapabilities.Fork = &Empty{} }},
		{MethodSessionSetTitle, handle(SessionTitleSetter.SetSessionTitle, paramsRequired),
			func(c *AgentCapabilities) { c.SessionCapabilities.Title = &Empty{} }},
		{MethodLogout, handle(Logouter.Logout, paramsOptional),
			func(c *AgentCapabilities) { c.Auth.Logout = &Empty{} }},
		{MethodAuthStatus, handle(AuthStatuser.AuthStatus, paramsOptional),
			func(c *AgentCapabilities) { c.Auth.Status = &Empty{} }},
		{MethodSessionArchive, handle(SessionArchiver.ArchiveSession, paramsRequired),
			func(c *AgentCapabilities) { c.SessionCapabilities.Archive = &Empty{} }},
		{MethodSessionUnarchive, handle(SessionArchiver.UnarchiveSession, paramsRequired), nil},
		{MethodSessionStatus, handle(SessionStatuser.SessionStatus, paramsRequired),
			func(c *AgentCapabilities) { c.SessionCapabilities.Status = &Empty{} }},
		{MethodProvidersList, handle(ProviderConfigurer.ListProviders, paramsOptional),
			func(c *AgentCapabilities) { c.Providers = &Empty{} }},
		{MethodProvidersSet, handle(ProviderConfigurer.SetProvider, paramsRequired), nil},
		{MethodProvidersDisable, handle(ProviderConfigurer.DisableProvider, paramsRequired), nil},
	}
}

// agentNotifications are the notifications an agent handles.
func agentNotifications() map[string]func(Agent) notifyFunc {
	return map[string]func(Agent) notifyFunc{
		MethodSessionCancel: notify(Agent.Cancel),
	}
}

// initialize is Agent.Initialize with the capability bits of the
// optional interfaces set from the agent's type.
func initialize(a Agent, ctx context.Context, p InitializeRequest) (InitializeResponse, error) {
	r, err := a.Initialize(ctx, p)
	r.AgentCapabilities = Capabilities(a, r.AgentCapabilities)
	return r, err
}

// Capabilities returns c with the bits that name optional interfaces set
// exactly as a implements them: loadSession (SessionLoader),
// sessionCapabilities list, close, resume, delete, fork and title
// (SessionLister, SessionCloser, SessionResumer, SessionDeleter,
// SessionForker, SessionTitleSetter), archive and status
// (SessionArchiver, SessionStatuser), auth.logout and auth.status
// (Logouter, AuthStatuser), and providers (ProviderConfigurer). Other fields of c are kept; a
// sessionCapabilities or auth object left empty is dropped.
func Capabilities(a Agent, c AgentCapabilities) AgentCapabilities {
	sc, auth := SessionCapabilities{}, AgentAuthCapabilities{}
	if c.SessionCapabilities != nil {
		sc = *c.SessionCapabilities
	}
	if c.Auth != nil {
		auth = *c.Auth
	}
	c.LoadSession, c.Providers = false, nil
	sc.List, sc.Close, sc.Resume, sc.Delete, sc.Fork, sc.Title = nil, nil, nil, nil, nil, nil
	sc.Archive, sc.Status = nil, nil
	auth.Logout, auth.Status = nil, nil
	c.SessionCapabilities, c.Auth = &sc, &auth
	for _, m := range agentMethods() {
		if m.advertise != nil && m.bind(a) != nil {
			m.advertise(&c)
		}
	}
	if sc.List == nil && sc.Delete == nil && sc.AdditionalDirectories == nil && sc.Resume == nil &&
		sc.Close == nil && sc.Fork == nil && sc.Title == nil && sc.Archive == nil && sc.Status == nil && len(sc.Meta) == 0 {
		c.SessionCapabilities = nil
	}
	if auth.Logout == nil && auth.Status == nil && len(auth.Meta) == 0 {
		c.Auth = nil
	}
	return c
}

// handle binds a one-stage method of interface I (given as a method
// expression, e.g. SessionLister.ListSessions): its params are decoded on
// the read goroutine, the method runs on the request's goroutine.
func handle[I, P, R any](m func(I, context.Context, P) (R, error), rule paramsRule) func(Agent) prepareFunc {
	return deferred(func(impl I, _ context.Context, p P) (Deferred[R], error) {
		return func(ctx context.Context) (R, error) { return m(impl, ctx, p) }, nil
	}, rule)
}

// deferred binds a two-stage method of interface I: the params are
// decoded and the method called on the read goroutine; the Deferred it
// returns runs on the request's goroutine. An agent that is not an I
// gets nil (the method is answered with -32601).
func deferred[I, P, R any](m func(I, context.Context, P) (Deferred[R], error), rule paramsRule) func(Agent) prepareFunc {
	return func(a Agent) prepareFunc {
		impl, ok := any(a).(I)
		if !ok {
			return nil
		}
		return func(ctx context.Context, raw json.RawMessage) RequestFunc {
			p, err := decodeParams[P](raw, rule)
			if err != nil {
				return fail(err)
			}
			run, err := m(impl, ctx, p)
			if err != nil {
				return fail(err)
			}
			if run == nil {
				return fail(&Error{Code: CodeInternalError, Message: "Internal error: the agent prepared nothing to run"})
			}
			return func(ctx context.Context) (any, error) {
				r, err := run(ctx)
				if err != nil {
					return nil, err
				}
				return r, nil
			}
		}
	}
}

// notify binds a notification handler of interface I.
func notify[I, P any](m func(I, context.Context, P) error) func(Agent) notifyFunc {
	return func(a Agent) notifyFunc {
		impl, ok := any(a).(I)
		if !ok {
			return nil
		}
		return func(ctx context.Context, raw json.RawMessage) error {
			p, err := decodeParams[P](raw, paramsRequired)
			if err != nil {
				return err
			}
			return m(impl, ctx, p)
		}
	}
}

// decodeParams decodes a method's params into a P. Missing params (none,
// or null) are -32602 unless rule allows them (then P is zero); params
// that do not decode are -32602 naming the reason.
func decodeParams[P any](raw json.RawMessage, rule paramsRule) (P, error) {
	var p P
	if len(raw) == 0 || string(raw) == "null" {
		if rule == paramsOptional {
			return p, nil
		}
		return p, InvalidParams("Invalid params: missing params")
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, InvalidParams("Invalid params: %v", err)
	}
	return p, nil
}

func fail(err error) RequestFunc {
	return func(context.Context) (any, error) { return nil, err }
}

// agentHandler serves an agent through the method table; the table is
// bound to the agent once.
type agentHandler struct {
	requests      map[string]prepareFunc
	notifications map[string]notifyFunc
	log           *slog.Logger
}

func newAgentHandler(a Agent, log *slog.Logger) *agentHandler {
	h := &agentHandler{requests: map[string]prepareFunc{}, notifications: map[string]notifyFunc{}, log: log}
	for _, m := range agentMethods() {
		if p := m.bind(a); p != nil {
			h.requests[m.name] = p
		}
	}
	for name, bind := range agentNotifications() {
		if n := bind(a); n != nil {
			h.notifications[name] = n
		}
	}
	return h
}

// PrepareRequest implements Handler: a method the table lacks, or whose
// interface the agent does not implement, gets nil (answered -32601).
func (h *agentHandler) PrepareRequest(ctx context.Context, method string, params json.RawMessage) RequestFunc {
	if p := h.requests[method]; p != nil {
		return p(ctx, params)
	}
	return nil
}

// HandleNotification implements Handler: errors and unknown
// notifications are logged.
func (h *agentHandler) HandleNotification(ctx context.Context, method string, params json.RawMessage) {
	n := h.notifications[method]
	if n == nil {
		h.log.Debug("acp: ignoring an unknown notification", "method", method)
		return
	}
	if err := n(ctx, params); err != nil {
		h.log.Warn("acp: notification failed", "method", method, "err", err)
	}
}

// Shutdown implements Handler; the requests' contexts are cancelled by
// the connection itself.
func (h *agentHandler) Shutdown() {}
