package agent

import (
	"context"
	"path/filepath"
	"time"

	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// Checkpointer takes a session's per-turn checkpoints and says what a
// turn changed (a *checkpoint.Tracker). Before is called, synchronously,
// just before each call of the turn that may change files runs (after
// its permission was given), with the absolute paths the call names;
// End once when the turn ends, also a cancelled or failed one: its
// changes, or nil when none.
type Checkpointer interface {
	Before(ctx context.Context, turn int, paths []string)
	End(ctx context.Context, turn int) *session.TurnChanges
}

// endChangesTimeout bounds the end-of-turn comparison with the
// checkpoint; after a cancel (it still runs, on the turn's context
// without the cancel) cancelledChangesTimeout does, so that a cancelled
// prompt is still answered at once (a turn past it shows no card).
const (
	endChangesTimeout       = 10 * time.Second
	cancelledChangesTimeout = 500 * time.Millisecond
)

// mayChange reports whether call c may change files: a call of anything
// but a read-only or agent-state tool (an unknown tool's call fails
// before it runs).
func mayChange(c *tools.Call) bool {
	return c != nil && c.Found && c.Tool.Class != tools.ClassReadOnly && c.Tool.Class != tools.ClassAgentState
}

// beforeChange lets the session's checkpointer record the project before
// call c runs, when c may change files.
func (t *turnRun) beforeChange(ctx context.Context, c session.ToolCallRef) {
	cp := t.s.Checkpoints
	if cp == nil {
		return
	}
	if !mayChange(c.Call) {
		return
	}
	var paths []string
	if acc, ok := c.Call.Access(); ok {
		cwd := ""
		if t.s.Tools != nil {
			cwd = t.s.Tools.Cwd()
		}
		for _, p := range acc.Paths {
			if !filepath.IsAbs(p) {
				p = filepath.Join(cwd, p)
			}
			paths = append(paths, filepath.Clean(p))
		}
	}
	cp.Before(ctx, t.turn, paths)
}

// endChanges logs what the turn changed, when it changed anything.
func (t *turnRun) endChanges(ctx context.Context) {
	cp := t.s.Checkpoints
	if cp == nil {
		return
	}
	timeout := endChangesTimeout
	if ctx.Err() != nil {
		timeout = cancelledChangesTimeout
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if d := cp.End(ctx, t.turn); d != nil {
		t.emit(*d)
	}
}
