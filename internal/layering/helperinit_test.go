package layering

import (
	"slices"
	"strings"
	"testing"
)

// helperStd are the standard packages the sandbox helper's packages may
// import. Go initializes packages in import path order, each after its
// imports, and the helper's init (which becomes the helper process) runs
// only once all its imports have: one more import whose path sorts late
// (strconv, strings, fmt, encoding/json) lets some sixty packages of the
// binary initialize first, about 0.8 ms of CPU per sandboxed command.
var helperStd = []string{"bytes", "errors", "os", "os/signal", "runtime", "syscall", "unsafe"}

// TestHelperImportsEarly: the helper, proctree and decimal import no
// standard package beyond helperStd (their own packages: the rules).
func TestHelperImportsEarly(t *testing.T) {
	root, module := moduleRoot(t)
	imports, err := packageImports(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"sandbox/internal/helper", "sandbox/internal/proctree", "sandbox/internal/decimal"} {
		list, ok := imports[pkg]
		if !ok {
			t.Fatalf("no package %s", pkg)
		}
		for _, imp := range list {
			if !slices.Contains(helperStd, imp) && !strings.HasPrefix(imp, module+"/") {
				t.Errorf("%s imports %s: the helper would start after it and what sorts before it initialize (see helperStd)", pkg, imp)
			}
		}
	}
}
