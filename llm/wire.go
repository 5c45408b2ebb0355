package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// noOutput replaces an empty tool result: the endpoint rejects empty content.
const noOutput = "(no output)"

type wireFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function wireFunctionCall `json:"function"`
}

// wireAssistant keeps the field order of the recorded requests.
type wireAssistant struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	Reasoning string         `json:"reasoning_content,omitempty"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type wireTool struct {
	Role       string `json:"role"`
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
}

type wirePlain struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// wireParts is a user message with a content array.
type wireParts struct {
	Role    string     `json:"role"`
	Content []wirePart `json:"content"`
}

// wirePart is one element of a content array: {"type":"text","text"} or
// {"type":"image_url","image_url":{"url"}}.
type wirePart struct {
	Type     string        `json:"type"`
	Text     *string       `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL string `json:"url"`
}

// marshalNoEscape encodes v like json.Marshal but leaves <, > and & as they
// are, so text and tool arguments go out as close to byte for byte as JSON allows.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// MarshalJSON writes the message in chat-completions wire form:
//
//   - system, user (and any other role): {"role","content"}.
//   - assistant: {"role","content","reasoning_content"?,"tool_calls"?}; content
//     is the text, "" when there is no text but there are tool calls, null with
//     neither; reasoning_content is sent only when the message has tool calls
//     and non-empty Reasoning; tool_calls are
//     [{"id","type":"function","function":{"name","arguments"}}] with
//     arguments passed through as the model produced them.
//   - tool: {"role","tool_call_id","content"}, content "(no output)" when empty.
//   - user with Parts: {"role","content":[...]}, each part
//     {"type":"text","text"} or {"type":"image_url","image_url":{"url"}}
//     (the OpenAI-compatible content array), in order.
func (m Message) MarshalJSON() ([]byte, error) {
	switch m.Role {
	case "user":
		if len(m.Parts) > 0 {
			w := wireParts{Role: m.Role, Content: make([]wirePart, len(m.Parts))}
			for i, p := range m.Parts {
				if p.ImageURL != "" {
					w.Content[i] = wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: p.ImageURL}}
				} else {
					w.Content[i] = wirePart{Type: "text", Text: &p.Text}
				}
			}
			return marshalNoEscape(w)
		}
	case "assistant":
		w := wireAssistant{Role: m.Role}
		if m.Content != "" || len(m.ToolCalls) > 0 {
			c := m.Content
			w.Content = &c
		}
		if len(m.ToolCalls) > 0 {
			w.Reasoning = m.Reasoning
			w.ToolCalls = make([]wireToolCall, len(m.ToolCalls))
			for i, tc := range m.ToolCalls {
				w.ToolCalls[i] = wireToolCall{ID: tc.ID, Type: "function",
					Function: wireFunctionCall{Name: tc.Name, Arguments: tc.Arguments}}
			}
		}
		return marshalNoEscape(w)
	case "tool":
		c := m.Content
		if c == "" {
			c = noOutput
		}
		return marshalNoEscape(wireTool{Role: m.Role, ToolCallID: m.ToolCallID, Content: c})
	}
	return marshalNoEscape(wirePlain{Role: m.Role, Content: m.Content})
}

// UnmarshalJSON reads a message in the wire form MarshalJSON writes (a null
// content becomes "", a content array becomes Parts). Reasoning that was
// not sent cannot come back, and a tool message's "(no output)" stays as
// that text. A content part of another type is an error.
func (m *Message) UnmarshalJSON(data []byte) error {
	var w struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Reasoning  *string         `json:"reasoning_content"`
		ToolCalls  []wireToolCall  `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("llm: decode message: %w", err)
	}
	*m = Message{Role: w.Role, ToolCallID: w.ToolCallID}
	if c := bytes.TrimSpace(w.Content); len(c) > 0 && c[0] == '[' {
		var parts []wirePart
		if err := json.Unmarshal(c, &parts); err != nil {
			return fmt.Errorf("llm: decode message content: %w", err)
		}
		for i, p := range parts {
			switch {
			case p.Type == "text" && p.Text != nil:
				m.Parts = append(m.Parts, Part{Text: *p.Text})
			case p.Type == "image_url" && p.ImageURL != nil:
				m.Parts = append(m.Parts, Part{ImageURL: p.ImageURL.URL})
			default:
				return fmt.Errorf("llm: decode message: content part %d: unsupported type %q", i, p.Type)
			}
		}
	} else if len(c) > 0 {
		var text *string
		if err := json.Unmarshal(c, &text); err != nil {
			return fmt.Errorf("llm: decode message content: %w", err)
		}
		if text != nil {
			m.Content = *text
		}
	}
	if w.Reasoning != nil {
		m.Reasoning = *w.Reasoning
	}
	for _, tc := range w.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return nil
}

type wireFunctionSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict,omitempty"`
}

type wireToolSchema struct {
	Type     string             `json:"type"`
	Function wireFunctionSchema `json:"function"`
}

type wireStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireThinking struct {
	Type string `json:"type"`
}

type wireRequest struct {
	Model           string            `json:"model"`
	Messages        []Message         `json:"messages"`
	Stream          bool              `json:"stream"`
	StreamOptions   wireStreamOptions `json:"stream_options"`
	Tools           []wireToolSchema  `json:"tools,omitempty"`
	MaxTokens       int               `json:"max_tokens,omitempty"`
	Thinking        *wireThinking     `json:"thinking,omitempty"`
	ReasoningEffort string            `json:"reasoning_effort,omitempty"`
}

// emptySchema is sent for a tool whose Parameters is nil.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// MarshalRequest returns the JSON body of a streaming chat-completions call:
// {"model","messages","stream":true,"stream_options":{"include_usage":true},"tools"?,
// "max_tokens"?,"thinking"?,"reasoning_effort"?}. Messages are written by
// Message.MarshalJSON; tools are left out when empty, max_tokens when
// req.MaxTokens is 0, thinking and reasoning_effort when req.Thinking
// leaves them empty.
// It fails only if a tool's Parameters is not valid JSON.
//
// The body is built once, in one buffer sized beforehand to hold it
// (messageBound): each message is encoded and appended, never the whole
// body re-encoded or copied, so a long history costs about its size once
// more while the request is sent (json.Marshal of the whole would hold
// several growing copies).
func MarshalRequest(req Request) ([]byte, error) {
	head, tail, err := requestEnvelope(req)
	if err != nil {
		return nil, err
	}
	n := len(head) + len(tail)
	for _, m := range req.Messages {
		n += messageBound(m) + 1
	}
	buf := bytes.NewBuffer(make([]byte, 0, n))
	if err := writeRequest(buf, head, tail, req.Messages); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// requestEnvelope is the request's body without its messages: head ends
// with `"messages":[` and tail starts with the `]` after them. It fails
// only if a tool's Parameters is not valid JSON.
func requestEnvelope(req Request) (head, tail []byte, err error) {
	w := wireRequest{
		Model:           req.Model,
		Messages:        []Message{},
		Stream:          true,
		StreamOptions:   wireStreamOptions{IncludeUsage: true},
		MaxTokens:       max(req.MaxTokens, 0),
		ReasoningEffort: req.Thinking.Effort,
	}
	if req.Thinking.Type != "" {
		w.Thinking = &wireThinking{Type: req.Thinking.Type}
	}
	for _, t := range req.Tools {
		p := t.Parameters
		if len(bytes.TrimSpace(p)) == 0 {
			p = emptySchema
		}
		w.Tools = append(w.Tools, wireToolSchema{Type: "function",
			Function: wireFunctionSchema{Name: t.Name, Description: t.Description, Parameters: p, Strict: t.Strict}})
	}
	// The envelope with no messages; they go between its brackets. The
	// model name before them is a JSON string: it cannot hold the key.
	env, err := marshalNoEscape(w)
	if err != nil {
		return nil, nil, fmt.Errorf("llm: encode request: %w", err)
	}
	head, tail, ok := bytes.Cut(env, []byte(`"messages":[]`))
	if !ok {
		return nil, nil, fmt.Errorf("llm: encode request: no messages field in %.80q", env)
	}
	return append(head[:len(head):len(head)], `"messages":[`...), append([]byte{']'}, tail...), nil
}

var comma = []byte{','}

// writeRequest writes head, the messages (Message.MarshalJSON, comma
// separated) and tail to w, one message encoded at a time; the error is
// the first of an encoding or of w.
func writeRequest(w io.Writer, head, tail []byte, msgs []Message) error {
	if _, err := w.Write(head); err != nil {
		return err
	}
	for i, m := range msgs {
		b, err := m.MarshalJSON()
		if err != nil {
			return fmt.Errorf("llm: encode request: %w", err)
		}
		if i > 0 {
			if _, err := w.Write(comma); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	_, err := w.Write(tail)
	return err
}

// messageBound estimates the length of m.MarshalJSON(): every string's
// estimate (stringBound) and room for the keys and punctuation. It is
// not a bound for text heavy in escapes; the body's buffer then grows
// once or twice by append.
func messageBound(m Message) int {
	n := 160 + stringBound(m.Role) + stringBound(m.Content) + stringBound(m.Reasoning) + stringBound(m.ToolCallID) + len(noOutput)
	for _, tc := range m.ToolCalls {
		n += 96 + stringBound(tc.ID) + stringBound(tc.Name) + stringBound(tc.Arguments)
	}
	for _, p := range m.Parts {
		n += 64 + stringBound(p.Text) + stringBound(p.ImageURL)
	}
	return n
}

// stringBound estimates the length of s encoded as a JSON string: its
// bytes, the quotes, and an eighth more for escapes (source text has a
// newline, a tab or a quote every few dozen bytes: 2 bytes each). An
// exact count read every byte of the history at every request, which
// cost more than encoding it.
func stringBound(s string) int { return len(s) + len(s)/8 + 2 }
