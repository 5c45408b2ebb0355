package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/dsh-acp/dsh-acp/internal/probe"
)

// Next continues the execute chain: the next middleware, or at the end the
// dispatch to the tool. It never panics.
type Next func(ctx context.Context, ex *Exec) Result

// Middleware wraps every tool call. It may call next (possibly with a
// changed ctx or Exec) and post-process the result, or return its own result
// without calling next (a veto; ErrorResult builds an error veto). A panic
// inside a middleware becomes an error result at that point of the chain.
type Middleware func(ctx context.Context, ex *Exec, next Next) Result

// Registry holds the tools and the execute chain. It is safe for concurrent
// use. The zero value is not usable; call NewRegistry.
type Registry struct {
	mu    sync.RWMutex
	order []string // names in registration order
	tools map[string]*entry
	mws   []Middleware // replaced, never appended in place, so snapshots stay valid
}

type entry struct {
	tool Tool
	// raw is the compiled schema of a raw JSON-Schema tool, used to validate
	// arguments before Execute; nil for Define tools, which validate
	// themselves.
	raw *rawSchema
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{tools: map[string]*entry{}}
}

// Register adds t. It returns an error, and changes nothing, when t has no
// Name, no Execute, Parameters that are not a JSON object with
// "type":"object" or that do not compile as JSON Schema, an invalid Spec (a
// Define tool; see Spec.Check), or a Name already registered (`tool "<name>"
// is already registered`). The registry keeps its own copy of Parameters
// and Strict.
//
// Only a raw JSON-Schema tool's schema is compiled, once, here: that is
// its check, and its validator for every call. A Define tool's schema is
// never compiled: its arguments are checked by Spec.Validate, and the
// schema Spec.JSONSchema writes for a Spec that passes Check is valid
// JSON Schema by construction (a test compiles random ones), so Check is
// the whole check and registering the built-in tools costs no schema
// compiling at start-up.
func (r *Registry) Register(t Tool) error {
	if t.Name == "" {
		return errors.New("tools: a tool must have a name")
	}
	if t.Execute == nil {
		return fmt.Errorf("tools: tool %q has no Execute", t.Name)
	}
	params := bytes.Clone(t.Parameters)
	var sch *rawSchema
	if t.spec != nil {
		if err := t.spec.Check(); err != nil {
			return fmt.Errorf("tools: tool %q: %w", t.Name, err)
		}
	} else {
		var err error
		if sch, err = compileSchema(t.Name, params); err != nil {
			return err
		}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, params); err != nil {
		return fmt.Errorf("tools: tool %q: %w", t.Name, err)
	}
	t.Parameters = json.RawMessage(compact.Bytes())
	if t.Strict != nil {
		strict := *t.Strict
		t.Strict = &strict
	}
	e := &entry{tool: t, raw: sch}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[t.Name]; dup {
		return fmt.Errorf("tools: tool %q is already registered", t.Name)
	}
	r.tools[t.Name] = e
	r.order = append(r.order, t.Name)
	return nil
}

// Unregister removes the tool called name and reports whether it was there.
func (r *Registry) Unregister(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[name]; !ok {
		return false
	}
	delete(r.tools, name)
	for i, n := range r.order {
		if n == name {
			r.order = append(r.order[:i:i], r.order[i+1:]...)
			break
		}
	}
	return true
}

// Get returns the registered tool called name, functions included. Its
// Parameters and Strict are copies. It knows r's own tools only: a call's
// tool, which may be one of its session's, is found with Lookup.
func (r *Registry) Get(name string) (Tool, bool) {
	probe.Lookup()
	r.mu.RLock()
	e, ok := r.tools[name]
	r.mu.RUnlock()
	if !ok {
		return Tool{}, false
	}
	return cloneTool(e.tool), true
}

// Schemas returns what the model is told about the tools: one Schema per
// tool in registration order, holding only name, description, parameters
// and strict (when set). Every call returns fresh deep copies.
func (r *Registry) Schemas() []Schema {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Schema, 0, len(r.order))
	for _, name := range r.order {
		t := r.tools[name].tool
		s := Schema{Name: t.Name, Description: t.Description, Parameters: bytes.Clone(t.Parameters)}
		if t.Describe != nil {
			s.Description = t.Describe()
		}
		if t.Strict != nil {
			strict := *t.Strict
			s.Strict = &strict
		}
		out = append(out, s)
	}
	return out
}

