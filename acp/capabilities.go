package acp

import "encoding/json"

// FileSystemCapabilities says which fs/* methods the editor serves
// (schema type FileSystemCapabilities).
type FileSystemCapabilities struct {
	ReadTextFile  bool `json:"readTextFile,omitempty"`
	WriteTextFile bool `json:"writeTextFile,omitempty"`
	Meta          Meta `json:"_meta,omitempty"`
}

// ClientCapabilities is what the editor offers (schema type
// ClientCapabilities). Meta carries conventions such as Zed's
// `terminal_output`.
type ClientCapabilities struct {
	FS          *FileSystemCapabilities    `json:"fs,omitempty"`
	Terminal    bool                       `json:"terminal,omitempty"`
	Session     *ClientSessionCapabilities `json:"session,omitempty"`
	Auth        *AuthCapabilities          `json:"auth,omitempty"`
	Elicitation *ElicitationCapabilities   `json:"elicitation,omitempty"`
	// Subagents (unstable schema) says the editor shows child sessions:
	// subagent_update and the children's own session/updates.
	Subagents *SubagentCapabilities `json:"subagents,omitempty"`
	Meta      Meta                  `json:"_meta,omitempty"`
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

// ClientSessionCapabilities are the session updates and option kinds the
// editor understands (schema type ClientSessionCapabilities): an agent
// sends `compaction_update`/`compaction_summary_chunk` only with
// Compaction, `notice` only with Notices, and boolean config options only
// with ConfigOptions.Boolean.
type ClientSessionCapabilities struct {
	Compaction    *Empty                            `json:"compaction,omitempty"`
	ConfigOptions *SessionConfigOptionsCapabilities `json:"configOptions,omitempty"`
	Notices       *Empty                            `json:"notices,omitempty"`
	Meta          Meta                              `json:"_meta,omitempty"`
}

// SessionConfigOptionsCapabilities are the config option kinds the
// editor renders beyond select (schema type
// SessionConfigOptionsCapabilities).
type SessionConfigOptionsCapabilities struct {
	Boolean *Empty `json:"boolean,omitempty"`
	Meta    Meta   `json:"_meta,omitempty"`
}

// AuthCapabilities say which auth methods the editor can run (schema
// type AuthCapabilities): Terminal allows `type: "terminal"` methods.
type AuthCapabilities struct {
	Terminal bool `json:"terminal,omitempty"`
	Meta     Meta `json:"_meta,omitempty"`
}

// ElicitationCapabilities say which elicitation modes the editor serves
// (schema type ElicitationCapabilities).
type ElicitationCapabilities struct {
	Form *Empty `json:"form,omitempty"`
	URL  *Empty `json:"url,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// Empty is an object-valued capability that is either absent (nil) or an
// object holding at most `_meta` (e.g. schema types SessionListCapabilities,
// LogoutCapabilities, NoticeCapabilities).
type Empty struct {
	Meta Meta `json:"_meta,omitempty"`
}

// PromptCapabilities says which prompt content blocks the agent accepts
// beyond text and resource_link (schema type PromptCapabilities).
type PromptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
	Meta            Meta `json:"_meta,omitempty"`
}

// McpCapabilities says which MCP transports beyond stdio the agent can
// connect to (schema type McpCapabilities).
type McpCapabilities struct {
	HTTP bool `json:"http,omitempty"`
	SSE  bool `json:"sse,omitempty"`
	Meta Meta `json:"_meta,omitempty"`
}

// SessionCapabilities lists the optional session methods the agent serves
// (schema type SessionCapabilities); a nil field is unsupported. The
// connection sets List, Delete, Resume, Close, Fork and Title from the
// interfaces the agent implements ([Capabilities]); Fork and Title are
// in the unstable schema only (SessionForkCapabilities,
// SessionTitleCapabilities).
type SessionCapabilities struct {
	List                  *Empty `json:"list,omitempty"`
	Delete                *Empty `json:"delete,omitempty"`
	AdditionalDirectories *Empty `json:"additionalDirectories,omitempty"`
	Resume                *Empty `json:"resume,omitempty"`
	Close                 *Empty `json:"close,omitempty"`
	Fork                  *Empty `json:"fork,omitempty"`
	Title                 *Empty `json:"title,omitempty"`
	// Archive and Status are in the unstable schema only
	// (SessionArchiveCapabilities, SessionStatusCapabilities).
	Archive *Empty `json:"archive,omitempty"`
	Status  *Empty `json:"status,omitempty"`
	// SystemPrompt (unstable): systemPrompt is taken on session/new,
	// load, resume and fork.
	SystemPrompt *SessionSystemPromptCapabilities `json:"systemPrompt,omitempty"`
	Meta         Meta                             `json:"_meta,omitempty"`
}

// AgentAuthCapabilities lists the optional auth methods the agent serves
// (schema type AgentAuthCapabilities): Logout is set by the connection
// when the agent is a [Logouter].
type AgentAuthCapabilities struct {
	Logout *Empty `json:"logout,omitempty"`
	// Status is in the unstable schema only (AuthStatusCapabilities).
	Status *Empty `json:"status,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// AgentCapabilities is what the agent offers (schema type
// AgentCapabilities). LoadSession, SessionCapabilities' method bits and
// Auth.Logout are derived by the connection from the interfaces the
// agent implements ([Capabilities]); what the agent sets there itself is
// replaced.
type AgentCapabilities struct {
	LoadSession         bool                   `json:"loadSession"`
	PromptCapabilities  PromptCapabilities     `json:"promptCapabilities"`
	McpCapabilities     *McpCapabilities       `json:"mcpCapabilities,omitempty"`
	SessionCapabilities *SessionCapabilities   `json:"sessionCapabilities,omitempty"`
	Auth                *AgentAuthCapabilities `json:"auth,omitempty"`
	// Providers is in the unstable schema only (ProvidersCapabilities).
	Providers *Empty `json:"providers,omitempty"`
	Meta      Meta   `json:"_meta,omitempty"`
}
