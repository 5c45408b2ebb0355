package tools

import "encoding/json"

// FileLocation is a file a tool call touches. Path is absolute once the
// bridge has seen it; Line is 1-based, 0 meaning no line.
type FileLocation struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

// FileDiff is one file's change. OldText nil means there is no prior text:
// a new file, nothing else (a card that cannot see the old content shows
// no diff rather than one that would claim a new file); it marshals as an
// explicit null.
type FileDiff struct {
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
}

// ToolCallView is the card for a pending tool call, returned by a tool's
// PresentCall. The set is closed: GenericCall, TerminalCall and DiffCall
// (always as values, never pointers).
type ToolCallView interface{ isToolCallView() }

// GenericCall is a plain card. Title is required; Kind defaults to
// KindOther when empty; RawInput is the salient input only (a JSON string is
// shown as is, anything else as JSON); Content and Locations are optional.
type GenericCall struct {
	Title     string
	Kind      Kind
	RawInput  json.RawMessage
	Content   []Content
	Locations []FileLocation
}

// TerminalCall is a shell command card. Title is the command; Description is
// shown above the card; Cwd, when absolute, is used as is, when relative is
// resolved against the session cwd, and when empty the session cwd is used.
type TerminalCall struct {
	Title, Description, Cwd string
}

// DiffCall is a card showing the file changes a call is about to make.
type DiffCall struct {
	Title     string
	Diffs     []FileDiff
	Locations []FileLocation
}

func (GenericCall) isToolCallView()  {}
func (TerminalCall) isToolCallView() {}
func (DiffCall) isToolCallView()     {}

// ToolResultView is the card for a completed tool call, returned by a tool's
// PresentResult. The set is closed: GenericResult, TerminalResult and
// DiffResult (always as values, never pointers).
type ToolResultView interface{ isToolResultView() }

// GenericResult is a plain result card; every field is optional. A nil
// Locations leaves the call card's locations as they are; an empty,
// non-nil one clears them (e.g. a read of a path that does not exist).
// Content may hold image, audio and resource blocks besides text (see
// Content); a presenter that cannot show them shows their TextForm.
// RawOutput, when set, is the card's rawOutput (JSON: the tool's own
// result, e.g. an MCP CallToolResult); when nil, the result's text is.
type GenericResult struct {
	Title     string
	Content   []Content
	Locations []FileLocation
	RawOutput json.RawMessage
}

// TerminalResult is a finished shell command. Output is what the program
// printed, as the result holds it (UTF-8); Notes is the rest of the
// result's text, which the program did not print (e.g. "(no output)" or
// "[exit code: 3]"), one note per line: a card without a live terminal
// shows it after the output, a live terminal does not (terminal_exit tells
// the exit). ExitCode and Signal (e.g. "SIGTERM") are mutually exclusive,
// both absent when unknown. Truncated says the result cut the output of
// a stream; FullOutput lists the files that hold it whole (stdout's
// first; empty when they are unavailable).
type TerminalResult struct {
	Title, Output string
	Notes         string
	ExitCode      *int
	Signal        string
	Truncated     bool
	FullOutput    []string
}

// DiffResult is the applied change of a completed call. Note is an optional
// final text item (e.g. "3 hunks left out").
type DiffResult struct {
	Title     string
	Diffs     []FileDiff
	Locations []FileLocation
	Note      string
}

func (GenericResult) isToolResultView()  {}
func (TerminalResult) isToolResultView() {}
func (DiffResult) isToolResultView()     {}

// ResultInput is what PresentResult sees of a result: its content, whether
// it is an error and, for a coded error, its {name, code} (nil
// otherwise), and the tool's persisted Meta (opaque JSON, nil if none).
type ResultInput struct {
	Content []Content
	IsError bool
	Error   *ErrorInfo
	Meta    json.RawMessage
}
