package checkpoint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/agentcmd"
	"github.com/dsh-acp/dsh-acp/internal/gittest"
	"github.com/dsh-acp/dsh-acp/session"
)

// git runs the user's git in dir for a test's setup and checks.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gittest.Git(t, dir, args...)
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRepo makes a repository with a commit, a staged change, a stash
// and an ignored file.
func newRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	write(t, filepath.Join(dir, "edit.txt"), "one\ntwo\nthree\n")
	write(t, filepath.Join(dir, "gone.txt"), "bye\n")
	write(t, filepath.Join(dir, "sed.txt"), "DEBUG\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "first")
	write(t, filepath.Join(dir, "stashed.txt"), "s\n")
	git(t, dir, "add", "stashed.txt")
	git(t, dir, "stash", "-q")
	write(t, filepath.Join(dir, "staged.txt"), "staged\n")
	git(t, dir, "add", "staged.txt")
	write(t, filepath.Join(dir, "untracked.txt"), "u\n")
	write(t, filepath.Join(dir, "x.log"), "ignored\n")
	return dir
}

// userState is what the user's git shows, without writing anything:
// the staged entries, stash, branches and HEAD's reflog.
func userState(t *testing.T, dir string) string {
	return git(t, dir, "ls-files", "--stage") + "|" + git(t, dir, "stash", "list") + "|" + git(t, dir, "branch", "-a") + "|" +
		git(t, dir, "reflog") + "|" + git(t, dir, "for-each-ref", "refs/heads", "refs/tags", "refs/stash")
}

// indexBytes is the user's index file.
func indexBytes(t *testing.T, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGitTurnChanges(t *testing.T) {
	dir := newRepo(t)
	ctx := context.Background()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := New(sub, "sess_1", t.TempDir(), agentcmd.Runner{}) // found from a subfolder
	before, idx := userState(t, dir), indexBytes(t, dir)
	tr.Before(ctx, 1, nil)
	if indexBytes(t, dir) != idx {
		t.Error("the checkpoint wrote the user's index")
	}
	// The checkpoint leaves the user's state alone; a change after it
	// shows in the card.
	write(t, filepath.Join(dir, "edit.txt"), "one\nTWO\nthree\n")
	write(t, filepath.Join(dir, "new.txt"), "a\nb\n")
	write(t, filepath.Join(dir, "sed.txt"), "RELEASE\n")
	write(t, filepath.Join(dir, "y.log"), "ignored\n")
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	statusMid := git(t, dir, "status", "--porcelain")
	idx = indexBytes(t, dir)
	d := tr.End(ctx, 1)
	if indexBytes(t, dir) != idx {
		t.Error("the end of the turn wrote the user's index")
	}
	if d == nil {
		t.Fatal("no changes")
	}
	got := map[string]session.ChangedFile{}
	for _, f := range d.Files {
		got[filepath.Base(f.Path)] = f
	}
	if len(d.Files) != 4 || got["edit.txt"].Status != session.FileModified || got["new.txt"].Status != session.FileCreated ||
		got["gone.txt"].Status != session.FileDeleted || got["sed.txt"].Status != session.FileModified {
		t.Fatalf("files %+v", d.Files)
	}
	if e := got["edit.txt"]; len(e.Diffs) != 1 || *e.Diffs[0].OldText != "one\ntwo\nthree" || e.Diffs[0].NewText != "one\nTWO\nthree" || e.Line != 2 || e.Path != filepath.Join(dir, "edit.txt") {
		t.Errorf("edit.txt %+v", e)
	}
	if d.Added != 1+2+1 || d.Removed != 1+1+1 {
		t.Errorf("+%d -%d", d.Added, d.Removed)
	}
	after := userState(t, dir)
	if before != after || statusMid != git(t, dir, "status", "--porcelain") {
		t.Errorf("the user's git state changed:\n%s\n---\n%s", before, after)
	}
	if refs := git(t, dir, "for-each-ref", RefPrefix); !strings.Contains(refs, RefPrefix+"sess_1/1") {
		t.Errorf("refs %q", refs)
	}
	// A turn that changes nothing: no card, no ref.
	tr.Before(ctx, 2, nil)
	if d := tr.End(ctx, 2); d != nil {
		t.Errorf("turn 2 changes %+v", d)
	}
	if refs := git(t, dir, "for-each-ref", RefPrefix); strings.Contains(refs, "sess_1/2") {
		t.Errorf("refs %q", refs)
	}
	if err := tr.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if refs := git(t, dir, "for-each-ref", RefPrefix); refs != "" {
		t.Errorf("refs after Remove %q", refs)
	}
}

func TestGitLinkedWorktree(t *testing.T) {
	dir := newRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, dir, "worktree", "add", "-q", "-b", "side", wt)
	ctx := context.Background()
	tr := New(wt, "sess_w", t.TempDir(), agentcmd.Runner{})
	tr.Before(ctx, 1, nil)
	write(t, filepath.Join(wt, "edit.txt"), "changed\n")
	d := tr.End(ctx, 1)
	if d == nil || len(d.Files) != 1 || d.Files[0].Path != filepath.Join(wt, "edit.txt") {
		t.Fatalf("changes %+v", d)
	}
	if git(t, wt, "status", "--porcelain") != " M edit.txt\n" {
		t.Errorf("worktree status %q", git(t, wt, "status", "--porcelain"))
	}
}

