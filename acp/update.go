package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The sessionUpdate discriminators of ACP v1 (schema type SessionUpdate),
// one per [Update] variant.
const (
	UpdateUserMessageChunk       = "user_message_chunk"
	UpdateAgentMessageChunk      = "agent_message_chunk"
	UpdateAgentThoughtChunk      = "agent_thought_chunk"
	UpdateToolCall               = "tool_call"
	UpdateToolCallUpdate         = "tool_call_update"
	UpdatePlan                   = "plan"
	UpdateAvailableCommands      = "available_commands_update"
	UpdateCurrentMode            = "current_mode_update"
	UpdateConfigOption           = "config_option_update"
	UpdateSessionInfo            = "session_info_update"
	UpdateUsage                  = "usage_update"
	UpdateNotice                 = "notice"
	UpdateCompaction             = "compaction_update"
	UpdateCompactionSummaryChunk = "compaction_summary_chunk"
)

// Update is the `update` of a `session/update` notification (schema type
// SessionUpdate). The set is closed: one type per kind, always used as a
// value (UserMessageChunk, AgentMessageChunk, AgentThoughtChunk, ToolCall,
// ToolCallUpdate, Plan, AvailableCommandsUpdate, CurrentModeUpdate,
// ConfigOptionUpdate, SessionInfoUpdate, UsageUpdate, Notice,
// CompactionUpdate, CompactionSummaryChunk; and SubagentUpdate, of the
// unstable schema).
//
// A variant is the schema type of its kind's fields (ContentChunk,
// ToolCall, ToolCallUpdate, ...): encoded alone it has no
// `sessionUpdate` member. The discriminator, SessionUpdateKind, is written
// by [SessionNotification] and [MarshalUpdate] as the object's first
// member, and read back by [UnmarshalUpdate].
type Update interface {
	// SessionUpdateKind is the variant's sessionUpdate value (Update*).
	SessionUpdateKind() string
	isUpdate()
}

// ContentChunk is the fields of a streamed message chunk (schema type
// ContentChunk); MessageID, when set, groups the chunks of one message.
type ContentChunk struct {
	Content   ContentBlock `json:"content"`
	MessageID string       `json:"messageId,omitempty"`
	Meta      Meta         `json:"_meta,omitempty"`
}

// UserMessageChunk is a chunk of the user's message (kind
// user_message_chunk), sent when a session's history is replayed.
type UserMessageChunk ContentChunk

// AgentMessageChunk is a chunk of the agent's answer (kind
// agent_message_chunk).
type AgentMessageChunk ContentChunk

// AgentThoughtChunk is a chunk of the agent's reasoning (kind
// agent_thought_chunk).
type AgentThoughtChunk ContentChunk

// ToolCall announces a tool call (kind tool_call; schema type ToolCall).
// Title is required; Name is the tool's programmatic name (the one the
// model called; dsh-acp always sends it); Kind defaults to other and
// Status to pending on the editor's side when empty. Content and Locations are written when
// non-nil. Meta carries Zed's terminal convention. The fields are in the
// order they are written: content last, as dsh-acp has always written it.
type ToolCall struct {
	ToolCallID string             `json:"toolCallId"`
	Title      string             `json:"title"`
	Name       string             `json:"name,omitempty"`
	Kind       ToolKind           `json:"kind,omitempty"`
	Status     ToolCallStatus     `json:"status,omitempty"`
	Locations  []ToolCallLocation `json:"locations,omitzero"`
	RawInput   json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage    `json:"rawOutput,omitempty"`
	Meta       *ToolCallMeta      `json:"_meta,omitempty"`
	Content    []ToolCallContent  `json:"content,omitzero"`
}

// UnmarshalJSON reads a tool call, its content into the item variants.
func (t *ToolCall) UnmarshalJSON(data []byte) error {
	type plain ToolCall
	var w struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	content, err := unmarshalToolCallContents(w.Content)
	*t = ToolCall(w.plain)
	t.Content = content
	return err
}

