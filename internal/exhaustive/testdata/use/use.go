// Package use switches over the sets of package sets.
package use

import (
	"reflect"

	"example.com/closed/sets"
)

func complete(v sets.View) int {
	switch v.(type) {
	case sets.A:
		return 1
	case sets.B, *sets.C:
		return 2
	}
	return 0
}

func missing(v sets.View) int {
	switch x := v.(type) { // want `switch over sets.View misses \*sets.C: add their cases, or a default whose comment says why they need nothing`
	case sets.A:
		return 1
	case sets.B:
		_ = x
		return 2
	}
	return 0
}

func valueIsNotPointer(v sets.View) int {
	switch v.(type) { // want `switch over sets.View misses sets.A`
	case *sets.A, sets.B, *sets.C:
		return 1
	}
	return 0
}

func bareDefault(v sets.View) int {
	switch v.(type) { // want `switch over sets.View misses sets.B, \*sets.C, and its default has no comment saying why they need nothing`
	case sets.A:
		return 1
	default:
		return 0
	}
}

func documentedDefault(v sets.View) int {
	switch v.(type) {
	case sets.A:
		return 1
	default:
		// Only A has a number.
		return 0
	}
}

func documentedOnDefaultLine(v sets.View) int {
	switch v.(type) {
	case sets.A:
		return 1
	default: // the others have none
	}
	return 0
}

func commentAfterDefaultDoesNotCount(v sets.View) int {
	switch v.(type) { // want `its default has no comment`
	default:
		return 0
	case sets.A:
		// This comment belongs to case A.
		return 1
	}
}

func byInterface(v sets.View) string {
	switch t := v.(type) {
	case sets.Titled:
		return t.Title()
	case *sets.C:
		return "c"
	}
	return ""
}

func open(o sets.Open) int {
	switch o.(type) {
	case sets.N:
		return 1
	}
	return 0
}

func anyValue(x any) int {
	switch x.(type) {
	case sets.A:
		return 1
	}
	return 0
}

func colors(c sets.Color) string {
	switch c { // want `switch over sets.Color misses sets.Blue`
	case sets.Red:
		return "red"
	case sets.Green:
		return "green"
	}
	return ""
}

func colorsByAlias(c sets.Color) string {
	switch c {
	case sets.Crimson, sets.Green, sets.Blue:
		return "some"
	}
	return ""
}

func colorsByLiteral(c sets.Color) string {
	switch c {
	case 0, 1, 2:
		return "some"
	}
	return ""
}

func words(w sets.Word) bool {
	switch w { // want `switch over sets.Word misses sets.No, and its default`
	case sets.Yes:
		return true
	default:
		return false
	}
}

func tagless(c sets.Color) bool {
	switch {
	case c == sets.Red:
		return true
	}
	return false
}

func points(p sets.Point) bool {
	switch p {
	case sets.Point{X: 1}:
		return true
	}
	return false
}

func notOurs(k reflect.Kind) bool {
	switch k {
	case reflect.Int:
		return true
	}
	return false
}
