package sets

// D is a member only the tests have: switches in the package need not
// name it.
type D struct{}

func (D) isView() {}

func describeInTest(v View) string {
	switch v.(type) { // want `switch over sets.View misses sets.B, \*sets.C`
	case A, D:
		return "a or d"
	}
	return ""
}
