package tools

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/dsh-acp/dsh-acp/internal/probe"
)

// Call is one tool call resolved once, when the model's arguments are
// complete: the tool it names (looked up once), its arguments decoded
// once (a Define tool's A, or a raw-schema tool's parsed value) and
// what is wrong with them. Everything after the model's answer reads
// it: the scheduler (ConcurrencySafe), the checkpoint and the
// permission step (Class, Access), the preview, the execution and the
// cards. Build one with Registry.Resolve or Tool.Resolve. Its fields
// are not changed after that; its methods are safe for concurrent use.
type Call struct {
	// ID is the call's id; Name the tool name the model called.
	ID, Name string
	// Args is the raw arguments text as the model sent it; "" means {}.
	Args json.RawMessage
	// Tool is the tool called Name; Found is false (and Tool zero) for a
	// name no registry knows.
	Tool  Tool
	Found bool
	// SessionTool is set when the tool is the session's own (see
	// Pending.SessionTool); a Call made by Tool.Resolve has it unset.
	SessionTool bool
	// Value is the decoded arguments: a Define tool's A, or, for a
	// raw-schema tool, the value ParseArgs gives; nil when Err is set or
	// the tool is not found.
	Value any
	// Err is why the arguments are refused (an *ArgsError: not JSON, a
	// repeated key, a schema violation, a decoding failure); nil when
	// they are valid or the tool is not found.
	Err error

	// parsed and parseErr are ParseArgs's answer for a raw-schema
	// tool's Args (before its schema is checked), for its AccessParsed
	// and PresentCallParsed.
	parsed   any
	parseErr error

	accessOnce sync.Once
	access     Access
	accessOK   bool

	keptMu sync.Mutex
	kept   any
}

// Resolve looks up the tool called name as a call of session s sees it
// (r's own, else the session's: see Lookup) and decodes args for it,
// once: the call every later step reads. An unknown name gives a Call
// with Found false. A raw-schema tool's arguments are also validated
// with its compiled schema here (the violations are Err). It is
// r.Pending(s, id, name).Resolve(args).
func (r *Registry) Resolve(s Session, id, name string, args json.RawMessage) *Call {
	return r.Pending(s, id, name).Resolve(args)
}

// Pending is a call whose tool is known (looked up once, when the model
// named it) and whose arguments are still streaming. Its fields are not
// changed after Registry.Pending.
type Pending struct {
	// ID is the call's id; Name the tool name the model called.
	ID, Name string
	// Tool is the tool called Name; Found is false (and Tool zero) for a
	// name no registry knows.
	Tool  Tool
	Found bool
	// SessionTool is set when the tool is the session's own (its
	// SessionTools registry's: an MCP server's), not the registry's.
	SessionTool bool
	raw         *rawSchema
}

// Pending looks up the tool called name as a call of session s sees it
// (see Resolve), for a call whose arguments have not arrived yet.
func (r *Registry) Pending(s Session, id, name string) *Pending {
	e, ok, own := r.entryOf(s, name)
	if !ok {
		return &Pending{ID: id, Name: name}
	}
	return &Pending{ID: id, Name: name, Tool: cloneTool(e.tool), Found: true, SessionTool: own, raw: e.raw}
}

// Resolve is the call p with its complete arguments args, decoded once
// (see Registry.Resolve); the tool is not looked up again.
func (p *Pending) Resolve(args json.RawMessage) *Call {
	c := &Call{ID: p.ID, Name: p.Name, Args: args, Tool: p.Tool, Found: p.Found, SessionTool: p.SessionTool}
	if !p.Found {
		return c
	}
	c.decode()
	if c.Err == nil && p.raw != nil {
		if v := schemaViolations(p.raw, c.Value); len(v) > 0 {
			c.Value, c.Err = nil, &ArgsError{Violations: v}
		}
	}
	return c
}

// Resolve is the call id of t, called by name, with args decoded as
// Registry.Resolve decodes them, for a tool found outside a registry
// (the tool of a logged call on replay): a raw-schema tool's arguments
// are parsed but not validated against its schema (the validator is the
// registry's). The zero Tool (a name nothing knows) gives a Call with
// Found false.
func (t Tool) Resolve(id, name string, args json.RawMessage) *Call {
	if t.Name == "" {
		return &Call{ID: id, Name: name, Args: args}
	}
	c := &Call{ID: id, Name: name, Args: args, Tool: t, Found: true}
	c.decode()
	return c
}