// ToolCallUpdate patches a tool call (kind tool_call_update; schema type
// ToolCallUpdate, also the card of a permission request): every field but
// ToolCallID is optional and only set fields are written. A non-nil
// Content or Locations replaces the editor's list (an empty, non-nil one
// clears it).
type ToolCallUpdate struct {
	ToolCallID string             `json:"toolCallId"`
	Title      *string            `json:"title,omitempty"`
	Name       *string            `json:"name,omitempty"`
	Kind       ToolKind           `json:"kind,omitempty"`
	Status     ToolCallStatus     `json:"status,omitempty"`
	Locations  []ToolCallLocation `json:"locations,omitzero"`
	RawInput   json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage    `json:"rawOutput,omitempty"`
	Meta       *ToolCallMeta      `json:"_meta,omitempty"`
	Content    []ToolCallContent  `json:"content,omitzero"`
}

// UnmarshalJSON reads a tool call update, its content into the item
// variants (an absent or null content is nil).
func (t *ToolCallUpdate) UnmarshalJSON(data []byte) error {
	type plain ToolCallUpdate
	var w struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	content, err := unmarshalToolCallContents(w.Content)
	*t = ToolCallUpdate(w.plain)
	t.Content = content
	return err
}

// Plan is the agent's whole current plan (kind plan; schema type Plan):
// it replaces the previous one. Entries is required (nil is written as
// null, so use an empty list for no entries).
type Plan struct {
	Entries []PlanEntry `json:"entries"`
	Meta    Meta        `json:"_meta,omitempty"`
}

// AvailableCommandsUpdate is the slash commands the session offers now
// (kind available_commands_update; schema type AvailableCommandsUpdate).
type AvailableCommandsUpdate struct {
	AvailableCommands []AvailableCommand `json:"availableCommands"`
	Meta              Meta               `json:"_meta,omitempty"`
}

// CurrentModeUpdate says the session's mode changed (kind
// current_mode_update; schema type CurrentModeUpdate).
type CurrentModeUpdate struct {
	CurrentModeID string `json:"currentModeId"`
	Meta          Meta   `json:"_meta,omitempty"`
}

// ConfigOptionUpdate is every config option of the session with its
// current value (kind config_option_update; schema type ConfigOptionUpdate).
type ConfigOptionUpdate struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// SessionInfoUpdate patches the session's metadata (kind
// session_info_update; schema type SessionInfoUpdate): a nil Title leaves
// the title unchanged; UpdatedAt is ISO 8601.
type SessionInfoUpdate struct {
	Title     *string `json:"title,omitempty"`
	UpdatedAt string  `json:"updatedAt,omitempty"`
	Meta      Meta    `json:"_meta,omitempty"`
}