func TestDirTurnChanges(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "edit.txt"), "one\ntwo\n")
	write(t, filepath.Join(dir, "sed.txt"), "DEBUG\n")
	write(t, filepath.Join(dir, "gone.txt"), "bye\n")
	write(t, filepath.Join(dir, ".ignore"), "*.log\n")
	ctx := context.Background()
	state := t.TempDir()
	tr := New(dir, "sess_d", state, agentcmd.Runner{})
	tr.Before(ctx, 1, []string{filepath.Join(dir, "edit.txt"), filepath.Join(dir, "tool-new.txt")})
	write(t, filepath.Join(dir, "edit.txt"), "one\nTWO\n")
	write(t, filepath.Join(dir, "tool-new.txt"), "t\n")
	tr.Before(ctx, 1, nil)
	write(t, filepath.Join(dir, "sed.txt"), "RELEASE, longer\n")
	write(t, filepath.Join(dir, "cmd-new.txt"), "c\n")
	write(t, filepath.Join(dir, "z.log"), "ignored\n")
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	d := tr.End(ctx, 1)
	if d == nil {
		t.Fatal("no changes")
	}
	got := map[string]session.ChangedFile{}
	for _, f := range d.Files {
		got[filepath.Base(f.Path)] = f
	}
	if len(d.Files) != 5 {
		t.Fatalf("files %+v", d.Files)
	}
	if e := got["edit.txt"]; e.Status != session.FileModified || len(e.Diffs) != 1 || e.Note != "" {
		t.Errorf("edit.txt %+v", e)
	}
	for _, n := range []string{"tool-new.txt", "cmd-new.txt"} {
		if e := got[n]; e.Status != session.FileCreated || len(e.Diffs) != 1 {
			t.Errorf("%s %+v", n, e)
		}
	}
	if e := got["sed.txt"]; e.Status != session.FileModified || e.Note != noCopyNote || len(e.Diffs) != 0 {
		t.Errorf("sed.txt %+v", e)
	}
	if e := got["gone.txt"]; e.Status != session.FileDeleted || e.Note != noCopyNote {
		t.Errorf("gone.txt %+v", e)
	}
	if err := tr.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(state, "checkpoints", "sess_d")); !os.IsNotExist(err) {
		t.Errorf("state left: %v", err)
	}
}

// TestMayBeInRepo: a folder with a ".git" (a folder or a linked
// worktree's file) in it or above it may be in a work tree, also when
// reached through a symlink; one without is not, and git is not asked.
func TestMayBeInRepo(t *testing.T) {
	base := t.TempDir()
	repo, wt, plain := filepath.Join(base, "repo"), filepath.Join(base, "wt"), filepath.Join(base, "plain")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, "a", "b"), wt, filepath.Join(plain, "c")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(wt, ".git"), "gitdir: /elsewhere\n")
	link := filepath.Join(plain, "into-repo")
	if err := os.Symlink(filepath.Join(repo, "a"), link); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]bool{
		repo: true, filepath.Join(repo, "a", "b"): true, wt: true, link: true,
		plain: false, filepath.Join(plain, "c"): false,
	} {
		if got := mayBeInRepo(dir); got != want {
			t.Errorf("mayBeInRepo(%s) = %v, want %v", dir, got, want)
		}
	}
}
