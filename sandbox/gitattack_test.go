//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// plantedRan runs the user's own git (outside the sandbox) in dir and
// returns whether the code a command planted ran (it touches marker).
func plantedRan(t *testing.T, dir, marker string) bool {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	cmd.CombinedOutput()
	_, err := os.Stat(marker)
	return err == nil
}

// TestGitSwapped: a command cannot swap the repository's .git for one of
// its own, whose config the user's git would then run: not by moving it
// away and making a new one, nor by a symlink or a ".git" file in its
// place, nor by rewriting a linked worktree's ".git" file. Found by the
// attack review: each planted a core.fsmonitor the user's git status ran.
func TestGitSwapped(t *testing.T) {
	needNamespaces(t)
	needLandlock(t, 1)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	const evil = `mkdir -p evil && cp -r .git2/objects .git2/refs .git2/HEAD evil/ && printf '[core]\n\tfsmonitor = "touch MARKER; false"\n' > evil/config`
	for name, script := range map[string]string{
		"renamed": `mv .git .git2; mkdir .git && cp -r .git2/objects .git2/refs .git2/HEAD .git/ &&
			printf '[core]\n\tfsmonitor = "touch MARKER; false"\n' > .git/config`,
		"symlink":  `mv .git .git2; rm -rf .git; ` + evil + ` && ln -s evil .git`,
		"git file": `mv .git .git2; rm -rf .git; ` + evil + ` && echo "gitdir: evil" > .git`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			marker := filepath.Join(t.TempDir(), "ran")
			pol := Policy{Project: dir, TempDir: t.TempDir(), Protected: GitProtected(dir), Pinned: GitPinned(dir)}
			out, _ := run(t, pol, dir, strings.ReplaceAll(script, "MARKER", marker))
			if plantedRan(t, dir, marker) {
				t.Errorf("the user's git ran what the command planted; its output:\n%s", out)
			}
		})
	}
	t.Run("worktree file", func(t *testing.T) {
		main := t.TempDir()
		wt := filepath.Join(t.TempDir(), "wt")
		for _, args := range [][]string{{"init", "-q", main}, {"-C", main, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "a"}, {"-C", main, "worktree", "add", "-q", wt}} {
			if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
				t.Fatalf("git %q: %v %s", args, err, out)
			}
		}
		marker := filepath.Join(t.TempDir(), "ran")
		pol := Policy{Project: wt, TempDir: t.TempDir(), Protected: GitProtected(wt), Pinned: GitPinned(wt)}
		script := `mkdir -p evil && cp -r ` + main + `/.git/objects ` + main + `/.git/refs ` + main + `/.git/HEAD evil/ && printf '[core]\n\tfsmonitor = "touch MARKER; false"\n' > evil/config; echo "gitdir: evil" > .git; rm -f .git; echo "gitdir: evil" > .git`
		out, _ := run(t, pol, wt, strings.ReplaceAll(script, "MARKER", marker))
		if plantedRan(t, wt, marker) {
			t.Errorf("the user's git ran what the command planted; its output:\n%s", out)
		}
	})
}

// TestGitPinnedWork: with .git pinned and its hooks and config read-only,
// the model's ordinary git still works: commit, stash, rebase, a branch
// switch and worktree add (which writes .git/worktrees).
func TestGitPinnedWork(t *testing.T) {
	needNamespaces(t)
	needLandlock(t, 1)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "-b", "main", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	pol := Policy{Project: dir, TempDir: t.TempDir(), Protected: GitProtected(dir), Pinned: GitPinned(dir)}
	out, ws := run(t, pol, dir, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@e
		set -e; echo a > a && git add a && git commit -qm one && git checkout -qb side && echo b > b && git add b && git commit -qm two
		git checkout -q main && echo c > c && git add c && git commit -qm three && echo d >> a && git stash -q && git stash pop -q
		git checkout -q -- a && git rebase -q main side && git worktree add -q "$TMPDIR/w" main 2>&1 | grep -v Preparing || true
		git log --format=%s | tr '\n' ' '`)
	if ws.ExitStatus() != 0 || strings.TrimSpace(out) != "two three one" {
		t.Errorf("output %q (status %v), want the rebased log", out, ws)
	}
}

// TestGitProtectedOddDotGit: a ".git" that is a fifo, or a symlink to an
// endless device, names no repository, and GitProtected returns at once
// instead of waiting on it (a command can make one in a project that is
// no repository; every later command's start waited for ever).
func TestGitProtectedOddDotGit(t *testing.T) {
	for _, odd := range []string{"fifo", "zero"} {
		dir := t.TempDir()
		dot := filepath.Join(dir, ".git")
		var err error
		if odd == "fifo" {
			err = syscall.Mkfifo(dot, 0o600)
		} else {
			err = os.Symlink("/dev/zero", dot)
		}
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan []string)
		go func() { done <- GitProtected(dir) }()
		select {
		case got := <-done:
			if len(got) != 0 {
				t.Errorf("%s: GitProtected = %q", odd, got)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: GitProtected is still reading the .git", odd)
		}
	}
}