// UsageUpdate is the session's context window use and cost (kind
// usage_update; schema type UsageUpdate): Used and Size in tokens.
type UsageUpdate struct {
	Used uint64 `json:"used"`
	Size uint64 `json:"size"`
	Cost *Cost  `json:"cost,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// Cost is an amount of money (schema type Cost): Currency is an ISO 4217
// code such as "USD".
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
	Meta     Meta    `json:"_meta,omitempty"`
}

// The notice severities of ACP v1 (schema type NoticeSeverity); other
// values are allowed.
const (
	NoticeInfo    = "info"
	NoticeWarning = "warning"
	NoticeError   = "error"
)

// Notice is information for the user that is not part of the session's
// history (kind notice; schema type Notice). Title is required and not
// empty. Send it only to editors that advertised `session.notices`.
type Notice struct {
	Severity    string `json:"severity"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// The compaction statuses of ACP v1 (schema type CompactionStatus); other
// values are allowed.
const (
	CompactionInProgress = "in_progress"
	CompactionCompleted  = "completed"
	CompactionFailed     = "failed"
	CompactionCancelled  = "cancelled"
)

// CompactionUpdate creates or patches a context compaction (kind
// compaction_update; schema type CompactionUpdate). The first update of a
// CompactionID fixes its place in the timeline. Summary, when non-nil,
// replaces the summary (an empty list clears it); a nil Error leaves the
// error text unchanged. Send it only to editors that advertised
// `session.compaction`.
type CompactionUpdate struct {
	CompactionID string         `json:"compactionId"`
	Status       string         `json:"status"`
	Summary      []ContentBlock `json:"summary,omitzero"`
	Error        *string        `json:"error,omitempty"`
	Meta         Meta           `json:"_meta,omitempty"`
}

// CompactionSummaryChunk appends a block to a compaction's summary (kind
// compaction_summary_chunk; schema type CompactionSummaryChunk).
type CompactionSummaryChunk struct {
	CompactionID string       `json:"compactionId"`
	Content      ContentBlock `json:"content"`
	Meta         Meta         `json:"_meta,omitempty"`
}

// SessionUpdateKind implements Update.
func (UserMessageChunk) SessionUpdateKind() string        { return UpdateUserMessageChunk }
func (AgentMessageChunk) SessionUpdateKind() string       { return UpdateAgentMessageChunk }
func (AgentThoughtChunk) SessionUpdateKind() string       { return UpdateAgentThoughtChunk }
func (ToolCall) SessionUpdateKind() string                { return UpdateToolCall }
func (ToolCallUpdate) SessionUpdateKind() string          { return UpdateToolCallUpdate }
func (Plan) SessionUpdateKind() string                    { return UpdatePlan }
func (AvailableCommandsUpdate) SessionUpdateKind() string { return UpdateAvailableCommands }
func (CurrentModeUpdate) SessionUpdateKind() string       { return UpdateCurrentMode }
func (ConfigOptionUpdate) SessionUpdateKind() string      { return UpdateConfigOption }
func (SessionInfoUpdate) SessionUpdateKind() string       { return UpdateSessionInfo }
func (UsageUpdate) SessionUpdateKind() string             { return UpdateUsage }
func (Notice) SessionUpdateKind() string                  { return UpdateNotice }
func (CompactionUpdate) SessionUpdateKind() string        { return UpdateCompaction }
func (CompactionSummaryChunk) SessionUpdateKind() string  { return UpdateCompactionSummaryChunk }

func (UserMessageChunk) isUpdate()        {}
func (AgentMessageChunk) isUpdate()       {}
func (AgentThoughtChunk) isUpdate()       {}
func (ToolCall) isUpdate()                {}
func (ToolCallUpdate) isUpdate()          {}
func (Plan) isUpdate()                    {}
func (AvailableCommandsUpdate) isUpdate() {}
func (CurrentModeUpdate) isUpdate()       {}
func (ConfigOptionUpdate) isUpdate()      {}
func (SessionInfoUpdate) isUpdate()       {}
func (UsageUpdate) isUpdate()             {}
func (Notice) isUpdate()                  {}
func (CompactionUpdate) isUpdate()        {}
func (CompactionSummaryChunk) isUpdate()  {}

// updateDecoders reads each kind's variant: the one table of the closed
// set (tests check it against the schema's list of kinds).
var updateDecoders = map[string]func([]byte) (Update, error){
	UpdateUserMessageChunk:       decodeUpdate[UserMessageChunk],
	UpdateAgentMessageChunk:      decodeUpdate[AgentMessageChunk],
	UpdateAgentThoughtChunk:      decodeUpdate[AgentThoughtChunk],
	UpdateToolCall:               decodeUpdate[ToolCall],
	UpdateToolCallUpdate:         decodeUpdate[ToolCallUpdate],
	UpdatePlan:                   decodeUpdate[Plan],
	UpdateAvailableCommands:      decodeUpdate[AvailableCommandsUpdate],
	UpdateCurrentMode:            decodeUpdate[CurrentModeUpdate],
	UpdateConfigOption:           decodeUpdate[ConfigOptionUpdate],
	UpdateSessionInfo:            decodeUpdate[SessionInfoUpdate],
	UpdateUsage:                  decodeUpdate[UsageUpdate],
	UpdateNotice:                 decodeUpdate[Notice],
	UpdateCompaction:             decodeUpdate[CompactionUpdate],
	UpdateCompactionSummaryChunk: decodeUpdate[CompactionSummaryChunk],
}

func decodeUpdate[T Update](data []byte) (Update, error) {
	var v T
	err := json.Unmarshal(data, &v)
	return v, err
}

// UnmarshalUpdate reads an update object (with its `sessionUpdate`
// member) into its variant. A missing or unknown kind, or fields that do
// not fit the variant, is an error.
func UnmarshalUpdate(data []byte) (Update, error) {
	var probe struct {
		Kind *string `json:"sessionUpdate"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, err
	}
	if probe.Kind == nil {
		return nil, fmt.Errorf("acp: session update without sessionUpdate")
	}
	dec := updateDecoders[*probe.Kind]
	if dec == nil {
		dec = unstableUpdateDecoders[*probe.Kind]
	}
	if dec == nil {
		return nil, fmt.Errorf("acp: unknown session update kind %q", *probe.Kind)
	}
	u, err := dec(data)
	if err != nil {
		return nil, fmt.Errorf("acp: %s: %w", *probe.Kind, err)
	}
	return u, nil
}

// MarshalUpdate writes u as the `update` object of a notification: the
// `sessionUpdate` member first, then the variant's fields. A nil u, or a
// variant that cannot be encoded, is an error.
func MarshalUpdate(u Update) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeUpdate(&b, json.NewEncoder(&b), u); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// encodeUpdate appends u's tagged object to b through enc, an encoder
// writing to b with HTML escaping (encoding/json's default). On error b
// holds partial output that the caller discards.
func encodeUpdate(b *bytes.Buffer, enc *json.Encoder, u Update) error {
	if u == nil {
		return fmt.Errorf("acp: nil session update")
	}
	b.WriteString(`{"sessionUpdate":"`)
	b.WriteString(u.SessionUpdateKind()) // constant ASCII: no escaping needed
	b.WriteByte('"')
	at := b.Len()
	if err := enc.Encode(u); err != nil {
		return fmt.Errorf("acp: encoding %s: %w", u.SessionUpdateKind(), err)
	}
	// The variant's object is b[at:] plus a newline: its '{' becomes the
	// ',' after the discriminator ("}" when it has no members).
	body := b.Bytes()[at:]
	if len(body) < 3 || body[0] != '{' {
		return fmt.Errorf("acp: %s does not encode as a JSON object", u.SessionUpdateKind())
	}
	if body[1] == '}' {
		b.Truncate(at)
		b.WriteByte('}')
		return nil
	}
	body[0] = ','
	b.Truncate(b.Len() - 1) // the encoder's newline
	return nil
}

// SessionNotification is the params of `session/update` (schema type
// SessionNotification).
type SessionNotification struct {
	SessionID string
	Update    Update
	Meta      Meta
}

// MarshalJSON writes {"sessionId", "update" (tagged, see MarshalUpdate),
// "_meta" when set}, escaped as json.Marshal escapes (HTML included).
func (n SessionNotification) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := n.encode(&b, json.NewEncoder(&b)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// encode appends the notification object to b through enc (see
// encodeUpdate).
func (n *SessionNotification) encode(b *bytes.Buffer, enc *json.Encoder) error {
	b.WriteString(`{"sessionId":`)
	if err := encodeString(b, enc, n.SessionID); err != nil {
		return err
	}
	b.WriteString(`,"update":`)
	if err := encodeUpdate(b, enc, n.Update); err != nil {
		return err
	}
	if len(n.Meta) > 0 {
		b.WriteString(`,"_meta":`)
		if err := encodeValue(b, enc, n.Meta); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// encodeValue appends v's JSON to b through enc, without the newline.
func encodeValue(b *bytes.Buffer, enc *json.Encoder, v any) error {
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1)
	return nil
}

// encodeString appends s as a JSON string: quoted as it is when every
// byte is printable ASCII that encoding/json keeps (the method names and
// session ids this agent writes), else through enc.
func encodeString(b *bytes.Buffer, enc *json.Encoder, s string) error {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return encodeValue(b, enc, s)
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
	return nil
}

// UnmarshalJSON reads the notification, its update into the variant its
// sessionUpdate names (see UnmarshalUpdate).
func (n *SessionNotification) UnmarshalJSON(data []byte) error {
	var w struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
		Meta      Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if len(w.Update) == 0 {
		return fmt.Errorf("acp: session/update without an update")
	}
	u, err := UnmarshalUpdate(w.Update)
	if err != nil {
		return err
	}
	*n = SessionNotification{SessionID: w.SessionID, Update: u, Meta: w.Meta}
	return nil
}
