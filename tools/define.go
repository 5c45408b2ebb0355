package tools

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/dsh-acp/dsh-acp/internal/probe"
)

// Def describes a tool whose arguments are a Go value of type A, checked
// against Spec. A is usually a struct whose json tags name the Spec's
// properties; use float64 (or json.Number) for "number" properties unless
// the tool accepts only integers (a fraction then fails decoding with
// INVALID_ARGS). Execute is required; the other functions are optional.
// The presenters and Access get the decoded arguments of a resolved Call,
// shared by every step of the call: they must not change them.
type Def[A any] struct {
	Name, Description string
	// Describe is copied to the Tool (see Tool.Describe).
	Describe func() string
	Spec     Spec
	Strict   *bool
	Terminal bool
	// Class and ConcurrencySafe are copied to the Tool (see Tool.Class,
	// Tool.ConcurrencySafe); unset, the tool is ClassUndeclared and runs
	// alone.
	Class           Class
	ConcurrencySafe bool
	// Execute runs the call with validated, decoded arguments.
	Execute func(ctx context.Context, ex *Exec, args A) (Output, error)
	// PresentCall returns the pending card (nil for the generic fallback).
	PresentCall func(args A) ToolCallView
	// PresentStart returns the card of a call whose arguments are still
	// streaming (see Tool.PresentStart): args holds the members complete
	// so far, the others are zero; nil means not yet.
	PresentStart func(args A) ToolCallView
	// PresentResult returns the completed card (nil for the generic
	// fallback).
	PresentResult func(args A, r ResultInput) ToolResultView
	// Preview returns what the call would change, or nil.
	Preview func(ctx context.Context, ex *Exec, args A) (ToolCallView, error)
	// Access returns the paths and command a call touches (see
	// Tool.Access).
	Access func(args A) Access
}

// Define builds a Tool from d. Parameters is d.Spec.JSONSchema(). A call
// of the tool is decoded once, when it is resolved (Registry.Resolve):
// its arguments are parsed (ParseArgs), validated with Spec.Validate and
// decoded into A with case-sensitive key matching ("PATH" does not fill a
// field named "path"); any failure is an *ArgsError (ToolArgsError,
// INVALID_ARGS), which the registry returns before d's Execute runs.
// The Tool's Execute and Preview take the decoded A of the call's
// resolution (Exec.Call) and decode ex.Args only for an Exec without
// one; a resolved Call's Access and views (Call.Access, Call.CallView,
// Call.ResultView) call d's functions with it directly, so replacing
// the Tool's PresentCall, PresentResult or Access fields after Define
// does not change them (define another tool instead). Those fields (for
// callers that hold raw arguments, not a Call) decode each time; their
// presenters validate softly: arguments that do not parse, validate or
// decode (for example the shape of an older version, met on replay) give
// nil, the generic fallback, never an error. The Spec is checked when the
// tool is registered (Registry.Register), not here.
func Define[A any](d Def[A]) Tool {
	spec := slices.Clone(d.Spec)
	decode := func(raw json.RawMessage) (A, error) { return decodeArgs[A](raw, spec) }
	t := Tool{
		Name:            d.Name,
		Description:     d.Description,
		Describe:        d.Describe,
		Parameters:      spec.JSONSchema(),
		Terminal:        d.Terminal,
		Class:           d.Class,
		ConcurrencySafe: d.ConcurrencySafe,
		spec:            &spec,
		typed:           typedOf(d, decode),
	}
	if d.Strict != nil {
		strict := *d.Strict
		t.Strict = &strict
	}
	if run := d.Execute; run != nil {
		t.Execute = func(ctx context.Context, ex *Exec) (Output, error) {
			a, err := argsOf(ex, decode)
			if err != nil {
				return Output{}, err
			}
			return run(ctx, ex, a)
		}
	}
	if present := d.PresentCall; present != nil {
		t.PresentCall = func(args json.RawMessage) ToolCallView {
			a, err := decode(args)
			if err != nil {
				return nil
			}
			return present(a)
		}
	}
	if present := d.PresentStart; present != nil {
		t.PresentStart = func(partial json.RawMessage) ToolCallView {
			a, err := decodePartial[A](spec, partial)
			if err != nil {
				return nil
			}
			return present(a)
		}
	}
	if present := d.PresentResult; present != nil {
		t.PresentResult = func(args json.RawMessage, r ResultInput) ToolResultView {
			a, err := decode(args)
			if err != nil {
				return nil
			}
			return present(a, r)
		}
	}
	if access := d.Access; access != nil {
		t.Access = func(args json.RawMessage) (Access, bool) {
			a, err := decode(args)
			if err != nil {
				return Access{}, false
			}
			return access(a), true
		}
	}
	if preview := d.Preview; preview != nil {
		t.Preview = func(ctx context.Context, ex *Exec) (ToolCallView, error) {
			a, err := argsOf(ex, decode)
			if err != nil {
				return nil, err
			}
			return preview(ctx, ex, a)
		}
	}
	return t
}

