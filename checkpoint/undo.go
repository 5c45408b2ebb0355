package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dsh-acp/dsh-acp/session"
)

// ErrNoCheckpoint says a turn's checkpoint is not kept (pruned, removed,
// or taken by another process outside git).
var ErrNoCheckpoint = errors.New("no checkpoint of that turn is kept")

// UndoPlan is what undoing a turn would do: the change it applies (the
// files back to before the turn, as a card's diffs: the turn's state as
// the old side), and the files it leaves as they are, each "path:
// reason".
type UndoPlan struct {
	Turn    int
	Changes *session.TurnChanges
	Skipped []string
	steps   []undoStep
}

// undoStep puts one file back: its content and mode before the turn, or
// its removal (a file the turn created).
type undoStep struct {
	path    string
	content []byte
	mode    fs.FileMode
	remove  bool
}

// Writer writes a restored file, rel below root (the work tree: the
// kernel refuses a path that leaves it, a symlink swapped in included):
// through the editor when it offers writes (so its buffers follow),
// else to disk through root.
type Writer func(ctx context.Context, root *os.Root, rel string, content []byte, mode fs.FileMode) error

// skipChanged is the reason a file changed since the turn is left alone.
func skipChanged(turn int) string {
	return "changed since turn " + strconv.Itoa(turn) + ", left as it is"
}

// PlanUndo plans undoing turn: every file the turn changed goes back to
// its state before the turn, unless it changed since (then it is
// skipped) or, outside git, no earlier copy of it was kept. Errors:
// ErrNoCheckpoint, git failures.
func (t *Tracker) PlanUndo(ctx context.Context, turn int) (*UndoPlan, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.probe(ctx)
	if t.repo != nil {
		return t.planGit(ctx, turn)
	}
	d := t.done[turn]
	if d == nil && t.stateDir != "" {
		// Recorded by an earlier process of the session.
		d = loadDirTurn(filepath.Join(t.stateDir, "checkpoints", t.session, strconv.Itoa(turn)))
	}
	if d == nil {
		return nil, ErrNoCheckpoint
	}
	return d.planUndo(turn), nil
}

// planGit compares the work tree with the turn's after-commit and plans
// the files back to its parent (the checkpoint).
func (t *Tracker) planGit(ctx context.Context, turn int) (*UndoPlan, error) {
	if err := t.repo.refresh(ctx); err != nil {
		return nil, err
	}
	after := t.refName(turn)
	if _, err := t.repo.git(ctx, nil, "rev-parse", "--verify", "--quiet", after+"^{commit}"); err != nil {
		return nil, ErrNoCheckpoint
	}
	cs, err := t.repo.diffTrees(ctx, after+"^", after)
	if err != nil {
		return nil, err
	}
	plan := &UndoPlan{Turn: turn}
	var fcs []fileChange
	for _, c := range cs {
		path := filepath.Join(t.repo.top, filepath.FromSlash(c.path))
		cur, err := t.repo.hashFile(ctx, path)
		if (err != nil) != (c.newBlob == "") || (err == nil && cur != c.newBlob) {
			plan.Skipped = append(plan.Skipped, path+": "+skipChanged(turn))
			continue
		}
		st := undoStep{path: path, remove: c.oldBlob == "", mode: fs.FileMode(c.oldMode & 0o777)}
		fc := fileChange{path: path, oldOK: c.newBlob != "", newOK: c.oldBlob != ""}
		if !st.remove {
			b, err := t.repo.git(ctx, nil, "cat-file", "--filters", after+"^:"+c.path)
			if err != nil {
				plan.Skipped = append(plan.Skipped, path+": its earlier content could not be read")
				continue
			}
			st.content, fc.new = b, b
		}
		if fc.oldOK {
			fc.old, _ = os.ReadFile(path)
		}
		plan.steps = append(plan.steps, st)
		fcs = append(fcs, fc)
	}
	plan.Changes = changesOf(turn, fcs)
	return plan, nil
}

