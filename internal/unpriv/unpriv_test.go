package unpriv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunBindsPermissions: the child runs without root, in its own
// process, with HOME and TMPDIR it may write, and a file without write
// permission cannot be written there: the thing the package exists for.
func TestRunBindsPermissions(t *testing.T) {
	if InChild(t) {
		p := filepath.Join(t.TempDir(), "ro.txt")
		if err := os.WriteFile(p, []byte("old\n"), 0o444); err != nil {
			t.Fatal(err)
		}
		err := os.WriteFile(p, []byte("new\n"), 0o444)
		fmt.Printf("CHILD uid=%d pid=%d home=%s denied=%v env=%s\n", os.Geteuid(), os.Getpid(), os.Getenv("HOME"), errors.Is(err, fs.ErrPermission), os.Getenv("UNPRIV_EXTRA"))
		return
	}
	out := Run(t, "UNPRIV_EXTRA=passed")
	wantUID := os.Geteuid()
	if wantUID == 0 {
		wantUID = UID
	}
	if !strings.Contains(out, fmt.Sprintf("CHILD uid=%d ", wantUID)) || !strings.Contains(out, " denied=true env=passed") {
		t.Fatalf("child output:\n%s", out)
	}
	if strings.Contains(out, fmt.Sprintf(" pid=%d ", os.Getpid())) {
		t.Fatal("the child ran in the parent's process")
	}
}

// TestRunSubtest: a subtest's name, with characters special in a
// pattern, selects exactly that subtest in the child.
func TestRunSubtest(t *testing.T) {
	for _, name := range []string{"a+b", "a"} {
		t.Run(name, func(t *testing.T) {
			if InChild(t) {
				fmt.Println("CHILD ran " + t.Name())
				return
			}
			out := Run(t)
			if strings.Count(out, "CHILD ran ") != 1 || !strings.Contains(out, "CHILD ran "+t.Name()+"\n") {
				t.Fatalf("child output:\n%s", out)
			}
		})
	}
}

func TestRunPattern(t *testing.T) {
	if got := runPattern("TestA/b+c"); got != `^TestA$/^b\+c$` {
		t.Fatalf("runPattern = %q", got)
	}
}
