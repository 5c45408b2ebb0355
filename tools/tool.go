package tools

import (
	"context"
	"encoding/json"
	"fmt"
)

// Exec is one tool call as the tool sees it.
type Exec struct {
	// CallID is the call's id; the Result carries it back.
	CallID string
	// Name is the tool's name.
	Name string
	// Args is the raw arguments text as the model sent it; "" means {}.
	Args json.RawMessage
	// Call is the call resolved once (Registry.Resolve): its tool and
	// decoded arguments, for every step of the chain. Registry.Execute
	// resolves it when it is nil or does not match Name and Args.
	Call *Call
	// Session is the per-session state; it may be nil (in tests).
	Session Session
	// Progress receives partial output; it may be nil and must never block
	// for long. Tools call Exec.Report rather than Progress directly.
	Progress func(Progress)
	// OnStart, when set, is called once by the registry when the call
	// passes every middleware (permission included) and is about to run.
	OnStart func()
	// OnPreview, when set, receives what the call would change (the
	// tool's Preview, e.g. the hunks of a write) as soon as the permission
	// step has it, before the call runs or the user is asked: the card
	// shows the real change from the start. It may be nil.
	OnPreview func(ToolCallView)
}

// Access is what one tool call touches: the files or directories it
// reads, writes or runs in (as given, relative ones against the session
// cwd), for a shell tool the command text, the directory it starts in
// (Dir, as given; "" is the session cwd), against which the command's
// relative paths are judged, and whether the call asks to run outside
// the command sandbox.
type Access struct {
	Paths   []string
	Command string
	Dir     string
	// Unsandboxed: the call runs its command outside the kernel sandbox
	// (bash's dangerously_disable_sandbox); the permission check asks for
	// it in every mode, whatever was remembered.
	Unsandboxed bool
	// Host is the network host a ClassNetwork call sends its request to
	// (a URL's host name, lower case, without the port): the permission
	// check asks and remembers per host. "" for calls that reach none.
	Host string
}

// Class is what a tool's calls can change, as the permission policy
// judges them (package permission reads it; it knows no tool by name).
// The zero value, ClassUndeclared, is the safe default for a tool that
// says nothing.
type Class int

// The tool classes.
const (
	// ClassUndeclared (the zero value) is a tool that did not say what
	// it changes: an MCP tool, a plugin. It is judged at least as strictly
	// as an edit: refused in plan mode, asked in default mode and, unlike
	// an edit, also in acceptEdits (which vouches for file edits only);
	// run unasked in bypassPermissions.
	ClassUndeclared Class = iota
	// ClassReadOnly calls read files or state and change nothing (read,
	// bash_output, a grep). They run unasked in every mode, plan
	// included, unless they touch paths outside the session cwd.
	ClassReadOnly
	// ClassAgentState calls change only what the agent itself owns and
	// nothing in the workspace or elsewhere: its plan (todo_write), the
	// background tasks it started (bash_kill). The policy treats them like
	// ClassReadOnly: unasked in every mode, plan included.
	ClassAgentState
	// ClassEdit calls change files (write, edit): asked in default mode,
	// unasked in acceptEdits and bypassPermissions, refused in plan.
	ClassEdit
	// ClassExecute calls run commands (bash), which may do anything; the
	// policy judges the Access.Command text (remembered prefixes,
	// redirections outside the cwd). Refused in plan mode.
	ClassExecute
	// ClassNetwork calls send a request to a host on the network
	// (Access.Host), which can carry data out of the project: asked per
	// host in default mode ("always" covers that host), unasked in
	// acceptEdits and plan only for a host already allowed (refused in
	// plan otherwise), unasked in bypassPermissions.
	ClassNetwork
	// ClassReadOnlyClaimed calls are read-only by the word of a party the
	// user does not vouch for (an MCP server's readOnlyHint, the server
	// not marked trusted): unasked in default, acceptEdits and
	// bypassPermissions unless they touch paths outside the session cwd
	// (or files that run code), refused in plan mode, which runs only
	// what is known to change nothing.
	ClassReadOnlyClaimed
)

