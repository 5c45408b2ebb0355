//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestGitProtected: a command in a project that is a git repository may
// write its files and git's own (objects, refs, the index), but not the
// hooks folder or the config, which the user's git runs outside the
// sandbox later; a missing hooks folder is made first, so it cannot be
// made and filled. Found from a folder below the top, and through a
// linked worktree's .git file.
func TestGitProtected(t *testing.T) {
	needNamespaces(t)
	needLandlock(t, 1)
	dir := t.TempDir()
	for _, d := range []string{".git/objects", ".git/refs", "sub"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	got := GitProtected(filepath.Join(dir, "sub"))
	if want := []string{filepath.Join(real, ".git", "hooks"), filepath.Join(real, ".git", "config")}; !slices.Equal(got, want) {
		t.Fatalf("GitProtected = %q, want %q", got, want)
	}
	pol := Policy{Project: dir, TempDir: t.TempDir(), Protected: got}
	out, ws := run(t, pol, dir, `echo x > file && echo o > .git/objects/o && echo i > .git/index && echo ok;
		(echo x > .git/hooks/pre-commit) 2>/dev/null && echo HOOK; (echo x >> .git/config) 2>/dev/null && echo CONFIG;
		mv .git/config .git/c 2>/dev/null && echo MOVED; rmdir .git/hooks 2>/dev/null && echo RMDIR; true`)
	if ws.ExitStatus() != 0 || strings.TrimSpace(out) != "ok" {
		t.Errorf("output %q (status %v), want only ok", out, ws)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf("config %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("a hook was written")
	}
	// A linked worktree: its own git folder and the common one.
	wt := t.TempDir()
	linked := filepath.Join(dir, ".git", "worktrees", "w")
	if err := os.MkdirAll(linked, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(linked, "commondir"), []byte("../..\n"), 0o644)
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+linked+"\n"), 0o644)
	got = GitProtected(wt)
	for _, want := range []string{filepath.Join(real, ".git", "worktrees", "w", "hooks"), filepath.Join(real, ".git", "hooks"), filepath.Join(real, ".git", "config")} {
		if !slices.Contains(got, want) {
			t.Errorf("worktree: GitProtected = %q, lacks %q", got, want)
		}
	}
	// Reached through a symlink from outside the repository: git walks
	// up from the real path, and so does the protection.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(dir, "sub"), link); err != nil {
		t.Fatal(err)
	}
	if got := GitProtected(link); !slices.Contains(got, filepath.Join(real, ".git", "config")) {
		t.Errorf("through a symlink: GitProtected = %q", got)
	}
	if got := GitProtected(t.TempDir()); len(got) != 0 {
		t.Errorf("no repository: %q", got)
	}
}

// TestGitProtectedCommit: with the hooks and config protected, the
// model's ordinary git still works in the sandbox: add and commit; git
// config, which would write the protected file, fails.
func TestGitProtectedCommit(t *testing.T) {
	needNamespaces(t)
	needLandlock(t, 1)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	pol := Policy{Project: dir, TempDir: t.TempDir(), Protected: GitProtected(dir)}
	out, ws := run(t, pol, dir, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
		echo a > a.txt && git add a.txt && git -c user.name=T -c user.email=t@example.com -c commit.gpgSign=false commit -qm first && git log --format=%s
		git config core.fsmonitor evil 2>/dev/null && echo CONFIGURED; true`)
	if ws.ExitStatus() != 0 || strings.TrimSpace(out) != "first" {
		t.Errorf("output %q (status %v), want the commit's subject only", out, ws)
	}
}

// TestGitProtectedManyModules: past maxProtectedModules submodules (a
// command can make thousands) the modules folder is protected whole,
// not two mounts a submodule.
func TestGitProtectedManyModules(t *testing.T) {
	dir := t.TempDir()
	for i := range maxProtectedModules + 1 {
		if err := os.MkdirAll(filepath.Join(dir, ".git", "modules", "m"+strconv.Itoa(i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, ".git", "config"), []byte("[core]\n"), 0o644)
	real, _ := filepath.EvalSymlinks(dir)
	got := GitProtected(dir)
	if want := []string{filepath.Join(real, ".git", "hooks"), filepath.Join(real, ".git", "config"), filepath.Join(real, ".git", "modules")}; !slices.Equal(got, want) {
		t.Errorf("GitProtected = %q, want %q", got, want)
	}
}
