package toolmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-acp/dsh-acp/tools"
)

// Error names and codes of failed MCP calls (tools.Error; the model sees
// the message, the log keeps {name, code}).
const (
	// ErrorName is the name of every error this package returns.
	ErrorName = "MCPError"
	// CodeToolError: the server answered isError; the message is the
	// server's.
	CodeToolError = "MCP_TOOL_ERROR"
	// CodeServerDown: the server is not running (it crashed, did not
	// restart, or the session's servers were stopped).
	CodeServerDown = "MCP_SERVER_DOWN"
	// CodeTimeout: the server did not answer within the call timeout; the
	// call was cancelled on the server.
	CodeTimeout = "MCP_TIMEOUT"
	// CodeProtocol: the server answered with a JSON-RPC error (an unknown
	// tool, invalid arguments, an internal error).
	CodeProtocol = "MCP_PROTOCOL_ERROR"
)

func mcpError(code, format string, args ...any) error {
	return &tools.Error{Name: ErrorName, Code: code, Message: fmt.Sprintf(format, args...)}
}

// toolDef is what a registered tool knows of its MCP tool: everything
// its class and cards are built from. It is also the JSON that
// Set.Definition gives and ReplayTool reads (the session log keeps it
// beside each call), so its members only ever gain optional fields.
type toolDef struct {
	server   string // the server's configured name
	original string // the tool's name on the server
	display  string // title, annotations.title or name
	readOnly bool
	// trusted: the server was marked trusted (Server.Trusted), so
	// readOnly is believed.
	trusted bool
	// destructive: the server's destructiveHint, nil when not given (MCP's
	// default then: true).
	destructive *bool
	required    []string // the schema's required properties, in order

}

// wireDef is toolDef's JSON.
type wireDef struct {
	Server      string   `json:"server"`
	Tool        string   `json:"tool"`
	Title       string   `json:"title"`
	ReadOnly    bool     `json:"readOnly,omitempty"`
	Trusted     bool     `json:"trusted,omitempty"`
	Destructive *bool    `json:"destructive,omitempty"`
	Required    []string `json:"required,omitempty"`
}

func (d *toolDef) MarshalJSON() ([]byte, error) {
	return json.Marshal(wireDef{d.server, d.original, d.display, d.readOnly, d.trusted, d.destructive, d.required})
}

func (d *toolDef) UnmarshalJSON(b []byte) error {
	var w wireDef
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Tool == "" {
		return errors.New("no tool name")
	}
	if w.Title == "" {
		w.Title = w.Tool
	}
	*d = toolDef{server: w.Server, original: w.Tool, display: w.Title, readOnly: w.ReadOnly, trusted: w.Trusted, destructive: w.Destructive, required: w.Required}
	return nil
}

// class is the permission class the server's annotations give. A hint
// is a claim of the server's (MCP: hints are not to be trusted for
// decisions): readOnlyHint makes a tool read-only only when the user
// marked its server trusted, else claimed read-only (unasked in
// default and acceptEdits without paths outside the project, refused
// in plan); every other tool stays undeclared: asked in default and
// acceptEdits, run in bypassPermissions, refused in plan (tools.Class).
func (d *toolDef) class() tools.Class {
	switch {
	case d.readOnly && d.trusted:
		return tools.ClassReadOnly
	case d.readOnly:
		return tools.ClassReadOnlyClaimed
	}
	return tools.ClassUndeclared
}

// newTool builds the tools.Tool named name for the MCP tool t of srv, with
// t's input schema as its parameters (a schema without "type" gets
// "type":"object"; the registry validates arguments with it), and the
// definition its cards come from. The call goes to srv.call.
func newTool(srv *server, name string, t *mcp.Tool) (tools.Tool, *toolDef, error) {
	params, required, err := inputSchema(t.InputSchema)
	if err != nil {
		return tools.Tool{}, nil, err
	}
	d := &toolDef{server: srv.cfg.Name, original: t.Name, display: t.Name, required: required, trusted: srv.cfg.Trusted}
	switch {
	case t.Title != "":
		d.display = t.Title
	case t.Annotations != nil && t.Annotations.Title != "":
		d.display = t.Annotations.Title
	}
	if a := t.Annotations; a != nil {
		d.readOnly = a.ReadOnlyHint
		d.destructive = a.DestructiveHint
	}
	desc := t.Description
	if desc == "" {
		desc = d.display
	}
	tool := tools.Tool{
		Name:            name,
		Description:     desc,
		Parameters:      params,
		Class:           d.class(),
		ConcurrencySafe: d.readOnly,
		Execute: func(ctx context.Context, ex *tools.Exec) (tools.Output, error) {
			return srv.call(ctx, d, ex.Args)
		},
		Access:            d.pathAccess,
		AccessParsed:      d.accessParsed,
		PresentCall:       d.presentCall,
		PresentCallParsed: d.presentCallParsed,
		PresentResult:     d.presentResult,
	}
	return tool, d, nil
}