// argsOf is the decoded arguments of ex: those of its resolved call
// (Exec.Call, when it is the call of ex's name and arguments), else
// decoded now.
func argsOf[A any](ex *Exec, decode func(json.RawMessage) (A, error)) (A, error) {
	if c := ex.Call; c.Matches(ex.Name, ex.Args) && c.Found {
		if c.Err != nil {
			var zero A
			return zero, c.Err
		}
		if a, ok := c.Value.(A); ok {
			return a, nil
		}
	}
	return decode(ex.Args)
}

// typedOf is d's functions on decoded arguments, for a resolved Call's
// access and views: each takes the A that decode gave, stored in an any.
func typedOf[A any](d Def[A], decode func(json.RawMessage) (A, error)) *typed {
	td := &typed{decode: func(raw json.RawMessage) (any, error) {
		a, err := decode(raw)
		if err != nil {
			return nil, err
		}
		return a, nil
	}}
	if f := d.PresentCall; f != nil {
		td.call = func(v any) ToolCallView { return f(v.(A)) }
	}
	if f := d.PresentResult; f != nil {
		td.result = func(v any, r ResultInput) ToolResultView { return f(v.(A), r) }
	}
	if f := d.Access; f != nil {
		td.access = func(v any) Access { return f(v.(A)) }
	}
	return td
}

// decodeArgs parses raw (ParseArgs), validates it with spec and decodes
// it case-sensitively into an A (decodeInto); every failure is an
// *ArgsError with its violation texts.
func decodeArgs[A any](raw json.RawMessage, spec Spec) (A, error) {
	probe.Decode()
	var a A
	parsed, err := ParseArgs(raw)
	if err != nil {
		return a, err
	}
	if v := spec.Validate(parsed); len(v) > 0 {
		return a, &ArgsError{Violations: v}
	}
	err = decodeInto(&a, raw)
	return a, err
}

// decodePartial decodes the members of a call's arguments that are
// complete so far as Define decodes whole arguments, except that a
// required top-level member may still be missing (it has not streamed
// yet); a member that is there must be valid.
func decodePartial[A any](spec Spec, raw json.RawMessage) (A, error) {
	var a A
	parsed, err := ParseArgs(raw)
	if err != nil {
		return a, err
	}
	var left []string
	for _, v := range spec.Validate(parsed) {
		if !missingTopLevel(spec, v) {
			left = append(left, v)
		}
	}
	if len(left) > 0 {
		return a, &ArgsError{Violations: left}
	}
	err = decodeInto(&a, raw)
	return a, err
}

// missingTopLevel reports whether violation v is a required top-level
// property of spec that is absent.
func missingTopLevel(spec Spec, v string) bool {
	for _, np := range spec {
		if np.Prop.Required && v == `missing required property "`+np.Name+`"` {
			return true
		}
	}
	return false
}