// String returns the class's name as the constants spell it without the
// "Class" prefix (e.g. "ReadOnly"), or "Class(N)" for an unknown value.
func (c Class) String() string {
	switch c {
	case ClassUndeclared:
		return "Undeclared"
	case ClassReadOnly:
		return "ReadOnly"
	case ClassAgentState:
		return "AgentState"
	case ClassEdit:
		return "Edit"
	case ClassExecute:
		return "Execute"
	case ClassNetwork:
		return "Network"
	case ClassReadOnlyClaimed:
		return "ReadOnlyClaimed"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// Tool is a registered tool. Build one with Define from a Spec, or fill it
// in directly for a raw JSON-Schema tool (then the registry validates
// arguments with the schema before calling Execute).
type Tool struct {
	// Name is the unique name the model calls the tool by (required).
	Name string
	// Description tells the model what the tool does.
	Description string
	// Describe, when set, is what Schemas tells the model instead of
	// Description: for a text that depends on something found out in the
	// background (bash: whether the kernel confines commands), so that
	// registering the tool does not wait for it. It may block until that
	// is known; it is called once per Schemas call.
	Describe func() string
	// Parameters is the JSON Schema of the arguments: a JSON object whose
	// "type" is "object". For Define tools it is generated from the Spec.
	Parameters json.RawMessage
	// Strict, when non-nil, is passed to the model as the function's
	// "strict" flag.
	Strict *bool
	// Terminal reports that the tool runs shell commands whose output can be
	// shown as a live terminal (bash).
	Terminal bool
	// Class is what the tool's calls can change, for the permission
	// policy. Leaving it unset (ClassUndeclared) is the safe default: the
	// calls are judged at least as strictly as edits.
	Class Class
	// ConcurrencySafe reports that a call may run at the same time as
	// other concurrency-safe calls of the same turn: it changes nothing
	// another call could observe (read, bash_output). The default, false,
	// means the call runs alone, after the calls before it and before the
	// ones after it.
	ConcurrencySafe bool
	// Execute runs the call (required). It returns the output, or an error
	// whose text becomes "Error: <text>" (a CodedError also gives
	// {name, code}). The registry recovers panics.
	Execute func(ctx context.Context, ex *Exec) (Output, error)
	// PresentCall returns the card for a pending call, given the raw
	// arguments; nil (or a nil field) means the generic fallback. It must be
	// pure and total: the same answer for the same input, no panics, no
	// errors, also for argument shapes of older versions.
	PresentCall func(args json.RawMessage) ToolCallView
	// PresentStart, when set, returns the card of a call whose arguments
	// are still streaming, given the top-level members complete so far
	// as a JSON object (see ArgsScanner): the call is announced with it as
	// soon as it returns a view (e.g. once a path is known), instead of
	// with the tool's name at once. A nil view means not yet; the card
	// then waits for more members, at the latest until the arguments are
	// complete. Pure and total like PresentCall. Terminal tools are
	// always announced with their complete arguments.
	PresentStart func(partial json.RawMessage) ToolCallView
	// PresentResult returns the card for a completed call, given the raw
	// arguments and the result; nil means the generic fallback. Pure and
	// total like PresentCall.
	PresentResult func(args json.RawMessage, r ResultInput) ToolResultView
	// Preview, when set, returns what the call would change, computed
	// against the current state (typically a DiffCall), or nil when there is
	// nothing to show. Callers treat an error as "no preview".
	Preview func(ctx context.Context, ex *Exec) (ToolCallView, error)
	// Access, when set, says what a call would touch, read from the
	// arguments exactly as Execute decodes them (so a permission check
	// judges the values the tool will use); ok is false for arguments the
	// tool would refuse.
	Access func(args json.RawMessage) (a Access, ok bool)
	// AccessParsed and PresentCallParsed, when set, are a raw
	// JSON-Schema tool's Access and PresentCall given its arguments
	// parsed already: v and err are what ParseArgs
	// gave for args (v nil when err is set). A resolved call (Call)
	// passes the parse it made, so the arguments are parsed once; the
	// raw-text fields stay for callers without one. Define tools ignore
	// them (theirs work on the decoded A).
	AccessParsed      func(args json.RawMessage, v any, err error) (a Access, ok bool)
	PresentCallParsed func(args json.RawMessage, v any, err error) ToolCallView

	// spec is set by Define: the registry then leaves validation to the
	// tool's own Execute, which reports the spec walker's texts.
	spec *Spec
	// typed is set by Define: its functions on decoded arguments, which
	// a resolved Call uses instead of decoding again.
	typed *typed
}

// CallView calls t.PresentCall safely: it returns nil when PresentCall is
// nil, returns nil, or panics.
func (t Tool) CallView(args json.RawMessage) (v ToolCallView) {
	if t.PresentCall == nil {
		return nil
	}
	return guarded(func() ToolCallView { return t.PresentCall(args) })
}

// StartView calls t.PresentStart safely: it returns nil when PresentStart
// is nil, returns nil, or panics.
func (t Tool) StartView(partial json.RawMessage) (v ToolCallView) {
	if t.PresentStart == nil {
		return nil
	}
	return guarded(func() ToolCallView { return t.PresentStart(partial) })
}

// ResultView calls t.PresentResult safely: it returns nil when PresentResult
// is nil, returns nil, or panics.
func (t Tool) ResultView(args json.RawMessage, r ResultInput) (v ToolResultView) {
	if t.PresentResult == nil {
		return nil
	}
	return guarded(func() ToolResultView { return t.PresentResult(args, r) })
}

// Spec returns the Spec a Define tool was built from, and false for a raw
// JSON-Schema tool.
func (t Tool) Spec() (Spec, bool) {
	if t.spec == nil {
		return nil, false
	}
	return *t.spec, true
}

// Schema is what the model is told about one tool: its name, description,
// parameters (JSON Schema) and, when set, strict. It never holds functions.
type Schema struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict,omitempty"`
}

// guarded returns f's answer, or the zero value when f panics: a
// presenter's failure is the generic card, never a crash.
func guarded[V any](f func() V) (v V) {
	defer func() {
		if recover() != nil {
			var zero V
			v = zero
		}
	}()
	return f()
}
