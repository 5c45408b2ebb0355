// This file is how events are told apart and stored: each kind's log
// type and whether it is transient, and the JSON of an event in the log
// ({type, seq, time, data}).

package session

import (
	"encoding/json"
	"fmt"
)

func (TurnStart) EventType() string        { return "turn/start" }
func (TurnEnd) EventType() string          { return "turn/end" }
func (StepStart) EventType() string        { return "step/start" }
func (StepEnd) EventType() string          { return "step/end" }
func (UserMessage) EventType() string      { return "user/message" }
func (AssistantChunk) EventType() string   { return "assistant/chunk" }
func (AssistantMessage) EventType() string { return "assistant/message" }
func (ToolStart) EventType() string        { return "tool/start" }
func (ToolInput) EventType() string        { return "tool/input" }
func (ToolCall) EventType() string         { return "tool/call" }
func (ToolPreview) EventType() string      { return "tool/preview" }
func (ToolExec) EventType() string         { return "tool/exec" }
func (ToolProgress) EventType() string     { return "tool/progress" }
func (ToolResult) EventType() string       { return "tool/result" }
func (Plan) EventType() string             { return "todo/write" }
func (Title) EventType() string            { return "session/title" }
func (ModeChange) EventType() string       { return "mode/change" }
func (ContextMessage) EventType() string   { return "context/message" }
func (PermissionRule) EventType() string   { return "permission/rule" }
func (Directories) EventType() string      { return "session/directories" }
func (Notice) EventType() string           { return "session/notice" }
func (ConfigChange) EventType() string     { return "config/change" }
func (SystemPrompt) EventType() string     { return "session/system-prompt" }
func (ContextUsage) EventType() string     { return "usage/update" }
func (ToolDefinition) EventType() string   { return "tool/definition" }
func (Compaction) EventType() string       { return "context/compaction" }
func (CompactionStart) EventType() string  { return "context/compaction-start" }
func (CompactionChunk) EventType() string  { return "context/compaction-chunk" }

func (TurnStart) Transient() bool        { return false }
func (TurnEnd) Transient() bool          { return false }
func (StepStart) Transient() bool        { return false }
func (StepEnd) Transient() bool          { return false }
func (UserMessage) Transient() bool      { return false }
func (AssistantChunk) Transient() bool   { return true }
func (AssistantMessage) Transient() bool { return false }
func (ToolStart) Transient() bool        { return true }
func (ToolInput) Transient() bool        { return true }
func (ToolCall) Transient() bool         { return false }
func (ToolPreview) Transient() bool      { return true }
func (ToolExec) Transient() bool         { return true }
func (ToolProgress) Transient() bool     { return true }
func (ToolResult) Transient() bool       { return false }
func (Plan) Transient() bool             { return false }
func (Title) Transient() bool            { return false }
func (ModeChange) Transient() bool       { return false }
func (ContextMessage) Transient() bool   { return false }
func (PermissionRule) Transient() bool   { return false }
func (Directories) Transient() bool      { return false }
func (Notice) Transient() bool           { return true }
func (ConfigChange) Transient() bool     { return false }
func (SystemPrompt) Transient() bool     { return false }
func (ContextUsage) Transient() bool     { return false }
func (ToolDefinition) Transient() bool   { return false }
func (Compaction) Transient() bool       { return false }
func (CompactionStart) Transient() bool  { return true }
func (CompactionChunk) Transient() bool  { return true }

func (TurnStart) isData()        {}
func (TurnEnd) isData()          {}
func (StepStart) isData()        {}
func (StepEnd) isData()          {}
func (UserMessage) isData()      {}
func (AssistantChunk) isData()   {}
func (AssistantMessage) isData() {}
func (ToolStart) isData()        {}
func (ToolInput) isData()        {}
func (ToolCall) isData()         {}
func (ToolPreview) isData()      {}
func (ToolExec) isData()         {}
func (ToolProgress) isData()     {}
func (ToolResult) isData()       {}
func (Plan) isData()             {}
func (Title) isData()            {}
func (ModeChange) isData()       {}
func (ContextMessage) isData()   {}
func (PermissionRule) isData()   {}
func (Directories) isData()      {}
func (Notice) isData()           {}
func (ConfigChange) isData()     {}
func (SystemPrompt) isData()     {}
func (ContextUsage) isData()     {}
func (ToolDefinition) isData()   {}
func (Compaction) isData()       {}
func (CompactionStart) isData()  {}
func (CompactionChunk) isData()  {}

// decoders maps an event type to the function decoding its payload.
var decoders = map[string]func(json.RawMessage) (Data, error){
	"turn/start":               decode[TurnStart],
	"turn/end":                 decode[TurnEnd],
	"step/start":               decode[StepStart],
	"step/end":                 decode[StepEnd],
	"user/message":             decode[UserMessage],
	"assistant/chunk":          decode[AssistantChunk],
	"assistant/message":        decode[AssistantMessage],
	"tool/start":               decode[ToolStart],
	"tool/input":               decode[ToolInput],
	"tool/call":                decode[ToolCall],
	"tool/preview":             decode[ToolPreview],
	"tool/exec":                decode[ToolExec],
	"tool/progress":            decode[ToolProgress],
	"tool/result":              decode[ToolResult],
	"todo/write":               decode[Plan],
	"session/title":            decode[Title],
	"mode/change":              decode[ModeChange],
	"context/message":          decode[ContextMessage],
	"session/directories":      decode[Directories],
	"session/notice":           decode[Notice],
	"permission/rule":          decode[PermissionRule],
	"config/change":            decode[ConfigChange],
	"session/system-prompt":    decode[SystemPrompt],
	"usage/update":             decode[ContextUsage],
	"tool/definition":          decode[ToolDefinition],
	"context/compaction":       decode[Compaction],
	"context/compaction-start": decode[CompactionStart],
	"context/compaction-chunk": decode[CompactionChunk],
	"subagent/event":           decode[Subagent],
}

// decode reads the payload of an event of type D, as a D value.
func decode[D Data](raw json.RawMessage) (Data, error) {
	var d D
	err := json.Unmarshal(raw, &d)
	return d, err
}

type wireEvent struct {
	Type string          `json:"type"`
	Seq  int64           `json:"seq"`
	Time int64           `json:"time"`
	Data json.RawMessage `json:"data"`
}

// MarshalJSON writes `{"type","seq","time","data"}`.
func (e Event) MarshalJSON() ([]byte, error) {
	if e.Data == nil {
		return nil, fmt.Errorf("session: event %d has no data", e.Seq)
	}
	data, err := json.Marshal(e.Data)
	if err != nil {
		return nil, fmt.Errorf("session: encoding %s: %w", e.Data.EventType(), err)
	}
	return json.Marshal(wireEvent{Type: e.Data.EventType(), Seq: e.Seq, Time: e.Time, Data: data})
}

// UnmarshalJSON reads an event written by MarshalJSON; the payload is
// stored as a value of its concrete type (e.g. TurnStart, not a pointer).
// An unknown type is an error.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w wireEvent
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	dec, ok := decoders[w.Type]
	if !ok {
		return fmt.Errorf("session: unknown event type %q", w.Type)
	}
	d, err := dec(w.Data)
	if err != nil {
		return fmt.Errorf("session: decoding %s: %w", w.Type, err)
	}
	e.Seq, e.Time, e.Data = w.Seq, w.Time, d
	return nil
}
