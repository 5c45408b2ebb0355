package acptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// built holds the programs Build made in this test process: one
// temporary directory, and per package path the binary or the error.
var built struct {
	mu   sync.Mutex
	dir  string
	bins map[string]builtBin
}

type builtBin struct {
	path string
	err  error
}

// Build returns the path of the program of pkg (a package path relative
// to the repository root, e.g. "./toolmcp/testdata/mcpserver"), built
// with `go build` once per test process and shared by every test that
// asks; a failed build fails each of them with go's output. RemoveBuilt
// deletes what it built.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	built.mu.Lock()
	defer built.mu.Unlock()
	b, ok := built.bins[pkg]
	if !ok {
		b = build(t, pkg)
		if built.bins == nil {
			built.bins = map[string]builtBin{}
		}
		built.bins[pkg] = b
	}
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func build(t testing.TB, pkg string) builtBin {
	if built.dir == "" {
		dir, err := os.MkdirTemp("", "acptest-build")
		if err != nil {
			return builtBin{err: err}
		}
		built.dir = dir
	}
	out := filepath.Join(built.dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = RepoRoot(t)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return builtBin{err: fmt.Errorf("building %s: %v\n%s", pkg, err, msg)}
	}
	return builtBin{path: out}
}

// RemoveBuilt deletes the programs Build made; a TestMain calls it after
// m.Run.
func RemoveBuilt() {
	built.mu.Lock()
	defer built.mu.Unlock()
	if built.dir != "" {
		os.RemoveAll(built.dir)
		built.dir, built.bins = "", nil
	}
}
