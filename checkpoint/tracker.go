package checkpoint

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/dsh-acp/dsh-acp/internal/agentcmd"

	"github.com/dsh-acp/dsh-acp/session"
)

// The bounds of the checkpoints kept.
const (
	// MaxTurns is how many turns' checkpoints a session keeps; making
	// one more removes the oldest.
	MaxTurns = 20
	// MaxAge is how long a checkpoint is kept: older ones of any session
	// of the repository are removed when a checkpoint is made.
	MaxAge = 30 * 24 * time.Hour
	// TakeTimeout bounds taking one checkpoint (a huge work tree): past
	// it the turn has none, and shows no changes card.
	TakeTimeout = 10 * time.Second
)

// Tracker takes the checkpoints of one session's turns and reports what
// each turn changed. In a git work tree a checkpoint is a commit of the
// work tree under RefPrefix (git.go); elsewhere, the before-images of the
// files tools change and a walk of the project's files (dir.go). Safe
// for concurrent use; a session runs one turn at a time.
type Tracker struct {
	cwd, session, stateDir string
	run                    agentcmd.Runner

	mu     sync.Mutex
	probed bool
	repo   *gitRepo // nil outside git
	turn   int      // the turn whose checkpoint was taken, 0 before any
	before string   // git: that checkpoint's commit
	dir    *dirTurn // outside git: that turn's record
	// done holds, outside git, the records of the last MaxTurns turns
	// that changed files (for /undo).
	done map[int]*dirTurn
}

// New returns the tracker of session id working in cwd; stateDir is
// where the before-images of a project outside git are kept ("": none
// are, and files changed outside git are listed without a diff); run
// runs its git (sandboxed, writing only the repository's git folders).
func New(cwd, id, stateDir string, run agentcmd.Runner) *Tracker {
	return &Tracker{cwd: cwd, session: id, stateDir: stateDir, run: run}
}

// probe finds the repository once (t.mu held).
func (t *Tracker) probe(ctx context.Context) {
	if t.probed {
		return
	}
	t.probed = true
	if r, err := findRepo(ctx, t.run, t.cwd); err == nil {
		t.repo = r
	}
}

// indexCache is the path of the session's own git index, kept between
// snapshots in the repository's git folder (which the agent's git may
// write; the state dir is hidden from every command): <git dir>/dsh-acp/
// <session>.index (t.mu held, t.repo set).
func (t *Tracker) indexCache() string {
	return filepath.Join(t.repo.gitDir, "dsh-acp", t.session+".index")
}

// refName is the ref of turn's checkpoint.
func (t *Tracker) refName(turn int) string {
	return RefPrefix + t.session + "/" + strconv.Itoa(turn)
}

// Before is called before a call of turn that may change files runs;
// paths are the files it names (absolute). The first call of a turn
// takes the turn's checkpoint; every call saves the before-images of its
// paths outside git. A failure is logged and leaves the turn without a
// checkpoint (the turn itself goes on).
func (t *Tracker) Before(ctx context.Context, turn int, paths []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.probe(ctx)
	if t.turn != turn {
		t.turn, t.before, t.dir = turn, "", nil
		tctx, cancel := context.WithTimeout(ctx, TakeTimeout)
		err := t.take(tctx, turn)
		cancel()
		if err != nil {
			t.logErr("checkpoint", err)
			return
		}
	}
	if t.dir != nil {
		t.dir.saveBefore(paths)
	}
}

// take makes turn's checkpoint (t.mu held).
func (t *Tracker) take(ctx context.Context, turn int) error {
	if t.repo == nil {
		store := ""
		if t.stateDir != "" {
			store = filepath.Join(t.stateDir, "checkpoints", t.session, strconv.Itoa(turn))
		}
		d, err := newDirTurn(ctx, t.cwd, store)
		t.dir = d
		return err
	}
	if err := t.repo.refresh(ctx); err != nil {
		return err
	}
	commit, _, err := t.repo.snapshot(ctx, "dsh-acp checkpoint before turn "+strconv.Itoa(turn)+" of "+t.session, "", t.indexCache())
	if err != nil {
		return err
	}
	if err := t.repo.updateRef(ctx, t.refName(turn), commit); err != nil {
		return err
	}
	t.before = commit
	t.prune(ctx)
	return nil
}

// End is called when turn ends: it returns what the turn changed since
// its checkpoint, nil when it took none or nothing changed. In git, the
// turn's ref then names a commit of the work tree after the turn whose
// parent is the checkpoint (what /undo compares with).
func (t *Tracker) End(ctx context.Context, turn int) *session.TurnChanges {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.turn != turn {
		return nil
	}
	var fcs []fileChange
	var err error
	switch {
	case t.repo != nil && t.before != "":
		fcs, err = t.endGit(ctx, turn)
	case t.dir != nil:
		fcs, err = t.dir.end(ctx)
		switch {
		case err == nil && len(fcs) > 0:
			t.keepDone(turn, fcs)
		case t.dir.store != "":
			_ = removeDirState(t.dir.store) // nothing to undo
		}
	}
	if err != nil {
		t.logErr("turn changes", err)
		return nil
	}
	return changesOf(turn, fcs)
}

