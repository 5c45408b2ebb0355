package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree lists every path under root, relative to it, in order.
func tree(t *testing.T, root string) []string {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(root, p); rel != "." {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEmptyHomeStaysEmpty: initialize and session/new in an empty HOME
// (no XDG variables, the default state dir under it) create nothing but
// the state dir and what is in it: no ~/.cache, no build caches (made
// at a command's first need), nothing in TMPDIR or the session's cwd.
func TestEmptyHomeStaysEmpty(t *testing.T) {
	home, tmp, cwd := t.TempDir(), t.TempDir(), t.TempDir()
	cmd := exec.Command(binary(t))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp, "TERM=dumb"}
	p := startCmd(t, cmd)
	p.send(t, validatorInit)
	p.next(t)
	p.newSession(t, 2, cwd, `[]`)
	p.stdin.Close()
	for l := range p.lines { // the session's commands, after its answer
		if !strings.Contains(string(l), `"method":"session/update"`) {
			t.Errorf("unexpected line %s", l)
		}
	}
	if code, _ := p.wait(t); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
	state := filepath.Join(".local", "state", "dsh-acp")
	got := tree(t, home)
	if !slices.Contains(got, state) {
		t.Errorf("no state dir %s in HOME: %q", state, got)
	}
	for _, rel := range got {
		if rel != ".local" && rel != filepath.Dir(state) && rel != state && !strings.HasPrefix(rel, state+string(filepath.Separator)) {
			t.Errorf("initialize and session/new made %s in HOME", rel)
		}
	}
	for dir, name := range map[string]string{tmp: "TMPDIR", cwd: "the session's cwd"} {
		if got := tree(t, dir); len(got) > 0 {
			t.Errorf("%s holds %q", name, got)
		}
	}
}
