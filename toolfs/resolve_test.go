package toolfs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/tools"
)

// rigDeep makes the layout: the session cwd root/proj holds
// a/b and a link deep -> a/b; X exists both as proj/X and root/X.
func rigDeep(t *testing.T) (e *env, outside string) {
	t.Helper()
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	e = newEnv(t)
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(filepath.Join(proj, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.dir = proj
	e.sess = tools.NewSession("s1", proj)
	if err := os.Symlink("a/b", filepath.Join(proj, "deep")); err != nil {
		t.Fatal(err)
	}
	e.put("X", "inside\n")
	outside = filepath.Join(root, "X")
	if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return e, outside
}

// Issue 12: `deep/../../X` is proj/X to the kernel and to the permission
// check (deep is a/b, then ..); the tools open exactly that file, never
// root/X (which cleaning ".." as text would give), and name the real
// path.
func TestAttackSymlinkDotDotToolsOpenWhatWasJudged(t *testing.T) {
	e, outside := rigDeep(t)
	const p = "deep/../../X"
	want := e.path("X")
	if got := permission.Resolve(e.dir, p); got != want {
		t.Fatalf("the check judges %s, want %s", got, want)
	}
	r := e.ok("read", map[string]any{"file_path": p})
	if body := text(r); !strings.Contains(body, "inside") || strings.Contains(body, "outside") || !strings.Contains(body, "<path>"+want+"</path>") {
		t.Errorf("read %s: %q, want proj/X by its real path", p, body)
	}
	e.ok("edit", map[string]any{"file_path": p, "old_string": "inside", "new_string": "edited"})
	e.ok("read", map[string]any{"file_path": p})
	e.ok("write", map[string]any{"file_path": p, "content": "written\n"})
	if got := e.get("X"); got != "written\n" {
		t.Errorf("proj/X = %q", got)
	}
	if b, _ := os.ReadFile(outside); string(b) != "outside\n" {
		t.Errorf("the file outside changed: %q", b)
	}
	// One more ".." leaves the project: the check calls it outside, and a
	// tool the user let run opens that same real path.
	if permission.Inside(e.dir, permission.Resolve(e.dir, "deep/../../../X")) {
		t.Fatal("deep/../../../X judged inside")
	}
	r = e.ok("read", map[string]any{"file_path": "deep/../../../X"})
	if !strings.Contains(text(r), "outside") || !strings.Contains(text(r), "<path>"+outside+"</path>") {
		t.Errorf("read deep/../../../X: %q, want %s by its real path", text(r), outside)
	}
	assertNoTemp(t, filepath.Dir(e.dir))
}

// A symlink whose target lies inside the project is followed, absolute
// or relative; opened beneath the root.
func TestSymlinkInsideFollowed(t *testing.T) {
	e, _ := rigDeep(t)
	e.put("a/b/real.txt", "real\n")
	if err := os.Symlink(e.path("a/b/real.txt"), e.path("abs.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a/b/real.txt", e.path("rel.txt")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"abs.txt", "rel.txt", "deep/real.txt"} {
		f, err := resolve(e.dir, p)
		if err != nil {
			t.Fatal(err)
		}
		if f.root != e.dir || f.name != "a/b/real.txt" {
			t.Errorf("%s: root %q name %q, want beneath %s as a/b/real.txt", p, f.root, f.name, e.dir)
		}
		if !strings.Contains(text(e.ok("read", map[string]any{"file_path": p})), "real") {
			t.Errorf("read %s did not follow the link", p)
		}
	}
}

// A path resolved inside whose directory is swapped for a symlink to the
// outside before it is used (a command racing the tool) fails to open
// beneath the root instead of writing outside.
func TestRootRefusesSwappedPath(t *testing.T) {
	e, _ := rigDeep(t)
	e.put("sub/f.txt", "in\n")
	f, err := resolve(e.dir, "sub/f.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "f.txt"), []byte("out\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(e.path("sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, e.path("sub")); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(out, "f.txt"))
	if err := f.writeAtomic(context.Background(), []byte("pwned\n"), fi); err == nil {
		t.Error("wrote through a symlink swapped in after the check")
	}
	if _, err := f.readFile(); err == nil {
		t.Error("read through a symlink swapped in after the check")
	}
	if b, _ := os.ReadFile(filepath.Join(out, "f.txt")); string(b) != "out\n" {
		t.Errorf("the outside file changed: %q", b)
	}
	assertNoTemp(t, out)
}
