package acp

import (
	"encoding/json"
)

// ProtocolVersion is the only ACP major version this agent speaks
// (schema type ProtocolVersion).
const ProtocolVersion = 1

// Meta is an ACP `_meta` object, kept as raw JSON so that nothing an editor
// sends is lost or reordered.
type Meta = json.RawMessage

// Implementation names a client or agent (schema type Implementation).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// FileSystemCapabilities says which fs/* methods the editor serves
// (schema type FileSystemCapabilities).
type FileSystemCapabilities struct {
	ReadTextFile  bool `json:"readTextFile,omitempty"`
	WriteTextFile bool `json:"writeTextFile,omitempty"`
}

// ClientCapabilities is what the editor offers (schema type
// ClientCapabilities). Meta carries conventions such as Zed's
// `terminal_output`.
type ClientCapabilities struct {
	FS       *FileSystemCapabilities `json:"fs,omitempty"`
	Terminal bool                    `json:"terminal,omitempty"`
	Meta     Meta                    `json:"_meta,omitempty"`
}

// TerminalOutput reports whether the editor set
// `_meta.terminal_output` to the JSON value true (Zed's convention for
// agent-owned live terminals; any other value counts as false).
func (c *ClientCapabilities) TerminalOutput() bool {
	if c == nil || len(c.Meta) == 0 {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(c.Meta, &m) != nil {
		return false
	}
	return string(m["terminal_output"]) == "true"
}

// InitializeRequest is the params of `initialize` (schema type
// InitializeRequest).
type InitializeRequest struct {
	ProtocolVersion    int                 `json:"protocolVersion"`
	ClientCapabilities *ClientCapabilities `json:"clientCapabilities,omitempty"`
	ClientInfo         *Implementation     `json:"clientInfo,omitempty"`
	Meta               Meta                `json:"_meta,omitempty"`
}

// PromptCapabilities says which prompt content blocks the agent accepts
// beyond text and resource_link (schema type PromptCapabilities).
type PromptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

// Empty is an object-valued capability that is either absent (nil) or `{}`.
type Empty struct{}

// SessionCapabilities lists the optional session methods the agent serves
// (schema type SessionCapabilities); a nil field is unsupported.
type SessionCapabilities struct {
	List  *Empty `json:"list,omitempty"`
	Close *Empty `json:"close,omitempty"`
}

// AgentCapabilities is what the agent offers (schema type
// AgentCapabilities).
type AgentCapabilities struct {
	LoadSession         bool                 `json:"loadSession"`
	PromptCapabilities  PromptCapabilities   `json:"promptCapabilities"`
	SessionCapabilities *SessionCapabilities `json:"sessionCapabilities,omitempty"`
}

// AuthMethod is one way to log in (schema type AuthMethodAgent).
type AuthMethod struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// InitializeResponse is the result of `initialize` (schema type
// InitializeResponse).
type InitializeResponse struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	AuthMethods       []AuthMethod      `json:"authMethods"`
	AgentInfo         *Implementation   `json:"agentInfo,omitempty"`
}

// AuthenticateRequest is the params of `authenticate` (schema type
// AuthenticateRequest).
type AuthenticateRequest struct {
	MethodID string `json:"methodId"`
}

// NewSessionRequest is the params of `session/new` (schema type
// NewSessionRequest). McpServers are kept raw: until MCP support lands they
// are accepted and ignored.
type NewSessionRequest struct {
	Cwd                   string            `json:"cwd"`
	McpServers            []json.RawMessage `json:"mcpServers"`
	AdditionalDirectories []string          `json:"additionalDirectories,omitempty"`
	Meta                  Meta              `json:"_meta,omitempty"`
}

// SessionMode is one selectable mode (schema type SessionMode).
type SessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// SessionModeState is the current mode and the modes to choose from
// (schema type SessionModeState).
type SessionModeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []SessionMode `json:"availableModes"`
}

// NewSessionResponse is the result of `session/new` (schema type
// NewSessionResponse).
type NewSessionResponse struct {
	SessionID string            `json:"sessionId"`
	Modes     *SessionModeState `json:"modes,omitempty"`
}

// LoadSessionRequest is the params of `session/load` (schema type
// LoadSessionRequest).
type LoadSessionRequest struct {
	SessionID             string            `json:"sessionId"`
	Cwd                   string            `json:"cwd"`
	McpServers            []json.RawMessage `json:"mcpServers"`
	AdditionalDirectories []string          `json:"additionalDirectories,omitempty"`
}

