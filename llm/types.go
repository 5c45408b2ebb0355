package llm

import (
	"context"
	"encoding/json"
	"time"
)

// Message is one entry of the conversation sent to the model.
//
// Role is "system", "user", "assistant" or "tool". Reasoning, ToolCalls are
// used on assistant messages only, ToolCallID on tool messages only, Parts
// on user messages only. The caller may keep Reasoning on every assistant
// message; MarshalJSON decides what goes on the wire (see its doc).
type Message struct {
	Role       string     // "system", "user", "assistant", "tool"
	Content    string     // the text of the message (a tool's output for role "tool")
	Reasoning  string     // assistant only; sent as reasoning_content only when ToolCalls is non-empty
	ToolCalls  []ToolCall // assistant only, in the order the model produced them
	ToolCallID string     // tool only: the id of the call this message answers
	// Parts, when non-empty, is a user message's content instead of
	// Content: text and images in order, sent as the chat-completions
	// content array (for models that take images).
	Parts []Part
}

// Part is one part of a user message's content array: a text part (Text)
// or, when ImageURL is set, an image given by its URL, usually a data URL
// "data:<mime type>;base64,<data>" (Text is then unused).
type Part struct {
	Text     string
	ImageURL string
}

// ImagePart returns the part for an image of type mimeType (e.g.
// "image/png") whose bytes are the standard base64 text data.
func ImagePart(mimeType, data string) Part {
	return Part{ImageURL: "data:" + mimeType + ";base64," + data}
}

// ToolCall is one function call requested by the model.
type ToolCall struct {
	ID        string // the call id, opaque, kept verbatim (e.g. "call_00_...")
	Name      string // the tool name
	Arguments string // raw JSON text exactly as the model produced it (may be invalid JSON)
}

// ToolSchema describes one tool offered to the model. It goes on the wire as
// {"type":"function","function":{"name","description","parameters","strict"?}}.
type ToolSchema struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON Schema object; nil sends an empty object schema
	Strict      *bool           // sent only when non-nil
}

// Request is one chat-completions call. Tools is left out of the body when
// empty; the body always asks for a stream with usage (stream_options).
// OnRetry, when set, is called (on the Stream caller's goroutine) each
// time a failed attempt is about to be retried, before the wait; it is
// not part of the body.
//
// MaxTokens, when > 0, caps the tokens the answer may generate
// (`max_tokens`; reasoning included on thinking models); 0 leaves it to
// the endpoint.
// Thinking, when set, adds DeepSeek's thinking fields (see [Thinking]).
type Request struct {
	Model     string
	Messages  []Message
	Tools     []ToolSchema
	MaxTokens int
	OnRetry   func(Retry)
	Thinking  Thinking
}

// Retry describes a failed attempt that is about to be retried: its
// number (1-based) of MaxAttempts in all, the failure's Code and HTTP
// Status (0 when no response came), its Message (with the API key
// redacted), and the Wait before the next attempt.
type Retry struct {
	Attempt, MaxAttempts int
	Code                 string
	Status               int
	Message              string
	Wait                 time.Duration
}

// The values of Thinking.Type, DeepSeek's `thinking.type`.
const (
	ThinkingEnabled  = "enabled"
	ThinkingDisabled = "disabled"
)

// The values of Thinking.Effort, DeepSeek's `reasoning_effort` (its
// "Thinking Mode" guide documents low, high and max, high the default;
// it maps other names onto these).
const (
	EffortLow  = "low"
	EffortHigh = "high"
	EffortMax  = "max"
)

// Thinking is DeepSeek's thinking-mode control for one request
// (DeepSeek's "Thinking Mode" guide): Type
// goes out as the top-level `"thinking": {"type": Type}` and Effort as the
// top-level `"reasoning_effort"`, each only when non-empty. The zero value
// sends neither, so the provider's default applies.
type Thinking struct {
	Type   string // "", ThinkingEnabled or ThinkingDisabled
	Effort string // "", EffortLow, EffortHigh or EffortMax
}

// DeltaKind tells what a Delta carries.
type DeltaKind int

const (
	// DeltaReasoning is a piece of the model's reasoning (Text set).
	DeltaReasoning DeltaKind = iota + 1
	// DeltaText is a piece of the answer text (Text set).
	DeltaText
	// DeltaToolCall is the first sight of a tool call with wire index Index;
	// ID and Name are set (empty strings if the model omitted them).
	DeltaToolCall
	// DeltaToolArgs is a piece of the arguments of the call at Index (Text set);
	// pieces break anywhere, the arguments are valid JSON only when joined.
	DeltaToolArgs
)

// String names the kind ("reasoning", "text", "tool_call", "tool_args").
func (k DeltaKind) String() string {
	switch k {
	case DeltaReasoning:
		return "reasoning"
	case DeltaText:
		return "text"
	case DeltaToolCall:
		return "tool_call"
	case DeltaToolArgs:
		return "tool_args"
	}
	return "unknown"
}

// Delta is one incremental piece of a streamed answer, delivered while the
// stream is read. Empty pieces are never delivered.
type Delta struct {
	Kind  DeltaKind
	Text  string // the piece for DeltaReasoning, DeltaText and DeltaToolArgs
	Index int    // wire index of the tool call (DeltaToolCall, DeltaToolArgs); 0 otherwise
	ID    string // DeltaToolCall only: the call id
	Name  string // DeltaToolCall only: the tool name
}

// Usage is the token accounting the endpoint reports at the end of a stream.
// Counts are tokens. PromptTokens includes the cached ones (CacheHitTokens);
// CompletionTokens includes ReasoningTokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	CacheHitTokens   int `json:"prompt_cache_hit_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens"`
}

// Response is one assembled answer.
type Response struct {
	Reasoning    string     // all reasoning pieces joined
	Text         string     // all answer pieces joined
	ToolCalls    []ToolCall // in wire index order
	FinishReason string     // raw wire value ("stop", "tool_calls", "length", ...); "stop" if none arrived
	Usage        *Usage     // the last usage seen; nil if the stream carried none
}

// Client sends one request and streams the answer.
//
// Stream calls onDelta (which may be nil) from the calling goroutine for
// every piece as it arrives, then returns the assembled Response. Errors are
// *Error values; on cancellation the error also unwraps to ctx's error. When
// the stream breaks off after it started, the returned Response (non-nil)
// holds what was assembled so far, together with the error.
type Client interface {
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error)
}

// The clients of this package.
var (
	_ Client = HTTP{}
	_ Client = (*HTTP)(nil)
	_ Client = (*Replay)(nil)
)
