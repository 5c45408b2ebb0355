package acp

import (
	"encoding/json"
	"fmt"
)

// The reflective MarshalJSON methods of the old one-struct SessionUpdate
// (the reference its hand-written encoder matched byte for byte, and so
// the bytes of the golden transcripts), kept on mirror types as the
// reference the variants must match.

type refContentBlock struct {
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
	Annotations *Annotations      `json:"annotations,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

func (b refContentBlock) MarshalJSON() ([]byte, error) {
	type plain refContentBlock
	if b.Type == "text" {
		return json.Marshal(struct {
			Type        string       `json:"type"`
			Text        string       `json:"text"`
			Annotations *Annotations `json:"annotations,omitempty"`
			Meta        Meta         `json:"_meta,omitempty"`
		}{b.Type, b.Text, b.Annotations, b.Meta})
	}
	return json.Marshal(plain(b))
}

type refToolCallContent struct {
	Type       string
	Content    *refContentBlock
	Path       string
	OldText    *string
	NewText    string
	TerminalID string
}

func (c refToolCallContent) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case "content":
		if c.Content == nil {
			return nil, fmt.Errorf("acp: content item without a content block")
		}
		return json.Marshal(struct {
			Type    string           `json:"type"`
			Content *refContentBlock `json:"content"`
		}{c.Type, c.Content})
	case "diff":
		return json.Marshal(struct {
			Type    string  `json:"type"`
			Path    string  `json:"path"`
			OldText *string `json:"oldText"`
			NewText string  `json:"newText"`
		}{c.Type, c.Path, c.OldText, c.NewText})
	case "terminal":
		return json.Marshal(struct {
			Type       string `json:"type"`
			TerminalID string `json:"terminalId"`
		}{c.Type, c.TerminalID})
	}
	return nil, fmt.Errorf("acp: unknown tool call content type %q", c.Type)
}

type refSessionUpdate struct {
	SessionUpdate     string               `json:"sessionUpdate,omitempty"`
	Content           *refContentBlock     `json:"content,omitempty"`
	ToolCallID        string               `json:"toolCallId,omitempty"`
	Title             *string              `json:"title,omitempty"`
	Kind              ToolKind             `json:"kind,omitempty"`
	Status            ToolCallStatus       `json:"status,omitempty"`
	ToolContent       []refToolCallContent `json:"-"`
	Locations         []ToolCallLocation   `json:"locations,omitzero"`
	RawInput          json.RawMessage      `json:"rawInput,omitempty"`
	RawOutput         json.RawMessage      `json:"rawOutput,omitempty"`
	ToolCallExtra     *ToolCallMeta        `json:"_meta,omitempty"`
	Entries           []PlanEntry          `json:"entries,omitzero"`
	AvailableCommands []AvailableCommand   `json:"availableCommands,omitzero"`
	CurrentModeID     string               `json:"currentModeId,omitempty"`
	InfoTitle         *string              `json:"-"`
	UpdatedAt         string               `json:"updatedAt,omitempty"`
}

func (u refSessionUpdate) MarshalJSON() ([]byte, error) {
	type plain refSessionUpdate
	switch {
	case u.ToolContent != nil:
		return json.Marshal(struct {
			plain
			ToolContent []refToolCallContent `json:"content"`
		}{plain(u), u.ToolContent})
	case u.InfoTitle != nil:
		return json.Marshal(struct {
			plain
			InfoTitle *string `json:"title"`
		}{plain(u), u.InfoTitle})
	}
	return json.Marshal(plain(u))
}

type refSessionNotification struct {
	SessionID string           `json:"sessionId"`
	Update    refSessionUpdate `json:"update"`
}

func refBlock(b *ContentBlock) *refContentBlock {
	if b == nil {
		return nil
	}
	r := refContentBlock(*b)
	return &r
}

func refItems(items []ToolCallContent) []refToolCallContent {
	if items == nil {
		return nil
	}
	out := make([]refToolCallContent, len(items))
	for i, c := range items {
		switch x := c.(type) {
		case Content:
			out[i] = refToolCallContent{Type: ContentItem, Content: refBlock(&x.Content)}
		case Diff:
			out[i] = refToolCallContent{Type: DiffItem, Path: x.Path, OldText: x.OldText, NewText: x.NewText}
		case Terminal:
			out[i] = refToolCallContent{Type: TerminalItem, TerminalID: x.TerminalID}
		}
	}
	return out
}

// legacyOf is u as the old one-struct SessionUpdate held it (u must use
// only the fields that struct had).
func legacyOf(u Update) refSessionUpdate {
	r := refSessionUpdate{SessionUpdate: u.SessionUpdateKind()}
	chunk := func(c ContentChunk) {
		r.Content = refBlock(&c.Content)
	}
	switch x := u.(type) {
	case UserMessageChunk:
		chunk(ContentChunk(x))
	case AgentMessageChunk:
		chunk(ContentChunk(x))
	case AgentThoughtChunk:
		chunk(ContentChunk(x))
	case ToolCall:
		title := x.Title
		r.ToolCallID, r.Title, r.Kind, r.Status = x.ToolCallID, &title, x.Kind, x.Status
		r.Locations, r.RawInput, r.RawOutput, r.ToolCallExtra, r.ToolContent = x.Locations, x.RawInput, x.RawOutput, x.Meta, refItems(x.Content)
	case ToolCallUpdate:
		r.ToolCallID, r.Title, r.Kind, r.Status = x.ToolCallID, x.Title, x.Kind, x.Status
		r.Locations, r.RawInput, r.RawOutput, r.ToolCallExtra, r.ToolContent = x.Locations, x.RawInput, x.RawOutput, x.Meta, refItems(x.Content)
	case Plan:
		r.Entries = x.Entries
	case AvailableCommandsUpdate:
		r.AvailableCommands = x.AvailableCommands
	case CurrentModeUpdate:
		r.CurrentModeID = x.CurrentModeID
	case SessionInfoUpdate:
		r.InfoTitle, r.UpdatedAt = x.Title, x.UpdatedAt
	default:
		// The kinds added after the one-struct SessionUpdate (config
		// options, usage, notices, compaction) have no legacy form to
		// compare with; the generator gives them only without legacy.
		panic("no legacy form for " + u.SessionUpdateKind())
	}
	return r
}