// LoadSessionResponse is the result of `session/load` (schema type
// LoadSessionResponse).
type LoadSessionResponse struct {
	Modes *SessionModeState `json:"modes,omitempty"`
}

// ListSessionsRequest is the params of `session/list` (schema type
// ListSessionsRequest).
type ListSessionsRequest struct {
	Cwd    string `json:"cwd,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// SessionInfo describes one stored session (schema type SessionInfo).
// UpdatedAt is ISO 8601.
type SessionInfo struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	Title     string `json:"title,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"`
}

// ListSessionsResponse is the result of `session/list` (schema type
// ListSessionsResponse).
type ListSessionsResponse struct {
	Sessions   []SessionInfo `json:"sessions"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

// SessionRequest is the params of the methods that only name a session:
// `session/close` (CloseSessionRequest) and `session/cancel`
// (CancelNotification).
type SessionRequest struct {
	SessionID string `json:"sessionId"`
}

// SetSessionModeRequest is the params of `session/set_mode` (schema type
// SetSessionModeRequest).
type SetSessionModeRequest struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

// PromptRequest is the params of `session/prompt` (schema type
// PromptRequest).
type PromptRequest struct {
	SessionID string         `json:"sessionId"`
	Prompt    []ContentBlock `json:"prompt"`
}

// StopReason ends a prompt turn (schema type StopReason).
type StopReason string

// The stop reasons of ACP v1.
const (
	StopEndTurn         StopReason = "end_turn"
	StopMaxTokens       StopReason = "max_tokens"
	StopMaxTurnRequests StopReason = "max_turn_requests"
	StopRefusal         StopReason = "refusal"
	StopCancelled       StopReason = "cancelled"
)

// PromptResponse is the result of `session/prompt` (schema type
// PromptResponse).
type PromptResponse struct {
	StopReason StopReason `json:"stopReason"`
}

// CancelRequestParams is the params of `$/cancel_request` (schema type
// CancelRequestNotification); RequestID is the raw JSON id.
type CancelRequestParams struct {
	RequestID json.RawMessage `json:"requestId"`
}

// EmbeddedResource is the `resource` of a resource block (schema type
// EmbeddedResourceResource): text or base64 blob contents.
type EmbeddedResource struct {
	URI      string `json:"uri"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// ContentBlock is a prompt or message content block (schema type
// ContentBlock), discriminated by Type: "text", "image", "audio",
// "resource_link" or "resource". Only the fields of its type are written.
type ContentBlock struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitempty"`
	Data        string            `json:"data,omitempty"`
	MimeType    string            `json:"mimeType,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Name        string            `json:"name,omitempty"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Size        *int64            `json:"size,omitempty"`
	Resource    *EmbeddedResource `json:"resource,omitempty"`
	Annotations json.RawMessage   `json:"annotations,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

// TextBlock returns a text content block.
func TextBlock(s string) ContentBlock { return ContentBlock{Type: "text", Text: s} }

// MarshalJSON writes a text block as {type, text, annotations, _meta}
// with its (required) text even when empty, any other block as its
// non-empty fields in declaration order (type always). Strings use HTML
// escaping. A raw field (Annotations, Meta) that is not valid JSON is an
// error.
func (b ContentBlock) MarshalJSON() ([]byte, error) {
	return b.appendJSON(make([]byte, 0, 64+len(b.Text)))
}

// ToolKind is the category of a tool call (schema type ToolKind).
type ToolKind string

// ToolCallStatus is the execution status of a tool call (schema type
// ToolCallStatus): pending, in_progress, completed or failed.
type ToolCallStatus string

// The tool call statuses of ACP v1.
const (
	StatusPending    ToolCallStatus = "pending"
	StatusInProgress ToolCallStatus = "in_progress"
	StatusCompleted  ToolCallStatus = "completed"
	StatusFailed     ToolCallStatus = "failed"
)

// ToolCallContent is one item of a tool call's content (schema type
// ToolCallContent), discriminated by Type: "content" (Content set),
// "diff" (Path, OldText, NewText; OldText nil is written as an explicit
// null, meaning a new file) or "terminal" (TerminalID).
type ToolCallContent struct {
	Type       string
	Content    *ContentBlock
	Path       string
	OldText    *string
	NewText    string
	TerminalID string
}

// TextContent returns a "content" item holding a text block.
func TextContent(s string) ToolCallContent {
	b := TextBlock(s)
	return ToolCallContent{Type: "content", Content: &b}
}

// MarshalJSON writes only the fields of the item's type, in the order
// listed above; an unknown Type, or a "content" item without Content, is
// an error.
func (c ToolCallContent) MarshalJSON() ([]byte, error) {
	return c.appendJSON(make([]byte, 0, 128))
}

// UnmarshalJSON reads any of the three item shapes.
func (c *ToolCallContent) UnmarshalJSON(data []byte) error {
	var w struct {
		Type       string        `json:"type"`
		Content    *ContentBlock `json:"content"`
		Path       string        `json:"path"`
		OldText    *string       `json:"oldText"`
		NewText    string        `json:"newText"`
		TerminalID string        `json:"terminalId"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*c = ToolCallContent{Type: w.Type, Content: w.Content, Path: w.Path, OldText: w.OldText, NewText: w.NewText, TerminalID: w.TerminalID}
	return nil
}

// ToolCallLocation is a file the tool call touches (schema type
// ToolCallLocation). Path is absolute; Line is the wire value (its base,
// 0 or 1, is chosen by the bridge), nil when unknown.
type ToolCallLocation struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

// The sessionUpdate discriminators of ACP v1 (schema type SessionUpdate).
const (
	UpdateUserMessageChunk  = "user_message_chunk"
	UpdateAgentMessageChunk = "agent_message_chunk"
	UpdateAgentThoughtChunk = "agent_thought_chunk"
	UpdateToolCall          = "tool_call"
	UpdateToolCallUpdate    = "tool_call_update"
	UpdatePlan              = "plan"
	UpdateAvailableCommands = "available_commands_update"
	UpdateCurrentMode       = "current_mode_update"
	UpdateSessionInfo       = "session_info_update"
)

// SessionUpdate is the `update` of a `session/update` notification (schema
// type SessionUpdate): one struct for every variant, discriminated by
// SessionUpdate; only the fields of that variant are set. The tool call
// fields serve both `tool_call` (ToolCall) and `tool_call_update`
// (ToolCallUpdate, where every field but toolCallId is optional).
// Content and Locations are written when non-nil (an empty, non-nil list
// is written as [] and clears the editor's list).
type SessionUpdate struct {
	SessionUpdate string `json:"sessionUpdate,omitempty"`

	// user_message_chunk, agent_message_chunk, agent_thought_chunk.
	Content *ContentBlock `json:"content,omitempty"`

	// tool_call, tool_call_update.
	ToolCallID    string             `json:"toolCallId,omitempty"`
	Title         *string            `json:"title,omitempty"`
	Kind          ToolKind           `json:"kind,omitempty"`
	Status        ToolCallStatus     `json:"status,omitempty"`
	ToolContent   []ToolCallContent  `json:"-"`
	Locations     []ToolCallLocation `json:"locations,omitzero"`
	RawInput      json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput     json.RawMessage    `json:"rawOutput,omitempty"`
	ToolCallExtra *ToolCallMeta      `json:"_meta,omitempty"`

	// plan.
	Entries []PlanEntry `json:"entries,omitzero"`

	// available_commands_update.
	AvailableCommands []AvailableCommand `json:"availableCommands,omitzero"`

	// current_mode_update.
	CurrentModeID string `json:"currentModeId,omitempty"`

	// session_info_update.
	InfoTitle *string `json:"-"`
	UpdatedAt string  `json:"updatedAt,omitempty"`
}

// MarshalJSON writes the variant's fields, each non-empty one under its
// tag in declaration order (strings with HTML escaping). A tool call's
// content (ToolContent non-nil) goes last under "content", and then
// Content is not written; otherwise a session_info_update's title
// (InfoTitle non-nil) goes last under "title", and then Title is not
// written. A raw field that is not valid JSON, or an invalid content item,
// is an error.
func (u SessionUpdate) MarshalJSON() ([]byte, error) {
	return u.appendJSON(make([]byte, 0, 256))
}

// UnmarshalJSON reads any variant (used by tests and the demo client).
func (u *SessionUpdate) UnmarshalJSON(data []byte) error {
	type plain SessionUpdate
	var w struct {
		plain
		RawContent json.RawMessage `json:"content"`
		RawTitle   json.RawMessage `json:"title"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*u = SessionUpdate(w.plain)
	switch w.SessionUpdate {
	case UpdateUserMessageChunk, UpdateAgentMessageChunk, UpdateAgentThoughtChunk:
		if len(w.RawContent) > 0 {
			u.Content = new(ContentBlock)
			if err := json.Unmarshal(w.RawContent, u.Content); err != nil {
				return err
			}
		}
	case UpdateSessionInfo:
		if len(w.RawTitle) > 0 && string(w.RawTitle) != "null" {
			var t string
			if err := json.Unmarshal(w.RawTitle, &t); err != nil {
				return err
			}
			u.InfoTitle = &t
		}
	default:
		if len(w.RawContent) > 0 && string(w.RawContent) != "null" {
			if err := json.Unmarshal(w.RawContent, &u.ToolContent); err != nil {
				return err
			}
		}
		if len(w.RawTitle) > 0 && string(w.RawTitle) != "null" {
			var t string
			if err := json.Unmarshal(w.RawTitle, &t); err != nil {
				return err
			}
			u.Title = &t
		}
	}
	return nil
}

// ToolCallMeta is the `_meta` of a tool call or update as dsh-acp writes
// it: Zed's terminal convention (acp-protocol.md §13).
type ToolCallMeta struct {
	TerminalInfo   *TerminalInfo   `json:"terminal_info,omitempty"`
	TerminalOutput *TerminalOutput `json:"terminal_output,omitempty"`
	TerminalExit   *TerminalExit   `json:"terminal_exit,omitempty"`
}

// TerminalInfo creates a display-only terminal in Zed; sent once, on the
// `tool_call`.
type TerminalInfo struct {
	TerminalID string `json:"terminal_id"`
	Cwd        string `json:"cwd,omitempty"`
}

// TerminalOutput appends Data (UTF-8 text) to a display terminal; sent on
// `tool_call_update`s. Data is always written, "" included.
type TerminalOutput struct {
	TerminalID string `json:"terminal_id"`
	Data       string `json:"data"`
}

// TerminalExit ends a display terminal. Both keys are always written;
// nil is written as null.
type TerminalExit struct {
	TerminalID string  `json:"terminal_id"`
	ExitCode   *int    `json:"exit_code"`
	Signal     *string `json:"signal"`
}

// PlanEntry is one entry of an agent plan (schema type PlanEntry).
// Priority is high, medium or low; Status pending, in_progress or
// completed.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

// AvailableCommand is a slash command the agent offers (schema type
// AvailableCommand).
type AvailableCommand struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// SessionNotification is the params of `session/update` (schema type
// SessionNotification).
type SessionNotification struct {
	SessionID string        `json:"sessionId"`
	Update    SessionUpdate `json:"update"`
}

// PermissionOption is one answer the user can give (schema type
// PermissionOption). Kind is allow_once, allow_always, reject_once or
// reject_always.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// RequestPermissionRequest is the params of `session/request_permission`
// (schema type RequestPermissionRequest). ToolCall is a ToolCallUpdate: its
// SessionUpdate discriminator is left empty.
type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  SessionUpdate      `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
}

// PermissionOutcome is the editor's answer (schema type
// RequestPermissionOutcome): Outcome "selected" with OptionID, or
// "cancelled".
type PermissionOutcome struct {
	Outcome  string `json:"outcome"`
	OptionID string `json:"optionId,omitempty"`
}

// RequestPermissionResponse is the result of `session/request_permission`
// (schema type RequestPermissionResponse).
type RequestPermissionResponse struct {
	Outcome PermissionOutcome `json:"outcome"`
}

// ReadTextFileRequest is the params of `fs/read_text_file` (schema type
// ReadTextFileRequest). Line is 1-based; Limit counts lines.
type ReadTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Line      *int   `json:"line,omitempty"`
	Limit     *int   `json:"limit,omitempty"`
}

// ReadTextFileResponse is the result of `fs/read_text_file`.
type ReadTextFileResponse struct {
	Content string `json:"content"`
}

// WriteTextFileRequest is the params of `fs/write_text_file` (schema type
// WriteTextFileRequest).
type WriteTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
}
