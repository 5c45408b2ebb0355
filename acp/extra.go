package acp

import "context"

// The agent methods of the unstable schema beyond sessions' life: the
// auth state, archiving, a session's status and the model providers.

// Their method names (x-side "agent", except MethodAuthStatusUpdate,
// which the agent sends to the editor).
const (
	MethodAuthStatus       = "auth/status"
	MethodSessionArchive   = "session/archive"
	MethodSessionUnarchive = "session/unarchive"
	MethodSessionStatus    = "session/status"
	MethodProvidersList    = "providers/list"
	MethodProvidersSet     = "providers/set"
	MethodProvidersDisable = "providers/disable"
	MethodAuthStatusUpdate = "auth/status_update"
	MethodMCPMessage       = "mcp/message"
	MethodProxyInitialize  = "proxy/initialize"
	MethodProxySuccessor   = "proxy/successor"
)

// RefusedMethods are the agent-side methods of the pinned schema this
// agent answers with -32601 on purpose, each with the reason: MCP over
// ACP (the editor's MCP servers are reached directly, over stdio or
// HTTP) and the methods a conductor exchanges with proxies (this is an
// agent, not a proxy).
var RefusedMethods = map[string]string{
	MethodMCPMessage:      "MCP over ACP: the agent connects to MCP servers itself (stdio, HTTP, SSE)",
	MethodProxyInitialize: "for proxies in a proxy chain; this is an agent",
	MethodProxySuccessor:  "for proxies in a proxy chain; this is an agent",
}

// Auth states (schema type AuthState).
const (
	AuthAuthenticated   = "authenticated"
	AuthUnauthenticated = "unauthenticated"
	AuthNotRequired     = "not_required"
	AuthUnknown         = "unknown"
)

// AuthStatusRequest is the params of `auth/status` (schema type
// AuthStatusRequest).
type AuthStatusRequest struct {
	Meta Meta `json:"_meta,omitempty"`
}

