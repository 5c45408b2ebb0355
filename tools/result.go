package tools

import "strings"

import "encoding/json"

// Content is one content block of a tool result. Only Type "text" exists for
// now; Text holds the text (UTF-8).
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Text returns a text content block holding s.
func Text(s string) Content { return Content{Type: "text", Text: s} }

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
type Result struct {
	CallID  string          `json:"callId"`
	Content []Content       `json:"content"`
	IsError bool            `json:"isError"`
	Error   *ErrorInfo      `json:"error,omitempty"`
	Meta    json.RawMessage `json:"meta,omitempty"`
}

// Output is what a tool's Execute returns on success: the content for the
// model, and optional Meta, which must be valid JSON or nil (a tool returning
// invalid Meta gets an error result instead).
type Output struct {
	Content []Content
	Meta    json.RawMessage
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
// Markdown block whose fence is longer than any run of backticks in s, so
// the text can never close the block early. Terminal cards without a live
// terminal and console-styled results use it.
func ConsoleFence(s string) string {
	s = strings.TrimRight(s, "\n")
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + "console\n" + s + "\n" + f
}
