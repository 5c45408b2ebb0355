package acp

import "encoding/json"

// This file holds the params and results of the methods the editor calls
// on the agent (x-side "agent" in the schema), in the order of [Agent]
// and its optional interfaces.

// InitializeRequest is the params of `initialize` (schema type
// InitializeRequest).
type InitializeRequest struct {
	ProtocolVersion    int                 `json:"protocolVersion"`
	ClientCapabilities *ClientCapabilities `json:"clientCapabilities,omitempty"`
	ClientInfo         *Implementation     `json:"clientInfo,omitempty"`
	Meta               Meta                `json:"_meta,omitempty"`
}

// InitializeResponse is the result of `initialize` (schema type
// InitializeResponse). AuthMethods is always written (nil as null, so set
// it to an empty list when there are none).
type InitializeResponse struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	AuthMethods       []AuthMethod      `json:"authMethods"`
	AgentInfo         *Implementation   `json:"agentInfo,omitempty"`
	Meta              Meta              `json:"_meta,omitempty"`
}

// The auth method types of ACP v1 (schema type AuthMethod).
const (
	// AuthAgent (also written as no type at all) is a login the agent
	// performs itself when the editor calls `authenticate`.
	AuthAgent = "agent"
	// AuthTerminal is a login the editor runs by starting the agent's own
	// command interactively with Args appended and Env overlaid.
	AuthTerminal = "terminal"
)

