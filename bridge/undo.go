package bridge

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/checkpoint"
	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/present"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// /undo puts the files of the last turn that changed them (and was not
// undone yet) back as they were before it, from the turn's checkpoint.
// It runs as a turn of its own that the model never sees: the user is
// asked first, the change shown (in every mode but bypassPermissions),
// files are written through the editor when it offers writes, and the
// card of the undo says what was restored and what was left as it was.
// The model's history gets a short note (a context message) that the
// turn was undone.

// undoOptions are the answers to an undo's permission request.
var undoOptions = []acp.PermissionOption{
	{OptionID: "allow-once", Name: "Undo", Kind: acp.AllowOnce},
	{OptionID: "reject-once", Name: "Keep the changes", Kind: acp.RejectOnce},
}

// lastUndoable is the last turn of events with changes not undone yet
// (0 for none).
func lastUndoable(events []session.Event) int {
	changed := map[int]bool{}
	for _, ev := range events {
		switch d := ev.Data.(type) {
		case session.TurnChanges:
			changed[d.Turn] = true
		case session.TurnUndone:
			delete(changed, d.Turn)
		default:
			// Only the changes and the undos count.
		}
	}
	last := 0
	for n := range changed {
		last = max(last, n)
	}
	return last
}

// undoTurn is the Local function of an /undo turn of s.
func (b *Bridge) undoTurn(s *liveSession) func(ctx context.Context, turn int, emit func(session.Data)) string {
	return func(ctx context.Context, by int, emit func(session.Data)) string {
		target := lastUndoable(s.agent.Store.Events())
		if target == 0 {
			emit(session.TurnUndone{By: by, Note: "Nothing to undo: no turn of this session changed files, or every one was undone."})
			return string(acp.StopEndTurn)
		}
		plan, err := s.ckpt.PlanUndo(ctx, target)
		if err != nil {
			note := "Turn " + strconv.Itoa(target) + " cannot be undone: " + err.Error() + "."
			emit(session.TurnUndone{By: by, Note: note})
			return string(acp.StopEndTurn)
		}
		if s.perm.currentMode() != permission.ModeBypass {
			card := present.UndoPermissionCard(s.view, by, target, plan.Changes, plan.Skipped)
			res, err := b.client.RequestPermission(ctx, acp.RequestPermissionRequest{SessionID: s.id, ToolCall: card, Options: undoOptions})
			if err != nil || res.Outcome.Outcome != acp.OutcomeSelected {
				emit(session.TurnUndone{By: by, Note: "Cancelled: the changes of turn " + strconv.Itoa(target) + " are kept."})
				return string(acp.StopCancelled)
			}
			if res.Outcome.OptionID != "allow-once" {
				emit(session.TurnUndone{By: by, Note: "The changes of turn " + strconv.Itoa(target) + " are kept."})
				return string(acp.StopEndTurn)
			}
		}
		restored, skipped := s.ckpt.ApplyUndo(context.WithoutCancel(ctx), plan, b.undoWriter(s))
		emit(session.TurnUndone{Turn: target, By: by, Restored: restored, Skipped: skipped})
		emit(session.ContextMessage{Turn: by, Text: undoNote(target, restored, skipped)})
		return string(acp.StopEndTurn)
	}
}

// undoNote is what the model is told of an undo.
func undoNote(turn int, restored, skipped []string) string {
	var b strings.Builder
	b.WriteString("[The user ran /undo: the file changes of turn " + strconv.Itoa(turn) + " (the user's prompt number " + strconv.Itoa(turn) +
		") were undone; do not assume they are there.")
	if len(restored) > 0 {
		b.WriteString(" Restored to their state before that turn: " + strings.Join(restored, ", ") + ".")
	}
	if len(skipped) > 0 {
		b.WriteString(" Left as they are: " + strings.Join(skipped, "; ") + ".")
	}
	b.WriteString("]")
	return b.String()
}

// undoWriter writes a restored file through the editor when it offers
// writes and the file is text inside the session's cwd (its buffers then
// follow), else to disk through root (the kernel keeps it below the
// work tree); the mode is set as it was.
func (b *Bridge) undoWriter(s *liveSession) checkpoint.Writer {
	return func(ctx context.Context, root *os.Root, rel string, content []byte, mode fs.FileMode) error {
		e := tools.EditorOf(s.agent.Tools)
		path := filepath.Join(root.Name(), rel)
		in, err := filepath.Rel(s.cwd, path)
		inside := err == nil && in != ".." && !strings.HasPrefix(in, ".."+string(filepath.Separator))
		if e != nil && e.CanWrite() && inside && utf8.Valid(content) {
			if err := e.WriteTextFile(ctx, path, string(content)); err != nil {
				return err
			}
		} else if err := root.WriteFile(rel, content, mode|0o200); err != nil {
			return err
		}
		if mode != 0 {
			return root.Chmod(rel, mode)
		}
		return nil
	}
}