// decode sets Value and Err from Args for the call's tool.
func (c *Call) decode() {
	if d := c.Tool.typed; d != nil {
		c.Value, c.Err = d.decode(c.Args)
		if c.Err != nil {
			c.Value = nil
		}
		return
	}
	probe.Decode()
	c.parsed, c.parseErr = ParseArgs(c.Args)
	if c.parseErr != nil {
		c.parsed = nil
	}
	c.Value, c.Err = c.parsed, c.parseErr
}

// Matches reports whether c is the resolution of a call of that name
// with those arguments (a middleware may pass on a changed Exec).
func (c *Call) Matches(name string, args []byte) bool {
	return c != nil && c.Name == name && string(c.Args) == string(args)
}

// Access is what the call touches (Tool.Access, from the decoded
// arguments), worked out at the first question and kept; ok is false
// for a tool that declares no access, an unknown tool, or arguments the
// tool refuses.
func (c *Call) Access() (Access, bool) {
	c.accessOnce.Do(func() {
		if !c.Found {
			return
		}
		if d := c.Tool.typed; d != nil {
			if d.access != nil && c.Err == nil {
				c.access, c.accessOK = d.access(c.Value), true
			}
			return
		}
		switch {
		case c.Tool.AccessParsed != nil:
			c.access, c.accessOK = c.Tool.AccessParsed(c.Args, c.parsed, c.parseErr)
		case c.Tool.Access != nil:
			c.access, c.accessOK = c.Tool.Access(c.Args)
		}
	})
	return c.access, c.accessOK
}

// CallView is the call's pending card (Tool.PresentCall) from the
// decoded arguments: nil for the generic fallback, also when the
// arguments are refused or the presenter panics.
func (c *Call) CallView() ToolCallView {
	d := c.Tool.typed
	switch {
	case d != nil && (d.call == nil || c.Err != nil):
		return nil
	case d != nil:
		return guarded(func() ToolCallView { return d.call(c.Value) })
	case c.Tool.PresentCallParsed != nil && c.Found:
		return guarded(func() ToolCallView { return c.Tool.PresentCallParsed(c.Args, c.parsed, c.parseErr) })
	}
	return c.Tool.CallView(c.Args)
}

// ResultView is the call's completed card (Tool.PresentResult) from the
// decoded arguments and r: nil for the generic fallback, also when the
// arguments are refused or the presenter panics.
func (c *Call) ResultView(r ResultInput) ToolResultView {
	d := c.Tool.typed
	switch {
	case d != nil && (d.result == nil || c.Err != nil):
		return nil
	case d != nil:
		return guarded(func() ToolResultView { return d.result(c.Value, r) })
	}
	return c.Tool.ResultView(c.Args, r)
}

// HasPreview reports whether the call's tool computes previews.
func (c *Call) HasPreview() bool { return c.Found && c.Tool.Preview != nil }

// Preview is what the call ex would change (Tool.Preview; a Define
// tool's takes the decoded arguments of ex.Call), or nil.
func (c *Call) Preview(ctx context.Context, ex *Exec) (ToolCallView, error) {
	if !c.HasPreview() {
		return nil, nil
	}
	return c.Tool.Preview(ctx, ex)
}

// Keep stores v, a tool's own work on this call (e.g. the file an edit's
// preview read and the change it computed), for a later step of the same
// call (its Execute) to take with Kept.
func (c *Call) Keep(v any) {
	c.keptMu.Lock()
	c.kept = v
	c.keptMu.Unlock()
}

// Kept returns what Keep stored last and forgets it (nil when nothing).
func (c *Call) Kept() any {
	c.keptMu.Lock()
	defer c.keptMu.Unlock()
	v := c.kept
	c.kept = nil
	return v
}

// typed is what Define keeps of a Def: its access and presenters on
// decoded arguments (an A stored in an any) and the decoding itself.
type typed struct {
	decode func(json.RawMessage) (any, error)
	call   func(any) ToolCallView
	result func(any, ResultInput) ToolResultView
	access func(any) Access
}
