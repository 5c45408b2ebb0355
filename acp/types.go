package acp

import (
	"encoding/json"
	"fmt"
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
	Meta    Meta   `json:"_meta,omitempty"`
}

// Annotations are optional hints on a content block (schema type
// Annotations): Audience holds roles ("assistant", "user"), LastModified
// an ISO 8601 time, Priority 0 (least) to 1 (most important).
type Annotations struct {
	Audience     []string `json:"audience,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	Meta         Meta     `json:"_meta,omitempty"`
}

// EmbeddedResource is the `resource` of a resource block (schema type
// EmbeddedResourceResource): text (TextResourceContents) or base64 blob
// (BlobResourceContents) contents.
type EmbeddedResource struct {
	URI      string `json:"uri"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// The content block types of ACP v1 (schema type ContentBlock).
const (
	BlockText         = "text"
	BlockImage        = "image"
	BlockAudio        = "audio"
	BlockResourceLink = "resource_link"
	BlockResource     = "resource"
)

// ContentBlock is a prompt or message content block (schema type
// ContentBlock), discriminated by Type (Block* constants): text
// (TextContent: Text), image (ImageContent: Data, MimeType, URI), audio
// (AudioContent: Data, MimeType), resource_link (ResourceLink: URI, Name,
// Title, Description, MimeType, Size) or resource (EmbeddedResource:
// Resource). Only the fields of its type are written.
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
	Annotations *Annotations      `json:"annotations,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

// TextBlock returns a text content block.
func TextBlock(s string) ContentBlock { return ContentBlock{Type: BlockText, Text: s} }

// MarshalJSON writes a text block as {type, text, annotations, _meta}
// with its (required) text even when empty, any other block as its
// non-empty fields in declaration order. A Meta that is not valid JSON
// is an error.
func (b ContentBlock) MarshalJSON() ([]byte, error) {
	if b.Type == BlockText {
		return json.Marshal(textBlock{b.Type, b.Text, b.Annotations, b.Meta})
	}
	type plain ContentBlock
	return json.Marshal(plain(b))
}

// textBlock is the wire shape of a text block (schema type TextContent).
type textBlock struct {
	Type        string       `json:"type"`
	Text        string       `json:"text"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ToolKind is the category of a tool call (schema type ToolKind): read,
// edit, delete, move, search, execute, think, fetch, switch_mode or other.
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

// The tool call content types of ACP v1 (schema type ToolCallContent),
// one per [ToolCallContent] variant.
const (
	ContentItem  = "content"
	DiffItem     = "diff"
	TerminalItem = "terminal"
)

// ToolCallContent is one item of a tool call's content (schema type
// ToolCallContent). The set is closed: Content, Diff and Terminal, always
// used as values. Each variant writes its own `type` member (its Type
// field, whose type has a single value: leave it zero).
type ToolCallContent interface {
	// ToolCallContentType is the item's type (ContentItem, DiffItem or
	// TerminalItem).
	ToolCallContentType() string
	isToolCallContent()
}

// Content is a content block shown on the card (schema type Content).
type Content struct {
	Type    contentTag   `json:"type"`
	Content ContentBlock `json:"content"`
	Meta    Meta         `json:"_meta,omitempty"`
}

// Diff is a file change (schema type Diff): Path is absolute; OldText nil
// is written as an explicit null, meaning there was no file.
type Diff struct {
	Type    diffTag `json:"type"`
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
	Meta    Meta    `json:"_meta,omitempty"`
}

// Terminal embeds a terminal the editor created (terminal/create) or,
// with Zed's convention, one the agent streams (schema type Terminal).
type Terminal struct {
	Type       terminalTag `json:"type"`
	TerminalID string      `json:"terminalId"`
	Meta       Meta        `json:"_meta,omitempty"`
}

// TextContent returns a Content item holding a text block.
func TextContent(s string) Content { return Content{Content: TextBlock(s)} }

// ToolCallContentType implements ToolCallContent.
func (Content) ToolCallContentType() string  { return ContentItem }
func (Diff) ToolCallContentType() string     { return DiffItem }
func (Terminal) ToolCallContentType() string { return TerminalItem }

func (Content) isToolCallContent()  {}
func (Diff) isToolCallContent()     {}
func (Terminal) isToolCallContent() {}

// The discriminators of the ToolCallContent variants: each encodes as its
// constant and decodes from anything (the container has read the type).
// They are text marshalers, not JSON ones: encoding/json quotes a text
// as it writes it, where a Marshaler's output is validated and compacted
// again on every item.
type (
	contentTag  struct{}
	diffTag     struct{}
	terminalTag struct{}
)

var (
	contentText  = []byte(ContentItem)
	diffText     = []byte(DiffItem)
	terminalText = []byte(TerminalItem)
)

func (contentTag) MarshalText() ([]byte, error)  { return contentText, nil }
func (diffTag) MarshalText() ([]byte, error)     { return diffText, nil }
func (terminalTag) MarshalText() ([]byte, error) { return terminalText, nil }
func (*contentTag) UnmarshalJSON([]byte) error   { return nil }
func (*diffTag) UnmarshalJSON([]byte) error      { return nil }
func (*terminalTag) UnmarshalJSON([]byte) error  { return nil }

// unmarshalToolCallContents reads a content list (nil for none or null)
// into its variants; an item of an unknown type is an error.
func unmarshalToolCallContents(data json.RawMessage) ([]ToolCallContent, error) {
	if len(data) == 0 || string(data) == "null" {
		return nil, nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	out := make([]ToolCallContent, 0, len(raw))
	for _, item := range raw {
		var probe struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(item, &probe); err != nil {
			return nil, err
		}
		var (
			c   ToolCallContent
			err error
		)
		switch probe.Type {
		case ContentItem:
			c, err = decodeAs[Content](item)
		case DiffItem:
			c, err = decodeAs[Diff](item)
		case TerminalItem:
			c, err = decodeAs[Terminal](item)
		default:
			return nil, fmt.Errorf("acp: unknown tool call content type %q", probe.Type)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func decodeAs[T any](data []byte) (T, error) {
	var v T
	err := json.Unmarshal(data, &v)
	return v, err
}

// ToolCallLocation is a file the tool call touches (schema type
// ToolCallLocation). Path is absolute; Line is the wire value (its base,
// 0 or 1, is chosen by the bridge), nil when unknown.
type ToolCallLocation struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

// ToolCallMeta is the `_meta` of a tool call or update as dsh-acp writes
// it: Zed's terminal convention (terminal_info, terminal_output,
// terminal_exit), and on a subagent
// tool's card Zed's subagent_session_info naming the child it started.
type ToolCallMeta struct {
	TerminalInfo        *TerminalInfo        `json:"terminal_info,omitempty"`
	TerminalOutput      *TerminalOutput      `json:"terminal_output,omitempty"`
	TerminalExit        *TerminalExit        `json:"terminal_exit,omitempty"`
	SubagentSessionInfo *SubagentSessionInfo `json:"subagent_session_info,omitempty"`
}

// SubagentSessionInfo names the child session a tool call started, in
// Zed's shape: SessionID, and MessageStartIndex, the index of the child's
// first entry this call's run shows (0: a child runs one turn).
type SubagentSessionInfo struct {
	SessionID         string `json:"session_id"`
	MessageStartIndex int    `json:"message_start_index"`
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
// Priority is high, medium or low (PlanEntryPriority); Status pending,
// in_progress or completed (PlanEntryStatus).
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// AvailableCommand is a slash command the agent offers (schema type
// AvailableCommand). Input, when set, says the command takes free text
// after its name.
type AvailableCommand struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description"`
	Input       *UnstructuredInputHint `json:"input,omitempty"`
	Meta        Meta                   `json:"_meta,omitempty"`
}

// UnstructuredInputHint is a command's free-text input (schema type
// UnstructuredCommandInput, the only AvailableCommandInput): Hint is shown
// while nothing is typed.
type UnstructuredInputHint struct {
	Hint string `json:"hint"`
	Meta Meta   `json:"_meta,omitempty"`
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

// JSONString returns s as a JSON string value, escaped as json.Marshal
// escapes it (HTML escaping included, invalid UTF-8 as U+FFFD).
func JSONString(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always encodes
	return b
}
