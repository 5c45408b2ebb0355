package toolfs

import (
	"bytes"
	"context"
	"io/fs"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// bufferState is how the editor's buffer of a file related to the file on
// disk at one look through the editor, judged against the agent's
// previous look. Every look through the editor reads
// both, so a change of either side is always seen, in particular one a
// shell command made since the last look.
type bufferState uint8

const (
	// bufClean: the buffer equals the disk (or the file was not read
	// through the editor). That text is shown; edits apply to it.
	bufClean bufferState = iota
	// bufUnsaved: the buffer has changes of its own and the disk did not
	// move since the last look (at a first look: the difference predates
	// the session's commands). The buffer is shown, with a note that the
	// disk differs; edits apply to the buffer and save it.
	bufUnsaved
	// bufLagging: only the disk changed since the last look, and the
	// buffer, clean then, still holds that look (the editor has not
	// reloaded the file yet). The disk is the truth: it is shown, with a
	// note, and edits apply to it, written through the editor so the
	// buffer catches up.
	bufLagging
	// bufConflict: both changed since the last look, or the buffer did
	// after a look that found it lagging (it still lacks the disk's
	// change) (at a first look: the disk changed while the session's
	// commands ran, so either side may be the newer). The buffer is shown, with a note that the disk
	// changed too, and edits are refused until the file is read again.
	bufConflict
)

// judge classifies one look through the editor: dsum and bsum hash the
// disk bytes and the buffer, same says the buffer holds the disk's text
// (sameText), prev is the version last observed (seen false: none),
// recentDisk says the disk was modified after the session started
// running commands (used at a first look only).
func judge(prev version, seen bool, dsum, bsum uint64, same, recentDisk bool) bufferState {
	if same {
		return bufClean
	}
	if !seen {
		if recentDisk {
			return bufConflict
		}
		return bufUnsaved
	}
	pbuf := prev.buf
	if !prev.hasBuf {
		pbuf = prev.disk // a disk look: as if the buffer was clean
	}
	bufMoved, diskMoved := bsum != pbuf, dsum != prev.disk
	switch {
	case bufMoved && diskMoved:
		return bufConflict
	case bufMoved:
		if prev.state == bufLagging {
			// The buffer lacked the disk's change already: typed into,
			// it differs in both, and saving it would undo that change.
			return bufConflict
		}
		return bufUnsaved
	case diskMoved:
		if prev.state == bufUnsaved || prev.state == bufConflict {
			// The buffer had unsaved changes already: both differ now.
			return bufConflict
		}
		return bufLagging
	case prev.state == bufLagging:
		return bufLagging
	}
	// Nothing moved since a look that showed the buffer: this re-read
	// also ends a conflict.
	return bufUnsaved
}

// sameText reports whether buf, the editor's buffer of a file, holds the
// text of disk, the file's bytes: the same bytes, or the same text with
// every "\r\n" and lone "\r" of disk read as "\n". Zed holds a file in
// its buffer so and saves it with the file's line endings again
// (text::LineEnding), so such a buffer has no unsaved change; taking it
// for one would hide a shell's change to a CRLF file as a conflict, and
// the re-read after it would save the stale buffer over that change.
func sameText(buf, disk []byte) bool {
	if bytes.Equal(buf, disk) {
		return true
	}
	if bytes.IndexByte(buf, '\r') >= 0 || len(buf) > len(disk) {
		return false
	}
	j := 0
	for i := 0; i < len(disk); i++ {
		b := disk[i]
		if b == '\r' {
			if i+1 < len(disk) && disk[i+1] == '\n' {
				i++
			}
			b = '\n'
		}
		if j >= len(buf) || buf[j] != b {
			return false
		}
		j++
	}
	return j == len(buf)
}

// bufferNote is the one-line note a read through the editor adds for
// state st (seen: the file had been observed before, and the disk's
// change that makes a conflict came after that look, not before it as
// at a first look or a look that found the buffer lagging); "" for
// bufClean.
func bufferNote(st bufferState, seen bool) string {
	switch st {
	case bufUnsaved:
		return "(This is the editor's buffer, which has unsaved changes: the file on disk differs. An edit applies to this text and saves it.)"
	case bufLagging:
		return "(The file changed on disk since you last read it and the editor has not reloaded it yet: this is the file on disk. An edit applies to this text; the editor's buffer takes it.)"
	case bufConflict:
		if !seen {
			return "(This is the editor's buffer; the file on disk differs and changed while commands ran, so either may be the newer. Edits are refused until you read the file again.)"
		}
		return "(This is the editor's buffer, which has unsaved changes; the file on disk changed too since you last read it. Edits are refused until you read the file again.)"
	case bufClean:
		return ""
	}
	return ""
}

// peekNote is the note of a read, edit or write that used the disk while
// the editor, which can read but not write, holds other text for the
// file (item 2: read and write go to the same place).
const (
	peekReadNote  = "(The editor has unsaved changes to this file that it cannot save for you: this is the file on disk, and edits change the disk, not the editor's buffer.)"
	peekWriteNote = "(The editor has unsaved changes to this file: they do not contain this change, and saving them in the editor would overwrite it.)"
)

// peekFor returns the session's editor when it can read files but not
// write them and f qualifies for the editor (inside the cwd, under
// StreamThreshold): reads and writes then use the disk, and the editor's
// buffer is only compared with it, to tell the model. Otherwise nil.
func peekFor(s tools.Session, f file, info fs.FileInfo) tools.Editor {
	e := tools.EditorOf(s)
	if e == nil || !e.CanRead() || e.CanWrite() || !qualifies(f, info) {
		return nil
	}
	return e
}

// peekDiffers reports whether e holds text for f other than each of
// texts (the disk before and after a write). A failed or cancelled
// request says no: the peek is only for a note.
func peekDiffers(ctx context.Context, e tools.Editor, f file, texts ...[]byte) bool {
	if e == nil {
		return false
	}
	buf, err := e.ReadTextFile(ctx, f.display)
	if err != nil {
		return false
	}
	for _, t := range texts {
		if sameText([]byte(buf), t) {
			return false
		}
	}
	return true
}

// peekAfterWrite is peekDiffers after a write to disk is done: it runs
// without ctx's cancellation, bounded by readBackTimeout.
func peekAfterWrite(ctx context.Context, e tools.Editor, f file, texts ...[]byte) bool {
	if e == nil {
		return false
	}
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), readBackTimeout)
	defer cancel()
	return peekDiffers(bg, e, f, texts...)
}