// endGit snapshots the work tree after turn and lists the files that
// differ from the checkpoint; with none, the turn's ref is removed.
func (t *Tracker) endGit(ctx context.Context, turn int) ([]fileChange, error) {
	if err := t.repo.refresh(ctx); err != nil {
		return nil, err
	}
	after, _, err := t.repo.snapshot(ctx, "dsh-acp checkpoint after turn "+strconv.Itoa(turn)+" of "+t.session, t.before, t.indexCache())
	if err != nil {
		return nil, err
	}
	cs, err := t.repo.diffTrees(ctx, t.before, after)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, t.repo.deleteRef(ctx, t.refName(turn))
	}
	if err := t.repo.updateRef(ctx, t.refName(turn), after); err != nil {
		return nil, err
	}
	fcs := make([]fileChange, 0, min(len(cs), MaxFiles))
	for i, c := range cs {
		fc := fileChange{path: filepath.Join(t.repo.top, filepath.FromSlash(c.path)), oldOK: c.oldBlob != "", newOK: c.newBlob != ""}
		if i < MaxFiles {
			t.readSides(ctx, c, &fc)
		}
		fcs = append(fcs, fc)
	}
	return fcs, nil
}

// readSides loads both sides of change c into fc, or notes why not.
func (t *Tracker) readSides(ctx context.Context, c treeChange, fc *fileChange) {
	for _, side := range []struct {
		id   string
		mode int
		dst  *[]byte
	}{{c.oldBlob, c.oldMode, &fc.old}, {c.newBlob, c.newMode, &fc.new}} {
		if side.id == "" {
			continue
		}
		if side.mode&0o170000 != 0o100000 {
			fc.note = "not a regular file"
			return
		}
		n, err := t.repo.blobSize(ctx, side.id)
		if err != nil || n > MaxFileBytes {
			fc.note = "too large to show here"
			return
		}
		b, err := t.repo.blob(ctx, side.id)
		if err != nil {
			fc.note = "could not be read"
			return
		}
		*side.dst = b
	}
}

// prune removes this session's checkpoints past MaxTurns and any
// checkpoint of the repository older than MaxAge (t.mu held).
func (t *Tracker) prune(ctx context.Context) {
	mine, err := t.repo.refs(ctx, RefPrefix+t.session+"/")
	if err != nil {
		return
	}
	for len(mine) > MaxTurns {
		_ = t.repo.deleteRef(ctx, mine[0].name)
		mine = mine[1:]
	}
	all, err := t.repo.refs(ctx, RefPrefix)
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-MaxAge).Unix()
	for _, r := range all {
		if r.time < cutoff {
			_ = t.repo.deleteRef(ctx, r.name)
		}
	}
}

// Remove deletes every checkpoint of the session: its refs (in git) and
// its before-images (in the state dir). For a deleted session.
func (t *Tracker) Remove(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.probe(ctx)
	var errs []error
	if t.repo != nil {
		t.repo.drivers = nil // a few commands: each looks them up
		rs, err := t.repo.refs(ctx, RefPrefix+t.session+"/")
		errs = append(errs, err)
		for _, r := range rs {
			errs = append(errs, t.repo.deleteRef(ctx, r.name))
		}
		if err := os.Remove(t.indexCache()); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if t.stateDir != "" {
		errs = append(errs, removeDirState(filepath.Join(t.stateDir, "checkpoints", t.session)))
	}
	t.turn, t.before, t.dir, t.done = 0, "", nil, nil
	return errors.Join(errs...)
}

// logErr logs a checkpoint failure at debug level (a turn without a
// checkpoint still runs; stderr stays quiet by default).
func (t *Tracker) logErr(what string, err error) {
	slog.Debug(what+" failed", "session", t.session, "err", err)
}

// keepDone keeps the record of turn (outside git) for /undo, with the
// files commands changed, and drops the oldest past MaxTurns (t.mu held).
func (t *Tracker) keepDone(turn int, fcs []fileChange) {
	d := t.dir
	d.recordAfter()
	for _, fc := range fcs {
		if _, kept := d.images[fc.path]; !kept {
			d.commandChanged = append(d.commandChanged, fc.path)
		}
	}
	sort.Strings(d.commandChanged)
	if t.done == nil {
		t.done = map[int]*dirTurn{}
	}
	t.done[turn] = d
	if err := d.save(); err != nil {
		t.logErr("saving the turn's record", err)
	}
	if d.store != "" {
		pruneTurnDirs(filepath.Dir(d.store))
	}
	for len(t.done) > MaxTurns {
		oldest := turn
		for n := range t.done {
			oldest = min(oldest, n)
		}
		if t.done[oldest].store != "" {
			_ = removeDirState(t.done[oldest].store)
		}
		delete(t.done, oldest)
	}
}
