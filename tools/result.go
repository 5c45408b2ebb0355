package tools

import (
	"encoding/json"
	"strconv"
	"strings"
)

// The content block types (Content.Type), named as MCP and ACP
// ContentBlock name them.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResource     = "resource"
	ContentResourceLink = "resource_link"
)

// Content is one content block of a tool result or a card. Type is
// "text" (or "", read as text) with the text (UTF-8) in Text; the other
// types exist for cards (GenericResult.Content: an MCP tool's images and
// resources) and mirror the ACP ContentBlock variants of the same name:
//
//   - "image", "audio": Data is the base64 payload, MimeType its type.
//   - "resource": an embedded resource (ACP EmbeddedResource) at URI, of
//     MimeType when known, with its text in Text or its base64 bytes in
//     Data.
//   - "resource_link": a link (ACP ResourceLink): URI, Name and, when
//     known, MimeType, Title and Description.
//
// What the model sees of a result is its text blocks (JoinText); a tool
// with other blocks gives the model their TextForm in its text. The
// session log and the wire shape of text blocks are unchanged
// ({"type":"text","text":...}); the other fields are omitted when empty.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	// Title and Description are a resource link's human-readable title
	// and summary (ACP ResourceLink title, description), when known.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// Text returns a text content block holding s.
func Text(s string) Content { return Content{Type: ContentText, Text: s} }

// Image returns an image block: data is the base64 payload of an image
// of type mimeType (e.g. "image/png").
func Image(data, mimeType string) Content {
	return Content{Type: ContentImage, Data: data, MimeType: mimeType}
}

// TextForm is what a reader without images or resources sees of c: the
// text of a text block; for the others a bracketed line naming the
// block, e.g. "[image: image/png, 1204 bytes]", "[resource link: notes
// <file:///n.txt>]", and for an embedded text resource that line and its
// text. Sizes are decoded bytes.
func (c Content) TextForm() string {
	switch c.Type {
	case "", ContentText:
		return c.Text
	case ContentImage, ContentAudio:
		return "[" + c.Type + ": " + orUnknown(c.MimeType) + ", " + strconv.Itoa(base64Len(c.Data)) + " bytes]"
	case ContentResource:
		head := "[resource " + c.URI
		if c.MimeType != "" {
			head += " (" + c.MimeType + ")"
		}
		if c.Data != "" && c.Text == "" {
			return head + ": " + strconv.Itoa(base64Len(c.Data)) + " bytes]"
		}
		return head + "]\n" + c.Text
	case ContentResourceLink:
		name := c.Name
		if name == "" {
			name = c.URI
		}
		return "[resource link: " + name + " <" + c.URI + ">]"
	}
	return "[" + c.Type + " content]"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// base64Len is the decoded length of the standard base64 text s.
func base64Len(s string) int {
	n := len(s) / 4 * 3
	switch {
	case len(s)%4 != 0:
		// Unpadded (or broken): count the whole text's bits.
		return len(s) * 6 / 8
	case strings.HasSuffix(s, "=="):
		n -= 2
	case strings.HasSuffix(s, "="):
		n--
	}
	return n
}

// ErrorInfo is the structured part of an error result: the error's name (for
// example "ToolArgsError") and its stable code (for example "INVALID_ARGS").
// The model never sees it; it only sees the "Error: …" text.
type ErrorInfo struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

// Result is what Registry.Execute returns for one call, and what the session
// log records. CallID always equals the Exec's CallID. Content is never nil
// after Execute (an empty list marshals as []). An error result has IsError
// true, one text block "Error: <message>", Error set only when the failure
// carried a code (see CodedError), and never Meta. Meta is the tool's opaque
// JSON payload for its presenters, present only when the tool attached one.
// EndTurn is the tool's Output.EndTurn (never set on an error result); it
// is not part of the result's JSON: the agent acts on it (and logs the
// message it shows).
type Result struct {
	CallID  string          `json:"callId"`
	Content []Content       `json:"content"`
	IsError bool            `json:"isError"`
	Error   *ErrorInfo      `json:"error,omitempty"`
	Meta    json.RawMessage `json:"meta,omitempty"`
	EndTurn string          `json:"-"`
	// Charge is what the call cost (Output.Charge; never on an error
	// result), nil for a free call.
	Charge *Charge `json:"charge,omitempty"`
	// View is Output.View (never on an error result); in memory only.
	View ToolResultView `json:"-"`
}

// Charge is the price of one billed tool call (a paid API request), which
// the agent adds to the session's cost: Kind names what was billed (e.g.
// "search", "fetch"; the usage report counts calls per kind) and Price is
// the call's price per ISO 4217 currency code ({"USD": 0.00075}), so the
// agent can add it in the session's currency.
type Charge struct {
	Kind  string             `json:"kind"`
	Price map[string]float64 `json:"price"`
}

// Output is what a tool's Execute returns on success: the content for the
// model, and optional Meta, which must be valid JSON or nil (a tool returning
// invalid Meta gets an error result instead).
//
// EndTurn, when not empty, ends the prompt turn once this call's result is
// recorded: the agent shows EndTurn to the user as its own message (Markdown;
// logged like a model's answer, so session/load replays it and the model
// sees it in its history), runs none of the calls after this one in the
// same response, and makes no further model request; the turn ends with
// stop reason end_turn. It is honoured for calls that run alone (a tool
// that is not ConcurrencySafe). The ask_user tool uses it when the editor
// cannot ask its question: the user's next prompt is the answer.
type Output struct {
	Content []Content
	Meta    json.RawMessage
	EndTurn string
	// Charge, when set, is what the call cost (a billed API request);
	// the registry copies it to the Result.
	Charge *Charge
	// View, when set, is the call's result card as the tool built it
	// from what it did (an edit's hunks), so the live card needs no
	// round trip through Meta; it must be what the tool's PresentResult
	// gives for this result, which replay uses. The registry copies it
	// to the Result.
	View ToolResultView
}

// ErrorResult builds the error result for err: IsError, one text block
// "Error: <message>" and, when err (or an error it wraps) is a CodedError,
// Error set to its {name, code}. A nil err or an empty message gives the text
// "Error: (no message)". Middlewares use it to veto a call with an error.
func ErrorResult(callID string, err error) Result {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg == "" {
		msg = "(no message)"
	}
	res := Result{CallID: callID, Content: []Content{Text("Error: " + msg)}, IsError: true}
	if info := errorInfo(err); info != nil {
		res.Error = info
	}
	return res
}

// JoinText concatenates the text of the text blocks in cs (what the model
// sees of a result).
func JoinText(cs []Content) string {
	if len(cs) == 1 && (cs[0].Type == "" || cs[0].Type == "text") {
		return cs[0].Text
	}
	var b strings.Builder
	for _, c := range cs {
		if c.Type == "" || c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// ConsoleFence wraps s, without its trailing newlines, in a ```console
// Markdown block (CodeFence): terminal cards without a live terminal and
// console-styled results use it.
func ConsoleFence(s string) string { return CodeFence("console", s) }
