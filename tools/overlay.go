package tools

import (
	"bytes"
	"sort"

	"github.com/dsh-acp/dsh-acp/internal/probe"
)

type sessionToolsKey struct{}

// SessionTools returns the registry of tools that exist for session s
// only (an MCP server's tools), creating it empty on first use; nil when
// s is nil. Whoever provides such tools registers them there and
// unregisters them when they go away; the shared registry that runs the
// calls (Execute) finds them through the call's Exec.Session, after its
// own tools, and tells the model about them (SchemasFor). The session
// registry's own middlewares are never run: every call passes the
// shared registry's chain.
func SessionTools(s Session) *Registry {
	if s == nil {
		return nil
	}
	r, _ := s.Value(sessionToolsKey{}, func() any { return NewRegistry() }).(*Registry)
	return r
}

// sessionTools returns the session's registry when one was created, and
// nil otherwise (it never creates one).
func sessionTools(s Session) *Registry {
	if s == nil {
		return nil
	}
	r, _ := s.Value(sessionToolsKey{}, nil).(*Registry)
	return r
}

// Lookup returns the tool called name as a call of session s sees it: r's
// own tool, else the session's (SessionTools); r's tool wins a name both
// have. A middleware that judges a call by its tool (the permission
// step) looks it up here with ex.Session, never with Get, which knows
// r's tools only. s may be nil (then Lookup is Get).
func (r *Registry) Lookup(s Session, name string) (Tool, bool) {
	e, ok := r.entryFor(s, name)
	if !ok {
		return Tool{}, false
	}
	return cloneTool(e.tool), true
}

// SchemasFor returns what the model is told in a request of session s:
// Schemas(), then the schemas of the session's own tools whose names r
// does not have, sorted by name (so the request does not depend on the
// order in which the session's tools arrived). Fresh deep copies, like
// Schemas; s may be nil.
func (r *Registry) SchemasFor(s Session) []Schema {
	out := r.Schemas()
	o := sessionTools(s)
	if o == nil || o == r {
		return out
	}
	extra := o.Schemas()
	if len(extra) == 0 {
		return out
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].Name < extra[j].Name })
	r.mu.RLock()
	for _, sc := range extra {
		if _, shadowed := r.tools[sc.Name]; !shadowed {
			out = append(out, sc)
		}
	}
	r.mu.RUnlock()
	return out
}

// entryFor finds the entry that runs a call named name of session s: r's,
// else the session registry's.
func (r *Registry) entryFor(s Session, name string) (*entry, bool) {
	e, ok, _ := r.entryOf(s, name)
	return e, ok
}

// entryOf is entryFor, and whether the tool is the session's own (its
// SessionTools registry's) rather than r's.
func (r *Registry) entryOf(s Session, name string) (e *entry, ok, own bool) {
	probe.Lookup()
	r.mu.RLock()
	e, ok = r.tools[name]
	r.mu.RUnlock()
	if ok {
		return e, true, false
	}
	o := sessionTools(s)
	if o == nil || o == r {
		return nil, false, false
	}
	o.mu.RLock()
	e, ok = o.tools[name]
	o.mu.RUnlock()
	return e, ok, ok
}

// cloneTool gives t its own copies of Parameters and Strict.
func cloneTool(t Tool) Tool {
	t.Parameters = bytes.Clone(t.Parameters)
	if t.Strict != nil {
		strict := *t.Strict
		t.Strict = &strict
	}
	return t
}
