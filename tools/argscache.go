package tools

import (
	"encoding"
	"encoding/json"
	"reflect"
	"sync"
)

// argsCacheEntries is how many decoded argument values a Define tool's
// presenters remember, and argsCacheMaxKey the largest raw arguments text
// remembered, in bytes: a cache holds at most 8 × 16 KiB of keys plus
// their decoded values. Larger arguments are decoded every time.
const (
	argsCacheEntries = 8
	argsCacheMaxKey  = 16 << 10
)

// argsCache remembers the outcome of decoding recent raw arguments, so
// that a call's PresentCall and PresentResult (which get the same bytes)
// decode them once. Entries are keyed by the exact raw bytes and replaced
// oldest first. Every value handed out or stored is a fresh deep copy, so
// a presenter that changed its arguments could not change another
// presenter's; together with the type restrictions of newArgsCache this
// makes a hit give exactly what decoding would. Safe for concurrent use.
type argsCache[A any] struct {
	deep bool // A holds pointers or slices: copy through reflection

	mu      sync.Mutex
	entries [argsCacheEntries]argsEntry[A]
	next    int // the entry replaced next
}

type argsEntry[A any] struct {
	used bool
	key  string
	a    A
	ok   bool // decoding (parse, validation, decode) succeeded
}

// newArgsCache returns a cache for A, or nil when A cannot be cached
// safely: it holds a map, interface, channel, function or unsafe pointer,
// an unexported field with pointers or slices, or a type with its own
// UnmarshalJSON or UnmarshalText (whose results decoding cannot vouch for).
func newArgsCache[A any]() *argsCache[A] {
	deep, ok := copyable(reflect.TypeFor[A](), map[reflect.Type]bool{})
	if !ok {
		return nil
	}
	return &argsCache[A]{deep: deep}
}

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

// copyable reports whether t can be deep-copied by deepCopy (ok) and
// whether that needs more than an assignment (deep). visiting breaks
// cycles through pointers and slices (a recursive type is copyable when
// its parts are).
func copyable(t reflect.Type, visiting map[reflect.Type]bool) (deep, ok bool) {
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return false, false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return false, true
	case reflect.Array:
		return copyable(t.Elem(), visiting)
	case reflect.Pointer, reflect.Slice:
		if visiting[t] {
			return true, true
		}
		visiting[t] = true
		defer delete(visiting, t)
		_, ok := copyable(t.Elem(), visiting)
		return true, ok
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			d, ok := copyable(f.Type, visiting)
			if !ok || (d && !f.IsExported()) {
				return false, false
			}
			deep = deep || d
		}
		return deep, true
	}
	return false, false
}

// deepCopy replaces every non-nil pointer and slice reachable from the
// settable value v with a fresh copy (nil stays nil, empty stays empty).
func deepCopy(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		n := reflect.New(v.Type().Elem())
		n.Elem().Set(v.Elem())
		deepCopy(n.Elem())
		v.Set(n)
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(n, v)
		for i := range n.Len() {
			deepCopy(n.Index(i))
		}
		v.Set(n)
	case reflect.Array:
		for i := range v.Len() {
			deepCopy(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				deepCopy(v.Field(i))
			}
		}
	}
}

// clone returns a copy of a that shares no pointers or slices with it.
func (c *argsCache[A]) clone(a A) A {
	if c.deep {
		return deepClone(a)
	}
	return a
}

// deepClone is clone's reflective path, apart so that a copy of a type
// without references stays off the heap.
func deepClone[A any](a A) A {
	deepCopy(reflect.ValueOf(&a).Elem())
	return a
}

// get returns the remembered outcome for raw: the decoded value (a
// fresh copy) and whether decoding succeeded; hit is false when raw is
// not remembered.
func (c *argsCache[A]) get(raw json.RawMessage) (a A, ok, hit bool) {
	c.mu.Lock()
	for i := range c.entries {
		e := &c.entries[i]
		if e.used && e.key == string(raw) {
			a, ok = e.a, e.ok
			c.mu.Unlock()
			return c.clone(a), ok, true
		}
	}
	c.mu.Unlock()
	return a, false, false
}

// put remembers the outcome of decoding raw (a copy of a is kept),
// replacing the oldest entry; raw longer than argsCacheMaxKey is not
// remembered.
func (c *argsCache[A]) put(raw json.RawMessage, a A, ok bool) {
	if len(raw) > argsCacheMaxKey {
		return
	}
	e := argsEntry[A]{used: true, key: string(raw), a: c.clone(a), ok: ok}
	c.mu.Lock()
	c.entries[c.next] = e
	c.next = (c.next + 1) % argsCacheEntries
	c.mu.Unlock()
}
