package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
)

// Def describes a tool whose arguments are a Go value of type A, checked
// against Spec. A is usually a struct whose json tags name the Spec's
// properties; use float64 (or json.Number) for "number" properties unless
// the tool accepts only integers (a fraction then fails decoding with
// INVALID_ARGS). Execute is required; the other functions are optional.
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

// Define builds a Tool from d. Parameters is d.Spec.JSONSchema(). The
// tool's Execute and Preview parse ex.Args (ParseArgs), validate them with
// Spec.Validate and decode them into A with case-sensitive key matching
// ("PATH" does not fill a field named "path"); any failure returns an
// *ArgsError (ToolArgsError, INVALID_ARGS) before d's function runs.
// Arguments that one scan finds certainly valid (quickValid) skip the
// parse and validation and are decoded directly, to the same value. The
// presenters validate softly: arguments that do not parse, validate or
// decode (for example the shape of an older version, met on replay) give nil,
// the generic fallback, never an error. When d has both presenters, they
// share a small cache of decoded arguments keyed by the exact raw bytes (see
// argsCache), so a call's two cards cost one decode; A types that cannot be
// copied safely (maps, interfaces, custom unmarshalers) are not cached. The Spec is checked when the tool is
// registered (Registry.Register), not here.
func Define[A any](d Def[A]) Tool {
	spec := slices.Clone(d.Spec)
	node := buildKeyNode(reflect.TypeFor[A]())
	flat := buildFlatType(reflect.TypeFor[A]())
	decode := func(raw json.RawMessage) (A, error) { return decodeArgs[A](raw, spec, node, flat) }
	t := Tool{
		Name:            d.Name,
		Description:     d.Description,
		Describe:        d.Describe,
		Parameters:      spec.JSONSchema(),
		Terminal:        d.Terminal,
		Class:           d.Class,
		ConcurrencySafe: d.ConcurrencySafe,
		spec:            &spec,
	}
	if d.Strict != nil {
		strict := *d.Strict
		t.Strict = &strict
	}
	if run := d.Execute; run != nil {
		t.Execute = func(ctx context.Context, ex *Exec) (Output, error) {
			a, err := decode(ex.Args)
			if err != nil {
				return Output{}, err
			}
			return run(ctx, ex, a)
		}
	}
	// A call's two presenters see the same arguments: decode them once.
	var cache *argsCache[A]
	if d.PresentCall != nil && (d.PresentResult != nil || d.Access != nil) {
		cache = newArgsCache[A]()
	}
	presentArgs := func(raw json.RawMessage) (A, bool) {
		if cache == nil {
			a, err := decode(raw)
			return a, err == nil
		}
		if a, ok, hit := cache.get(raw); hit {
			return a, ok
		}
		a, err := decode(raw)
		if err != nil {
			var zero A
			cache.put(raw, zero, false)
			return a, false
		}
		cache.put(raw, a, true)
		return a, true
	}
	if present := d.PresentCall; present != nil {
		t.PresentCall = func(args json.RawMessage) ToolCallView {
			a, ok := presentArgs(args)
			if !ok {
				return nil
			}
			return present(a)
		}
	}
	if present := d.PresentStart; present != nil {
		t.PresentStart = func(partial json.RawMessage) ToolCallView {
			a, err := decodePartial[A](spec, node, partial)
			if err != nil {
				return nil
			}
			return present(a)
		}
	}
	if present := d.PresentResult; present != nil {
		t.PresentResult = func(args json.RawMessage, r ResultInput) ToolResultView {
			a, ok := presentArgs(args)
			if !ok {
				return nil
			}
			return present(a, r)
		}
	}
	if access := d.Access; access != nil {
		t.Access = func(args json.RawMessage) (Access, bool) {
			a, ok := presentArgs(args)
			if !ok {
				return Access{}, false
			}
			return access(a), true
		}
	}
	if preview := d.Preview; preview != nil {
		t.Preview = func(ctx context.Context, ex *Exec) (ToolCallView, error) {
			a, err := decode(ex.Args)
			if err != nil {
				return nil, err
			}
			return preview(ctx, ex, a)
		}
	}
	return t
}

// decodeArgs is the decoding of Define's tools: arguments that one scan
// finds certainly valid (quickValid) are decoded directly, field by field
// for a flat A (flat non-nil, see flatDecode), else by json.Unmarshal of
// raw, their only parse; any others, and any whose decode fails, take the
// full path (decodeFull), which words the error.
func decodeArgs[A any](raw json.RawMessage, spec Spec, node *keyNode, flat *flatType) (A, error) {
	var a A
	valid := false
	if flat != nil {
		var decoded bool
		if valid, decoded = flatDecode(reflect.ValueOf(&a).Elem(), flat, raw, spec, node); decoded {
			return a, nil
		}
		a = *new(A)
	} else {
		valid = quickValid(raw, spec, node)
	}
	if valid && json.Unmarshal(raw, &a) == nil {
		return a, nil
	}
	return decodeFull[A](raw, spec, node)
}

// decodeFull parses raw (ParseArgs), validates it with spec and decodes
// it case-sensitively into an A (decodeInto); every failure is an
// *ArgsError with its violation texts.
func decodeFull[A any](raw json.RawMessage, spec Spec, node *keyNode) (A, error) {
	var a A
	parsed, err := ParseArgs(raw)
	if err != nil {
		return a, err
	}
	if v := spec.Validate(parsed); len(v) > 0 {
		return a, &ArgsError{Violations: v}
	}
	err = decodeInto(&a, raw, parsed, node)
	return a, err
}

// decodePartial decodes the members of a call's arguments that are
// complete so far as Define decodes whole arguments, except that a
// required top-level member may still be missing (it has not streamed
// yet); a member that is there must be valid.
func decodePartial[A any](spec Spec, node *keyNode, raw json.RawMessage) (A, error) {
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
	err = decodeInto(&a, raw, parsed, node)
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