// ApplyUndo carries plan out: each file is written with write (or
// removed), and the files that could not be are added to the skipped
// ones. It returns the restored files and the skipped ones ("path:
// reason"). In git the turn's checkpoint is then removed.
func (t *Tracker) ApplyUndo(ctx context.Context, plan *UndoPlan, write Writer) (restored, skipped []string) {
	skipped = append(skipped, plan.Skipped...)
	t.mu.Lock()
	root := t.cwd
	if t.repo != nil {
		root = t.repo.top
	}
	t.mu.Unlock()
	r, err := os.OpenRoot(root)
	if err != nil {
		for _, st := range plan.steps {
			skipped = append(skipped, st.path+": "+strings.TrimSpace(err.Error()))
		}
		return restored, skipped
	}
	defer r.Close()
	for _, st := range plan.steps {
		if err := st.apply(ctx, r, write); err != nil {
			skipped = append(skipped, st.path+": "+strings.TrimSpace(err.Error()))
			continue
		}
		restored = append(restored, st.path)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.repo != nil {
		_ = t.repo.deleteRef(ctx, t.refName(plan.Turn))
	}
	delete(t.done, plan.Turn)
	if t.repo == nil && t.stateDir != "" {
		_ = removeDirState(filepath.Join(t.stateDir, "checkpoints", t.session, strconv.Itoa(plan.Turn)))
	}
	return restored, skipped
}

// apply writes (or removes) st's file below root with write, unless a
// symlink is on its way: the check names the case, root makes the kernel
// hold to it (a link swapped in after the check cannot lead out).
func (st undoStep) apply(ctx context.Context, root *os.Root, write Writer) error {
	if err := throughSymlink(root.Name(), st.path); err != nil {
		return err
	}
	rel, _ := filepath.Rel(root.Name(), st.path) // below root: throughSymlink checked
	if st.remove {
		if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		return err
	}
	return write(ctx, root, rel, st.content, st.mode)
}

// errSymlinkOnWay says a file to restore is, or is reached through, a
// symlink: the write would land where the link leads (a command may have
// made it lead out of the project), not at the path the plan shows.
var errSymlinkOnWay = errors.New("a symlink is on its way now, left as it is")

// throughSymlink returns errSymlinkOnWay when path, or a folder between
// root and path, is a symlink (folders not there yet are created by the
// undo itself), and an error for a path not below root.
func throughSymlink(root, path string) error {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("not below %s, left as it is", root)
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return errSymlinkOnWay
		}
	}
	return nil
}

// afterSum is what the end of a turn saw of a file with a before-image:
// whether it existed and its content's hash.
type afterSum struct {
	exists bool
	sum    [32]byte
}

// recordAfter notes, at the end of the turn, the state of every file
// with a before-image (what a later undo checks nobody changed since).
func (d *dirTurn) recordAfter() {
	d.after = map[string]afterSum{}
	for p := range d.images {
		b, err := os.ReadFile(p)
		d.after[p] = afterSum{exists: err == nil, sum: sha256.Sum256(b)}
	}
}

// planUndo plans putting the files with before-images back; the files
// commands changed are skipped (no earlier copy).
func (d *dirTurn) planUndo(turn int) *UndoPlan {
	plan := &UndoPlan{Turn: turn}
	var fcs []fileChange
	for p, im := range d.images {
		b, err := os.ReadFile(p)
		now := afterSum{exists: err == nil, sum: sha256.Sum256(b)}
		was, ok := d.after[p]
		switch {
		case !ok:
			continue
		case now != was:
			plan.Skipped = append(plan.Skipped, p+": "+skipChanged(turn))
			continue
		case !im.existed && !now.exists:
			continue
		case im.existed && im.copy == "":
			plan.Skipped = append(plan.Skipped, p+": no earlier copy was kept")
			continue
		}
		st := undoStep{path: p, remove: !im.existed, mode: im.mode}
		fc := fileChange{path: p, old: b, oldOK: now.exists, newOK: im.existed}
		if im.existed {
			old, err := os.ReadFile(im.copy)
			if err != nil {
				plan.Skipped = append(plan.Skipped, p+": its earlier copy could not be read")
				continue
			}
			if now.exists && bytes.Equal(old, b) {
				continue
			}
			st.content, fc.new = old, old
		}
		plan.steps = append(plan.steps, st)
		fcs = append(fcs, fc)
	}
	for _, p := range d.commandChanged {
		plan.Skipped = append(plan.Skipped, p+": changed by a command; no earlier copy was kept")
	}
	plan.Changes = changesOf(turn, fcs)
	return plan
}
