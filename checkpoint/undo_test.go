package checkpoint

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/agentcmd"
)

// diskWriter writes restored files to disk.
func diskWriter(_ context.Context, root *os.Root, rel string, b []byte, mode fs.FileMode) error {
	return root.WriteFile(rel, b, mode)
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// TestGitUndo: undo puts a turn's files back (git status as before the
// turn, the user's index, stash and branches untouched), skips a file
// the user changed since, and a second undo goes one more turn back.
func TestGitUndo(t *testing.T) {
	dir := newRepo(t)
	ctx := context.Background()
	tr := New(dir, "sess_u", t.TempDir(), agentcmd.Runner{})
	status0, state0 := git(t, dir, "status", "--porcelain"), userState(t, dir)

	tr.Before(ctx, 1, nil)
	write(t, filepath.Join(dir, "edit.txt"), "turn one\n")
	if tr.End(ctx, 1) == nil {
		t.Fatal("turn 1 changed nothing")
	}
	status1 := git(t, dir, "status", "--porcelain")
	tr.Before(ctx, 2, nil)
	write(t, filepath.Join(dir, "edit.txt"), "turn two\n")
	write(t, filepath.Join(dir, "new.txt"), "new\n")
	write(t, filepath.Join(dir, "sed.txt"), "RELEASE\n")
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if tr.End(ctx, 2) == nil {
		t.Fatal("turn 2 changed nothing")
	}
	write(t, filepath.Join(dir, "sed.txt"), "the user's\n") // changed since

	plan, err := tr.PlanUndo(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Skipped) != 1 || !strings.HasPrefix(plan.Skipped[0], filepath.Join(dir, "sed.txt")+": changed since turn 2") {
		t.Errorf("skipped %q", plan.Skipped)
	}
	if plan.Changes == nil || len(plan.Changes.Files) != 3 {
		t.Fatalf("plan changes %+v", plan.Changes)
	}
	restored, skipped := tr.ApplyUndo(ctx, plan, diskWriter)
	if len(restored) != 3 || len(skipped) != 1 {
		t.Errorf("restored %q skipped %q", restored, skipped)
	}
	if read(t, filepath.Join(dir, "edit.txt")) != "turn one\n" || read(t, filepath.Join(dir, "gone.txt")) != "bye\n" ||
		read(t, filepath.Join(dir, "sed.txt")) != "the user's\n" {
		t.Errorf("after undo: edit %q gone %q sed %q", read(t, filepath.Join(dir, "edit.txt")), read(t, filepath.Join(dir, "gone.txt")), read(t, filepath.Join(dir, "sed.txt")))
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt still there: %v", err)
	}
	if _, err := tr.PlanUndo(ctx, 2); err != ErrNoCheckpoint {
		t.Errorf("undo of turn 2 again: %v", err)
	}
	// The user's change is undone by hand; turn 1 goes back too.
	write(t, filepath.Join(dir, "sed.txt"), "DEBUG\n")
	if got := git(t, dir, "status", "--porcelain"); got != status1 {
		t.Errorf("status after undoing turn 2 %q, want %q", got, status1)
	}
	plan, err = tr.PlanUndo(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if restored, skipped := tr.ApplyUndo(ctx, plan, diskWriter); len(restored) != 1 || len(skipped) != 0 {
		t.Errorf("turn 1: restored %q skipped %q", restored, skipped)
	}
	if got := git(t, dir, "status", "--porcelain"); got != status0 {
		t.Errorf("status after undoing both %q, want %q", got, status0)
	}
	if got := userState(t, dir); got != state0 {
		t.Errorf("the user's git state changed:\n%s\n---\n%s", state0, got)
	}
}

// TestDirUndo: outside git, undo (also in a later process) restores
// what the tools changed and names what commands changed (no earlier
// copy); the turn's record is then gone.
func TestDirUndo(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "edit.txt"), "one\n")
	write(t, filepath.Join(dir, "sed.txt"), "DEBUG\n")
	ctx := context.Background()
	state := t.TempDir()
	tr := New(dir, "sess_du", state, agentcmd.Runner{})
	tr.Before(ctx, 1, []string{filepath.Join(dir, "edit.txt"), filepath.Join(dir, "new.txt")})
	write(t, filepath.Join(dir, "edit.txt"), "ONE\n")
	write(t, filepath.Join(dir, "new.txt"), "new\n")
	write(t, filepath.Join(dir, "sed.txt"), "RELEASE, longer\n")
	if tr.End(ctx, 1) == nil {
		t.Fatal("no changes")
	}
	// Undone by a later process of the session (its record is on disk).
	tr = New(dir, "sess_du", state, agentcmd.Runner{})
	plan, err := tr.PlanUndo(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	restored, skipped := tr.ApplyUndo(ctx, plan, diskWriter)
	if len(restored) != 2 || len(skipped) != 1 || skipped[0] != filepath.Join(dir, "sed.txt")+": changed by a command; no earlier copy was kept" {
		t.Errorf("restored %q skipped %q", restored, skipped)
	}
	if read(t, filepath.Join(dir, "edit.txt")) != "one\n" {
		t.Errorf("edit.txt %q", read(t, filepath.Join(dir, "edit.txt")))
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt still there: %v", err)
	}
	if _, err := tr.PlanUndo(ctx, 1); err != ErrNoCheckpoint {
		t.Errorf("a second undo of turn 1: %v", err)
	}
}
