// Package sets declares the closed sets the fixtures switch over.
package sets

// View is sealed: A, B and *C are its members.
type View interface{ isView() }

type A struct{}
type B struct{}
type C struct{}

func (A) isView()  {}
func (B) isView()  {}
func (*C) isView() {}

// Titled is an interface some members implement.
type Titled interface{ Title() string }

func (A) Title() string { return "a" }
func (B) Title() string { return "b" }

// Open has no unexported method: anyone may implement it, it is no
// closed set.
type Open interface{ Name() string }

type N struct{}

func (N) Name() string { return "n" }

// Color is an enum; Crimson has Red's value.
type Color int

const (
	Red Color = iota
	Green
	Blue
	Crimson = Red
)

// Word is a string enum.
type Word string

const (
	Yes Word = "yes"
	No  Word = "no"
)

// Point is a named struct: no closed set of values.
type Point struct{ X int }

// Describe names every member; the member sets_test.go adds does not
// count.
func Describe(v View) string {
	switch v.(type) {
	case A:
		return "a"
	case B:
		return "b"
	case *C:
		return "c"
	}
	return ""
}