// ReplayTool returns a tool called name whose cards are those of the MCP
// tool def describes (def as Set.Definition gave it): the same title,
// kind, notes and result blocks, built without the server, for showing
// a logged call again (session/load). Its Execute fails
// (CodeServerDown): it never reaches a server. An error means def is not
// such a definition.
func ReplayTool(name string, def json.RawMessage) (tools.Tool, error) {
	d := &toolDef{}
	if err := json.Unmarshal(def, d); err != nil {
		return tools.Tool{}, fmt.Errorf("toolmcp: not an MCP tool definition: %w", err)
	}
	return tools.Tool{
		Name:        name,
		Description: d.display,
		Parameters:  json.RawMessage(`{"type":"object"}`),
		Class:       d.class(),
		Execute: func(context.Context, *tools.Exec) (tools.Output, error) {
			return tools.Output{}, mcpError(CodeServerDown, "MCP tool %q of server %q is shown from the session log; it does not run", d.original, d.server)
		},
		PresentCall:       d.presentCall,
		PresentCallParsed: d.presentCallParsed,
		PresentResult:     d.presentResult,
	}, nil
}

// inputSchema returns the tool's schema as JSON and its required list.
func inputSchema(s any) (json.RawMessage, []string, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, nil, fmt.Errorf("input schema is not a JSON object")
	}
	if _, ok := obj["type"]; !ok {
		obj["type"] = json.RawMessage(`"object"`)
		raw, _ = json.Marshal(obj)
	}
	var required []string
	_ = json.Unmarshal(obj["required"], &required)
	return raw, required, nil
}

// salientKeys are the argument names a card title shows first.
var salientKeys = []string{"path", "file_path", "filePath", "file", "filename", "uri", "url", "query", "q", "pattern", "command", "name", "id", "title"}

// salient returns the argument a title names: the first of salientKeys
// with a string or number value, else the first required one that has
// such a value; one line of at most 60 characters.
func (d *toolDef) salient(v any, err error) string {
	// Arguments the registry refuses (a key given twice: decoding would
	// pick one value, the server perhaps another) name nothing: the
	// call never reaches the server.
	if err != nil {
		return ""
	}
	m, _ := v.(map[string]any)
	pick := func(k string) string {
		switch v := m[k].(type) {
		case string:
			return v
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return fmt.Sprint(f)
			}
		}
		return ""
	}
	var s string
	for _, k := range append(salientKeys, d.required...) {
		if s = strings.TrimSpace(pick(k)); s != "" {
			break
		}
	}
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i]) + "…"
	}
	if utf8.RuneCountInString(s) > 60 {
		s = string([]rune(s)[:59]) + "…"
	}
	return s
}

// kind is the card's kind: for a read-only tool, search, fetch or read
// when its name says so; other otherwise (an MCP tool's effects are the
// server's, never one of our file edits).
func (d *toolDef) kind() tools.Kind {
	if !d.readOnly {
		return tools.KindOther
	}
	n := strings.ToLower(d.original)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(n, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("search", "find", "grep", "query", "lookup"):
		return tools.KindSearch
	case has("fetch", "http", "url", "download", "browse", "web"):
		return tools.KindFetch
	case has("read", "get", "list", "show", "view", "open", "cat", "describe", "info", "stat", "load"):
		return tools.KindRead
	}
	return tools.KindOther
}

// title is the card title: the tool's display name and, when there is
// one, the salient argument; a tool the server calls destructive says
// so (v and err: ParseArgs's answer for the arguments).
func (d *toolDef) title(v any, err error) string {
	t := d.display
	if s := d.salient(v, err); s != "" {
		// The argument is the model's text: Markdown-safe, as every
		// value a title shows (tools.MarkdownInline).
		t += ": " + tools.MarkdownInline(s)
	}
	if !d.readOnly && d.destructive != nil && *d.destructive {
		t += " (destructive)"
	}
	return t
}

// presentCall is the pending card, which the permission prompt shows
// too: title, kind, the arguments and, for a tool that is not
// read-only, what the server says about its effects (destructiveHint).
func (d *toolDef) presentCall(args json.RawMessage) tools.ToolCallView {
	v, err := parseArgs(args)
	return d.presentCallParsed(args, v, err)
}

// presentCallParsed is presentCall given ParseArgs's parsed and err
// for args (a resolved call's parse).
func (d *toolDef) presentCallParsed(args json.RawMessage, parsed any, err error) tools.ToolCallView {
	v := tools.GenericCall{Title: d.title(parsed, err), Kind: d.kind(), RawInput: rawArgs(args, err)}
	if !d.readOnly {
		where := fmt.Sprintf("MCP server %q, tool %q", d.server, d.original)
		var note string
		switch {
		case d.destructive == nil:
			note = "⚠ May be destructive: " + where + " does not say it is read-only or only additive, so MCP assumes it may delete or overwrite data."
		case *d.destructive:
			note = "⚠ Destructive: " + where + " may delete or overwrite data."
		default:
			note = "Additive: " + where + " changes things but deletes or overwrites nothing, the server says."
		}
		v.Content = []tools.Content{tools.Text(note)}
	}
	return v
}

// rawArgs is the arguments as JSON ({} when empty or not JSON; err is
// ParseArgs's for args).
func rawArgs(args json.RawMessage, err error) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage("{}")
	}
	if err != nil && !onlyDuplicates(err) {
		return json.RawMessage("{}")
	}
	return bytes.Clone(args)
}
