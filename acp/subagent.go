package acp

// UpdateSubagent is the sessionUpdate discriminator of SubagentUpdate.
// It exists in the unstable schema only; an agent sends it only to a
// client that advertised ClientCapabilities.Subagents.
const UpdateSubagent = "subagent_update"

// The child work states of the unstable schema (type StateUpdate).
const (
	SubagentRunning        = "running"
	SubagentIdle           = "idle"
	SubagentRequiresAction = "requires_action"
	SubagentUnknown        = "unknown"
)

// SubagentUpdate announces a child session of the session it is sent on,
// or patches the parent's metadata about it (kind subagent_update;
// unstable schema type SubagentUpdate). SessionID is the child's id
// (required); every other field left nil is unchanged. The first update
// for a child announces it and comes before any traffic of the child.
type SubagentUpdate struct {
	SessionID    string                       `json:"sessionId"`
	Title        *string                      `json:"title,omitempty"`
	Description  *string                      `json:"description,omitempty"`
	Capabilities *SubagentSessionCapabilities `json:"capabilities,omitempty"`
	State        *SubagentState               `json:"state,omitempty"`
	Cwd          string                       `json:"cwd,omitempty"`
	Meta         Meta                         `json:"_meta,omitempty"`
}

// SubagentSessionCapabilities are the mutations the client may make on
// one child (unstable schema type SubagentSessionCapabilities): Cancel
// set (even to {}) allows `session/cancel` of that child.
type SubagentSessionCapabilities struct {
	Cancel *Empty `json:"cancel,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// SubagentState is a whole snapshot of a child's foreground work
// (unstable schema type StateUpdate): State is one of the Subagent*
// states; StopReason and Usage are set only with SubagentIdle (the
// StopReason values of a prompt response, Usage the child's tokens).
type SubagentState struct {
	State      string     `json:"state"`
	StopReason StopReason `json:"stopReason,omitempty"`
	Usage      *Usage     `json:"usage,omitempty"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// SubagentCapabilities is the client's marker that it understands child
// sessions (unstable schema type SubagentCapabilities; `{}`).
type SubagentCapabilities = Empty

// SessionUpdateKind implements Update.
func (SubagentUpdate) SessionUpdateKind() string { return UpdateSubagent }
func (SubagentUpdate) isUpdate()                 {}

// unstableUpdateDecoders read the kinds only the unstable schema has
// (tests check them against it); UnmarshalUpdate tries them after
// updateDecoders.
var unstableUpdateDecoders = map[string]func([]byte) (Update, error){
	UpdateSubagent: decodeUpdate[SubagentUpdate],
}