// AuthMethod is one way to log in (schema type AuthMethod: AuthMethodAgent
// when Type is "" or AuthAgent, AuthMethodTerminal when Type is
// AuthTerminal). Args and Env belong to terminal methods only. (The
// schema of SDK 2.4.0 has no other variant; an env_var method is not
// part of it.)
type AuthMethod struct {
	Type        string            `json:"type,omitempty"`
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

// AuthenticateRequest is the params of `authenticate` (schema type
// AuthenticateRequest).
type AuthenticateRequest struct {
	MethodID string `json:"methodId"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// AuthenticateResponse is the result of `authenticate` (schema type
// AuthenticateResponse).
type AuthenticateResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// LogoutRequest is the params of `logout` (schema type LogoutRequest);
// the params may be left out.
type LogoutRequest struct {
	Meta Meta `json:"_meta,omitempty"`
}

// LogoutResponse is the result of `logout` (schema type LogoutResponse).
type LogoutResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// The MCP server transports of ACP v1 (schema type McpServer); stdio is
// written as no type at all.
const (
	McpStdio = ""
	McpHTTP  = "http"
	McpSSE   = "sse"
)

// McpServer is an MCP server the editor asks the session to connect to
// (schema type McpServer), by Type: McpStdio (schema McpServerStdio:
// Command, Args, Env) or McpHTTP / McpSSE (McpServerHttp / McpServerSse:
// URL, Headers). MarshalJSON writes the fields of its type only.
type McpServer struct {
	Type    string
	Name    string
	Command string
	Args    []string
	Env     []EnvVariable
	URL     string
	Headers []HTTPHeader
	Meta    Meta
}

// EnvVariable is one environment variable (schema type EnvVariable).
type EnvVariable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Meta  Meta   `json:"_meta,omitempty"`
}

// HTTPHeader is one HTTP header (schema type HttpHeader).
type HTTPHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Meta  Meta   `json:"_meta,omitempty"`
}

// MarshalJSON writes a stdio server as {name, command, args, env} and an
// http or sse one as {type, name, url, headers}; nil lists are written as
// [] (they are required).
func (s McpServer) MarshalJSON() ([]byte, error) {
	if s.Type == McpStdio {
		return json.Marshal(struct {
			Name    string        `json:"name"`
			Command string        `json:"command"`
			Args    []string      `json:"args"`
			Env     []EnvVariable `json:"env"`
			Meta    Meta          `json:"_meta,omitempty"`
		}{s.Name, s.Command, nonNil(s.Args), nonNil(s.Env), s.Meta})
	}
	return json.Marshal(struct {
		Type    string       `json:"type"`
		Name    string       `json:"name"`
		URL     string       `json:"url"`
		Headers []HTTPHeader `json:"headers"`
		Meta    Meta         `json:"_meta,omitempty"`
	}{s.Type, s.Name, s.URL, nonNil(s.Headers), s.Meta})
}

// UnmarshalJSON reads any of the three transports.
func (s *McpServer) UnmarshalJSON(data []byte) error {
	var w struct {
		Type    string        `json:"type"`
		Name    string        `json:"name"`
		Command string        `json:"command"`
		Args    []string      `json:"args"`
		Env     []EnvVariable `json:"env"`
		URL     string        `json:"url"`
		Headers []HTTPHeader  `json:"headers"`
		Meta    Meta          `json:"_meta"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*s = McpServer(w)
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// NewSessionRequest is the params of `session/new` (schema type
// NewSessionRequest). Cwd and AdditionalDirectories are absolute paths.
type NewSessionRequest struct {
	Cwd                   string        `json:"cwd"`
	AdditionalDirectories []string      `json:"additionalDirectories,omitempty"`
	McpServers            []McpServer   `json:"mcpServers"`
	SystemPrompt          *SystemPrompt `json:"systemPrompt,omitempty"`
	Meta                  Meta          `json:"_meta,omitempty"`
}

// SessionMode is one selectable mode (schema type SessionMode).
type SessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// SessionModeState is the current mode and the modes to choose from
// (schema type SessionModeState).
type SessionModeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []SessionMode `json:"availableModes"`
	Meta           Meta          `json:"_meta,omitempty"`
}

// NewSessionResponse is the result of `session/new` (schema type
// NewSessionResponse).
type NewSessionResponse struct {
	SessionID     string                `json:"sessionId"`
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitempty"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// PromptRequest is the params of `session/prompt` (schema type
// PromptRequest).
type PromptRequest struct {
	SessionID string         `json:"sessionId"`
	Prompt    []ContentBlock `json:"prompt"`
	Meta      Meta           `json:"_meta,omitempty"`
}

// PromptResponse is the result of `session/prompt` (schema type
// PromptResponse). Usage, the turn's token counts, is in the unstable
// schema only.
type PromptResponse struct {
	StopReason StopReason `json:"stopReason"`
	Usage      *Usage     `json:"usage,omitempty"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// Usage is the tokens a prompt turn used (unstable schema type Usage):
// TotalTokens, InputTokens and OutputTokens always, the thought and cache
// counts when known.
type Usage struct {
	TotalTokens       uint64  `json:"totalTokens"`
	InputTokens       uint64  `json:"inputTokens"`
	OutputTokens      uint64  `json:"outputTokens"`
	ThoughtTokens     *uint64 `json:"thoughtTokens,omitempty"`
	CachedReadTokens  *uint64 `json:"cachedReadTokens,omitempty"`
	CachedWriteTokens *uint64 `json:"cachedWriteTokens,omitempty"`
	Meta              Meta    `json:"_meta,omitempty"`
}

// CancelNotification is the params of the `session/cancel` notification
// (schema type CancelNotification).
type CancelNotification struct {
	SessionID string `json:"sessionId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// LoadSessionRequest is the params of `session/load` (schema type
// LoadSessionRequest).
type LoadSessionRequest struct {
	McpServers            []McpServer   `json:"mcpServers"`
	Cwd                   string        `json:"cwd"`
	AdditionalDirectories []string      `json:"additionalDirectories,omitempty"`
	SessionID             string        `json:"sessionId"`
	SystemPrompt          *SystemPrompt `json:"systemPrompt,omitempty"`
	Meta                  Meta          `json:"_meta,omitempty"`
}

// LoadSessionResponse is the result of `session/load` (schema type
// LoadSessionResponse).
type LoadSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitempty"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// ListSessionsRequest is the params of `session/list` (schema type
// ListSessionsRequest); the params may be left out.
type ListSessionsRequest struct {
	Cwd    string `json:"cwd,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	// Archived is the archive filter (unstable schema): "" or
	// ArchivedExclude, ArchivedInclude, ArchivedOnly.
	Archived string `json:"archived,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// SessionInfo describes one stored session (schema type SessionInfo).
// UpdatedAt is ISO 8601.
type SessionInfo struct {
	SessionID             string   `json:"sessionId"`
	Cwd                   string   `json:"cwd"`
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
	Title                 string   `json:"title,omitempty"`
	UpdatedAt             string   `json:"updatedAt,omitempty"`
	// Archived is set (true) for an archived session (unstable schema).
	Archived bool `json:"archived,omitempty"`
	Meta     Meta `json:"_meta,omitempty"`
}

// ListSessionsResponse is the result of `session/list` (schema type
// ListSessionsResponse).
type ListSessionsResponse struct {
	Sessions   []SessionInfo `json:"sessions"`
	NextCursor string        `json:"nextCursor,omitempty"`
	Meta       Meta          `json:"_meta,omitempty"`
}

// CloseSessionRequest is the params of `session/close` (schema type
// CloseSessionRequest).
type CloseSessionRequest struct {
	SessionID string `json:"sessionId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// CloseSessionResponse is the result of `session/close` (schema type
// CloseSessionResponse).
type CloseSessionResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// SetSessionModeRequest is the params of `session/set_mode` (schema type
// SetSessionModeRequest).
type SetSessionModeRequest struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// SetSessionModeResponse is the result of `session/set_mode` (schema
// type SetSessionModeResponse).
type SetSessionModeResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// ResumeSessionRequest is the params of `session/resume` (schema type
// ResumeSessionRequest): reopen a session without replaying its history.
type ResumeSessionRequest struct {
	SessionID             string        `json:"sessionId"`
	Cwd                   string        `json:"cwd"`
	AdditionalDirectories []string      `json:"additionalDirectories,omitempty"`
	McpServers            []McpServer   `json:"mcpServers,omitempty"`
	SystemPrompt          *SystemPrompt `json:"systemPrompt,omitempty"`
	Meta                  Meta          `json:"_meta,omitempty"`
}

// ResumeSessionResponse is the result of `session/resume` (schema type
// ResumeSessionResponse).
type ResumeSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitempty"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// DeleteSessionRequest is the params of `session/delete` (schema type
// DeleteSessionRequest).
type DeleteSessionRequest struct {
	SessionID string `json:"sessionId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// DeleteSessionResponse is the result of `session/delete` (schema type
// DeleteSessionResponse).
type DeleteSessionResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// ForkSessionRequest is the params of `session/fork` (unstable schema
// type ForkSessionRequest): a new session that starts from SessionID's
// history; SystemPrompt (unstable), when set, replaces the source's.
type ForkSessionRequest struct {
	SessionID             string        `json:"sessionId"`
	Cwd                   string        `json:"cwd"`
	AdditionalDirectories []string      `json:"additionalDirectories,omitempty"`
	McpServers            []McpServer   `json:"mcpServers,omitempty"`
	SystemPrompt          *SystemPrompt `json:"systemPrompt,omitempty"`
	Meta                  Meta          `json:"_meta,omitempty"`
}

// SystemPrompt is the client's system-level instructions for a session
// (unstable schema type SystemPrompt), on session/new, load, resume and
// fork: Mode is "append" (added to the agent's own instructions) or
// "override" (replacing them); other values are the schema's custom or
// future modes. Content is its blocks (text ones only, so far). Absent
// and null are the same: no system prompt given.
type SystemPrompt struct {
	Mode    string         `json:"mode"`
	Content []ContentBlock `json:"content"`
	Meta    Meta           `json:"_meta,omitempty"`
}

// SessionSystemPromptCapabilities is sessionCapabilities.systemPrompt
// (unstable schema type SessionSystemPromptCapabilities): its presence
// says systemPrompt is taken in append mode, Mode.Override that
// override is too.
type SessionSystemPromptCapabilities struct {
	Mode *SessionSystemPromptModeCapabilities `json:"mode,omitempty"`
	Meta Meta                                 `json:"_meta,omitempty"`
}

// SessionSystemPromptModeCapabilities lists the system prompt modes
// taken besides append (unstable schema type
// SessionSystemPromptModeCapabilities).
type SessionSystemPromptModeCapabilities struct {
	Override *Empty `json:"override,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// ForkSessionResponse is the result of `session/fork` (unstable schema
// type ForkSessionResponse).
type ForkSessionResponse struct {
	SessionID     string                `json:"sessionId"`
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitempty"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// SetSessionTitleRequest is the params of `session/set_title` (unstable
// schema type SetSessionTitleRequest): the user's title for SessionID,
// which need not be open on the connection (any session session/list
// shows).
type SetSessionTitleRequest struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// SetSessionTitleResponse is the result of `session/set_title` (unstable
// schema type SetSessionTitleResponse): Title is the title as stored
// (normalized), which the editor shows.
type SetSessionTitleResponse struct {
	Title string `json:"title"`
	Meta  Meta   `json:"_meta,omitempty"`
}

// CancelRequestNotification is the params of `$/cancel_request` (schema
// type CancelRequestNotification); RequestID is the raw JSON id (a number
// or a string).
type CancelRequestNotification struct {
	RequestID json.RawMessage `json:"requestId"`
	Meta      Meta            `json:"_meta,omitempty"`
}