// Use appends m to the execute chain; a nil m is ignored. The first
// middleware added is the outermost. Calls already running keep the chain
// they started with.
func (r *Registry) Use(m Middleware) {
	if m == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	mws := make([]Middleware, len(r.mws), len(r.mws)+1)
	copy(mws, r.mws)
	r.mws = append(mws, m)
}

// Execute runs one call through the middleware chain and the tool and never
// panics. The call is ex.Call, resolved here (Resolve) when it is nil or
// not the call of ex.Name and ex.Args: the tool is r's tool called
// ex.Name, else the one of that name in the session's own registry
// (SessionTools(ex.Session)). The result's CallID is always ex.CallID. Failures become error
// results (see ErrorResult): an unknown tool (ToolNotFoundError,
// UNKNOWN_TOOL; middlewares still see the call), invalid arguments
// (ToolArgsError, INVALID_ARGS), a tool's error, a tool's panic
// (`Error: tool "<name>" panicked: <value>`, no code), a middleware's panic
// (`Error: middleware panicked: <value>`, no code) and invalid Meta. An error
// result never carries Meta; a success carries Meta only when the tool set
// it.
func (r *Registry) Execute(ctx context.Context, ex *Exec) Result {
	if ex == nil {
		return finish(ErrorResult("", errors.New("tools: no call to execute")), "")
	}
	r.mu.RLock()
	mws := r.mws
	r.mu.RUnlock()
	r.CallOf(ex)
	return finish(r.step(ctx, ex, mws), ex.CallID)
}

// step runs mws[0] around the rest of the chain.
func (r *Registry) step(ctx context.Context, ex *Exec, mws []Middleware) (res Result) {
	if len(mws) == 0 {
		return r.dispatch(ctx, ex)
	}
	callID := ex.CallID
	defer func() {
		if v := recover(); v != nil {
			res = ErrorResult(callID, fmt.Errorf("middleware panicked: %v", v))
		}
	}()
	return mws[0](ctx, ex, func(ctx context.Context, ex2 *Exec) Result {
		if ex2 == nil {
			return ErrorResult(callID, errors.New("tools: middleware passed no call to next"))
		}
		return r.step(ctx, ex2, mws[1:])
	})
}

// dispatch is the innermost step: run the resolved call's tool with its
// decoded arguments (an unknown tool or refused arguments fail here).
func (r *Registry) dispatch(ctx context.Context, ex *Exec) (res Result) {
	defer func() {
		if v := recover(); v != nil {
			res = ErrorResult(ex.CallID, fmt.Errorf("tool %q panicked: %v", ex.Name, v))
		}
	}()
	if ex.OnStart != nil {
		ex.OnStart()
	}
	c := r.CallOf(ex)
	if !c.Found {
		return ErrorResult(ex.CallID, UnknownToolError(ex.Name))
	}
	if c.Err != nil && c.Tool.typed == nil {
		// A raw-schema tool's arguments were refused at resolution; a
		// Define tool's Execute returns its call's argument error.
		return ErrorResult(ex.CallID, c.Err)
	}
	out, err := c.Tool.Execute(ctx, ex)
	if err != nil {
		return ErrorResult(ex.CallID, err)
	}
	res = Result{CallID: ex.CallID, Content: out.Content, EndTurn: out.EndTurn, Charge: out.Charge, View: out.View}
	if out.Meta != nil {
		if !json.Valid(out.Meta) {
			return ErrorResult(ex.CallID, fmt.Errorf("tool %q returned meta that is not valid JSON", ex.Name))
		}
		res.Meta = bytes.Clone(out.Meta)
	}
	return res
}

// CallOf returns ex.Call, first resolving it (Resolve) when it is nil or
// is not the call of ex's name and arguments: a middleware reads the
// call it judges here.
func (r *Registry) CallOf(ex *Exec) *Call {
	if !ex.Call.Matches(ex.Name, ex.Args) {
		ex.Call = r.Resolve(ex.Session, ex.CallID, ex.Name, ex.Args)
	}
	return ex.Call
}

// finish enforces the Result invariants on whatever the chain returned.
func finish(res Result, callID string) Result {
	res.CallID = callID
	if res.Content == nil {
		res.Content = []Content{}
	}
	if res.IsError {
		res.Meta = nil
		res.EndTurn = ""
		res.Charge = nil
		res.View = nil
	}
	return res
}
