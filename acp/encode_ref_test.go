package acp

import (
	"encoding/json"
	"fmt"
)

// The reflective MarshalJSON methods the hand-written encoder replaced,
// kept verbatim (on mirror types) as the reference its output must match
// byte for byte.

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
	Annotations json.RawMessage   `json:"annotations,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

func (b refContentBlock) MarshalJSON() ([]byte, error) {
	type plain refContentBlock
	if b.Type == "text" {
		return json.Marshal(struct {
			Type        string          `json:"type"`
			Text        string          `json:"text"`
			Annotations json.RawMessage `json:"annotations,omitempty"`
			Meta        Meta            `json:"_meta,omitempty"`
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
		out[i] = refToolCallContent{c.Type, refBlock(c.Content), c.Path, c.OldText, c.NewText, c.TerminalID}
	}
	return out
}

func refUpdate(u SessionUpdate) refSessionUpdate {
	return refSessionUpdate{u.SessionUpdate, refBlock(u.Content), u.ToolCallID, u.Title, u.Kind, u.Status,
		refItems(u.ToolContent), u.Locations, u.RawInput, u.RawOutput, u.ToolCallExtra, u.Entries,
		u.AvailableCommands, u.CurrentModeID, u.InfoTitle, u.UpdatedAt}
}