// AuthAccount is one credential the agent holds, for display (schema
// type AuthAccount): never a secret.
type AuthAccount struct {
	Label  string `json:"label"`
	Active *bool  `json:"active,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// AuthStatusResponse is the result of `auth/status` (schema type
// AuthStatusResponse): State is one of the Auth* constants.
type AuthStatusResponse struct {
	State    string        `json:"state"`
	Accounts []AuthAccount `json:"accounts,omitempty"`
	Meta     Meta          `json:"_meta,omitempty"`
}

// AuthStatusUpdateNotification is `auth/status_update` (schema type
// AuthStatusUpdateNotification): the fields of AuthStatusResponse, sent
// when they change.
type AuthStatusUpdateNotification AuthStatusResponse

// ArchiveSessionRequest is the params of `session/archive` (schema type
// ArchiveSessionRequest).
type ArchiveSessionRequest struct {
	SessionID string `json:"sessionId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// ArchiveSessionResponse is the result of `session/archive` (schema type
// ArchiveSessionResponse).
type ArchiveSessionResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// UnarchiveSessionRequest is the params of `session/unarchive` (schema
// type UnarchiveSessionRequest).
type UnarchiveSessionRequest struct {
	SessionID string `json:"sessionId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// UnarchiveSessionResponse is the result of `session/unarchive` (schema
// type UnarchiveSessionResponse).
type UnarchiveSessionResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// Archive filters of `session/list` (schema type SessionArchiveFilter);
// "" is the default, ArchivedExclude.
const (
	ArchivedExclude = "exclude"
	ArchivedInclude = "include"
	ArchivedOnly    = "only"
)

// Session statuses (schema type SessionStatus).
const (
	SessionOpen  = "open"
	SessionSaved = "saved"
)

// SessionStatusRequest is the params of `session/status` (schema type
// SessionStatusRequest).
type SessionStatusRequest struct {
	SessionID string `json:"sessionId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// SessionStatusResponse is the result of `session/status` (schema type
// SessionStatusResponse): Status is SessionOpen or SessionSaved.
type SessionStatusResponse struct {
	Status string `json:"status"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// AuthStatuser serves `auth/status` (agentCapabilities.auth.status;
// unstable schema): the state of the credentials, without changing it
// and never answered -32000.
type AuthStatuser interface {
	AuthStatus(ctx context.Context, p AuthStatusRequest) (AuthStatusResponse, error)
}

// SessionArchiver serves `session/archive` and `session/unarchive`
// (sessionCapabilities.archive; unstable schema) and the `archived`
// filter of `session/list`.
type SessionArchiver interface {
	ArchiveSession(ctx context.Context, p ArchiveSessionRequest) (ArchiveSessionResponse, error)
	UnarchiveSession(ctx context.Context, p UnarchiveSessionRequest) (UnarchiveSessionResponse, error)
}

// SessionStatuser serves `session/status` (sessionCapabilities.status;
// unstable schema), with no side effects.
type SessionStatuser interface {
	SessionStatus(ctx context.Context, p SessionStatusRequest) (SessionStatusResponse, error)
}

// AuthStatusUpdater is what [Conn] adds to [Client] for the unstable
// `auth/status_update` notification (ctx as for SessionUpdate).
type AuthStatusUpdater interface {
	AuthStatusUpdate(ctx context.Context, n AuthStatusUpdateNotification) error
}

var _ AuthStatusUpdater = (*Conn)(nil)

// AuthStatusUpdate implements AuthStatusUpdater.
func (c *Conn) AuthStatusUpdate(_ context.Context, n AuthStatusUpdateNotification) error {
	return c.Notify(MethodAuthStatusUpdate, n)
}

// ProtocolOpenAI is the one LLM protocol (schema type LlmProtocol) this
// agent speaks: OpenAI-compatible chat completions.
const ProtocolOpenAI = "openai"

// ListProvidersRequest is the params of `providers/list` (schema type
// ListProvidersRequest).
type ListProvidersRequest struct {
	Meta Meta `json:"_meta,omitempty"`
}

// ProviderCurrentConfig is a provider's routing without secrets (schema
// type ProviderCurrentConfig).
type ProviderCurrentConfig struct {
	APIType string `json:"apiType"`
	BaseURL string `json:"baseUrl"`
	Meta    Meta   `json:"_meta,omitempty"`
}

// ProviderInfo is one provider (schema type ProviderInfo); Current nil
// means disabled.
type ProviderInfo struct {
	ProviderID string                 `json:"providerId"`
	Supported  []string               `json:"supported"`
	Required   bool                   `json:"required"`
	Current    *ProviderCurrentConfig `json:"current,omitempty"`
	Meta       Meta                   `json:"_meta,omitempty"`
}

// ListProvidersResponse is the result of `providers/list` (schema type
// ListProvidersResponse).
type ListProvidersResponse struct {
	Providers []ProviderInfo `json:"providers"`
	Meta      Meta           `json:"_meta,omitempty"`
}

// SetProviderRequest is the params of `providers/set` (schema type
// SetProviderRequest): the whole configuration of one provider; Headers
// may carry its key (Authorization).
type SetProviderRequest struct {
	ProviderID string            `json:"providerId"`
	APIType    string            `json:"apiType"`
	BaseURL    string            `json:"baseUrl"`
	Headers    map[string]string `json:"headers,omitempty"`
	Meta       Meta              `json:"_meta,omitempty"`
}

// SetProviderResponse is the result of `providers/set` (schema type
// SetProviderResponse).
type SetProviderResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// DisableProviderRequest is the params of `providers/disable` (schema
// type DisableProviderRequest).
type DisableProviderRequest struct {
	ProviderID string `json:"providerId"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// DisableProviderResponse is the result of `providers/disable` (schema
// type DisableProviderResponse).
type DisableProviderResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// ProviderConfigurer serves `providers/list`, `providers/set` and
// `providers/disable` (agentCapabilities.providers; unstable schema).
type ProviderConfigurer interface {
	ListProviders(ctx context.Context, p ListProvidersRequest) (ListProvidersResponse, error)
	SetProvider(ctx context.Context, p SetProviderRequest) (SetProviderResponse, error)
	DisableProvider(ctx context.Context, p DisableProviderRequest) (DisableProviderResponse, error)
}
