package checkpoint

import (
	"context"
	"os"
	"path/filepath"
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
	if err := os.RemoveAll(filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if tr.End(ctx, 1) == nil {
		t.Fatal("turn 1 changed nothing")
	}
	plan, err := tr.PlanUndo(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	restored, skipped := tr.ApplyUndo(ctx, plan, diskWriter)
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
	if err := os.RemoveAll(filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if tr.End(ctx, 1) == nil {
		t.Fatal("turn 1 changed nothing")
	}
	plan, err := tr.PlanUndo(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	restored, skipped := tr.ApplyUndo(ctx, plan, diskWriter)
	if _, err := os.Lstat(filepath.Join(outside, "f.sh")); err == nil {
		t.Errorf("undo wrote outside the project through the symlink (restored %q, skipped %q)", restored, skipped)
	}
	if len(restored) != 0 || len(skipped) != 1 || skipped[0] != f+": "+errSymlinkOnWay.Error() {
		t.Errorf("restored %q skipped %q", restored, skipped)
	}
}