// commandStartKey keys a session's first command start (*commandStart).
type commandStartKey struct{}

// commandStart is when the session's first call of a tool that may
// change files behind the file tools' back started (set once, when the
// session value is made).
type commandStart struct{ at time.Time }

// recentSlack is the clock margin of recentDisk: file times may be
// coarser than the clock.
const recentSlack = 2 * time.Second

// recentDisk reports whether info, a file on disk, was modified after s
// started its first command (minus recentSlack): a difference between
// the buffer and such a file may be the command's doing, not the user's.
func recentDisk(s tools.Session, info fs.FileInfo) bool {
	if s == nil || info == nil {
		return false
	}
	c, _ := s.Value(commandStartKey{}, nil).(*commandStart)
	if c == nil {
		return false
	}
	return info.ModTime().After(c.at.Add(-recentSlack))
}

// WatchCommands returns the tools.Middleware that records, per session,
// when the first call of a tool that may change files behind the file
// tools' back starts: a tool of class ClassExecute (bash) or
// ClassUndeclared (an MCP tool), the tool of the call's resolution
// (Exec.Call) or, for an Exec without one, looked up with lookup and,
// failing that, in the session's own tools. A read through the editor
// that finds buffer and disk different at its first look at a file then
// asks for a second read before an edit when the disk changed since
// (bufConflict), instead of trusting the buffer. Install it after the
// permission step, so only calls that run count.
func WatchCommands(lookup func(name string) (tools.Tool, bool)) tools.Middleware {
	return func(ctx context.Context, ex *tools.Exec, next tools.Next) tools.Result {
		if ex.Session != nil && mayChangeFiles(ex, lookup) {
			ex.Session.Value(commandStartKey{}, func() any { return &commandStart{at: time.Now()} })
		}
		return next(ctx, ex)
	}
}

// mayChangeFiles reports whether ex calls a tool that may change files
// without the file tools knowing.
func mayChangeFiles(ex *tools.Exec, lookup func(string) (tools.Tool, bool)) bool {
	var t tools.Tool
	var ok bool
	if c := ex.Call; c.Matches(ex.Name, ex.Args) {
		t, ok = c.Tool, c.Found
	} else if t, ok = lookup(ex.Name); !ok {
		if st := tools.SessionTools(ex.Session); st != nil {
			t, ok = st.Get(ex.Name)
		}
	}
	return ok && (t.Class == tools.ClassExecute || t.Class == tools.ClassUndeclared)
}
