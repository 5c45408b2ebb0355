package checkpoint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/agentcmd"
)

// TestGitUndoThroughSymlink: a turn that replaces a folder of the
// project with a symlink leading out of it does not make undo write
// (or remove) files outside the project through that symlink.
func TestGitUndoThroughSymlink(t *testing.T) {
	dir := newRepo(t)
	outside := t.TempDir()
	write(t, filepath.Join(dir, "d", "planted.sh"), "echo pwned\n")
	git(t, dir, "add", "d")
	git(t, dir, "commit", "-q", "-m", "d")
	ctx := context.Background()
	tr := New(dir, "sess_s", t.TempDir(), agentcmd.Runner{})

	tr.Before(ctx, 1, nil)
	restored, skipped := undoAfterSwap(t, tr, filepath.Join(dir, "d"), outside)
	if _, err := os.Lstat(filepath.Join(outside, "planted.sh")); err == nil {
		t.Errorf("undo wrote outside the project through the symlink (restored %q, skipped %q)", restored, skipped)
	}
}

// TestDirUndoThroughSymlink: the same outside git, where the turn's
// write had a before-image.
func TestDirUndoThroughSymlink(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	f := filepath.Join(dir, "d", "f.sh")
	write(t, f, "echo pwned\n")
	ctx := context.Background()
	tr := New(dir, "sess_ds", t.TempDir(), agentcmd.Runner{})
	tr.Before(ctx, 1, []string{f})
	write(t, f, "changed\n")
	restored, skipped := undoAfterSwap(t, tr, filepath.Join(dir, "d"), outside)
	if _, err := os.Lstat(filepath.Join(outside, "f.sh")); err == nil {
		t.Errorf("undo wrote outside the project through the symlink (restored %q, skipped %q)", restored, skipped)
	}
	if len(restored) != 0 || len(skipped) != 1 || skipped[0] != f+": "+errSymlinkOnWay.Error() {
		t.Errorf("restored %q skipped %q", restored, skipped)
	}
}

// TestGitUndoForgedRef: a turn's checkpoint ref lives in the project's
// .git, which sandboxed commands may write: a forged checkpoint whose
// trees name "../victim" does not make undo remove (or write) a file
// outside the project.
func TestGitUndoForgedRef(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "proj")
	git(t, parent, "init", "-q", "-b", "main", "proj")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "first")
	victim := filepath.Join(parent, "victim.txt")
	write(t, victim, "precious\n")
	ctx := context.Background()
	tr := New(dir, "sess_f", t.TempDir(), agentcmd.Runner{})
	tr.Before(ctx, 1, nil)
	write(t, filepath.Join(dir, "a.txt"), "b\n")
	if tr.End(ctx, 1) == nil {
		t.Fatal("turn 1 changed nothing")
	}
	// The forgery: the turn "created" ../victim.txt with its content.
	gitIn := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=T", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	blob := gitIn("precious\n", "hash-object", "-w", "--stdin")
	up := gitIn("100644 blob "+blob+"\tvictim.txt\n", "mktree")
	after := gitIn("040000 tree "+up+"\t..\n", "mktree")
	empty := gitIn("", "mktree")
	base := gitIn("", "commit-tree", empty, "-m", "before")
	forged := gitIn("", "commit-tree", after, "-p", base, "-m", "after")
	gitIn("", "update-ref", RefPrefix+"sess_f/1", forged)

	plan, err := tr.PlanUndo(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	restored, skipped := tr.ApplyUndo(ctx, plan, diskWriter)
	if read(t, victim) != "precious\n" {
		t.Errorf("undo of a forged checkpoint removed %s (restored %q, skipped %q)", victim, restored, skipped)
	}
}

// TestGitCheckpointSubmoduleFilter: taking a checkpoint of a work tree
// with a changed submodule does not run the filter driver the
// submodule's own configuration defines (git add would look into it,
// and the driver could write the superproject's git folder).
func TestGitCheckpointSubmoduleFilter(t *testing.T) {
	root := t.TempDir()
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	sub, dir := filepath.Join(root, "sub"), filepath.Join(root, "top")
	git(t, root, "init", "-q", "sub")
	write(t, filepath.Join(sub, "a.txt"), "one\n")
	write(t, filepath.Join(sub, ".gitattributes"), "a.txt filter=x\n")
	git(t, sub, "add", ".")
	git(t, sub, "commit", "-q", "-m", "s")
	git(t, root, "init", "-q", "top")
	git(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "../sub", "sub")
	git(t, dir, "commit", "-q", "-m", "t")
	// The superproject's git folder is what the checkpoint's git may
	// write (a hook planted there runs at the user's next commit).
	outside := filepath.Join(dir, ".git")
	git(t, filepath.Join(dir, "sub"), "config", "filter.x.clean", "sh -c 'touch "+filepath.Join(outside, "leak-$$")+"; cat'")
	write(t, filepath.Join(dir, "sub", "a.txt"), "two\n")
	write(t, filepath.Join(dir, "b.txt"), "b\n")

	ctx := context.Background()
	tr := New(dir, "sess_sub", t.TempDir(), agentcmd.Runner{})
	tr.Before(ctx, 1, nil)
	write(t, filepath.Join(dir, "b.txt"), "changed\n")
	ch := tr.End(ctx, 1)
	if leaks, _ := filepath.Glob(filepath.Join(outside, "leak-*")); len(leaks) != 0 {
		t.Fatalf("the submodule's filter ran under the checkpoint's git: %v", leaks)
	}
	if ch == nil || len(ch.Files) != 1 || !strings.HasSuffix(ch.Files[0].Path, "b.txt") {
		t.Errorf("changes %+v", ch)
	}
}

// undoAfterSwap replaces the folder d with a symlink to outside (as a
// command of turn 1 could), ends turn 1 and undoes it.
func undoAfterSwap(t *testing.T, tr *Tracker, d, outside string) (restored, skipped []string) {
	t.Helper()
	ctx := context.Background()
	if err := os.RemoveAll(d); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, d); err != nil {
		t.Fatal(err)
	}
	if tr.End(ctx, 1) == nil {
		t.Fatal("turn 1 changed nothing")
	}
	plan, err := tr.PlanUndo(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	return tr.ApplyUndo(ctx, plan, diskWriter)
}
