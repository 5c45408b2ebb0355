package toolfs

import (
	"context"
	"errors"
	"io/fs"
	"syscall"
	"time"

	"github.com/dsh-acp/dsh-acp/internal/probe"
	"github.com/dsh-acp/dsh-acp/tools"
)

// current is a file's state as a mutation sees it.
type current struct {
	info   fs.FileInfo  // stat of the file (symlinks followed); nil when absent
	disk   []byte       // the bytes on disk; nil when absent
	buf    []byte       // through the editor: the editor's text; nil otherwise
	text   []byte       // what the mutation applies to (set by basis); nil when absent
	editor tools.Editor // non-nil: read and written through the editor
}

// The outcomes of basis.
const (
	basisOK       = iota
	basisStale    // the file changed since the model observed it
	basisConflict // the last read found buffer and disk both changed
)

// basis checks c against exp, the version the model last observed, and
// sets c.text to what the mutation applies to: the text the model saw,
// if it is still there and nothing it did not see would be lost. On
// disk: the disk still holds what was shown. Through the editor: the
// last read did not end in a conflict, and either neither side moved
// since (the text is the side that read showed: the buffer, or the disk
// when the buffer lagged) or the buffer now holds the disk's text
// (sameText) and what was shown (the editor caught up, or saved the
// buffer).
func (c *current) basis(exp version) int {
	dsum := sumOf(c.disk)
	if c.editor == nil {
		if dsum != exp.disk || dsum != exp.sum {
			return basisStale
		}
		c.text = c.disk
		return basisOK
	}
	if exp.state == bufConflict {
		return basisConflict
	}
	bsum := sumOf(c.buf)
	pbuf := exp.buf
	if !exp.hasBuf {
		pbuf = exp.disk
	}
	switch {
	case bsum == pbuf && dsum == exp.disk:
		c.text = c.buf
		if exp.state == bufLagging {
			c.text = c.disk
		}
		if sumOf(c.text) != exp.sum {
			return basisStale
		}
	case bsum == exp.sum && sameText(c.buf, c.disk):
		c.text = c.buf
	default:
		return basisStale
	}
	return basisOK
}

// statFile stats f (following symlinks). A missing file gives a nil
// FileInfo and no error; a file that is not regular gives FS_NOT_REGULAR_FILE
// `cannot <op> "<display>": not a regular file`; other failures FS_IO_ERROR.
func statFile(f file, op string) (fs.FileInfo, error) {
	fi, err := f.stat()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, syscall.ENOTDIR):
		return nil, fsErr(CodeNotFound, "cannot resolve %q: a parent path segment is not a directory", f.display)
	case err != nil:
		return nil, ioErr(op, f.display, err)
	case !fi.Mode().IsRegular():
		return nil, fsErr(CodeNotRegularFile, "cannot %s %q: not a regular file", op, f.display)
	}
	return fi, nil
}

// editorFor returns the session's editor when f is to be read and
// written through it: the client offers both fs/read_text_file and
// fs/write_text_file (reads and writes go to one place: a client that
// can do only one of them gets the disk for both, see peekFor), and f
// qualifies (see qualifies). Otherwise nil: use the disk.
func editorFor(s tools.Session, f file, info fs.FileInfo) tools.Editor {
	e := tools.EditorOf(s)
	if e == nil || !e.CanRead() || !e.CanWrite() || !qualifies(f, info) {
		return nil
	}
	return e
}

// qualifies reports whether f may go through the editor: it is inside
// the session cwd or one of its additional directories (the editor's
// workspace roots) and the file on disk (info, nil when absent) is under
// StreamThreshold.
func qualifies(f file, info fs.FileInfo) bool {
	if f.root == "" {
		return false // outside the session cwd
	}
	return info == nil || info.Size() < StreamThreshold
}

// loadCurrent reads the existing file f (info non-nil) for a mutation:
// from disk, and through e too when non-nil. Nothing is checked here:
// the caller picks the basis first (current.basis), then checks the
// text. Errors: FS_IO_ERROR (an editor's refusal with its message);
// ctx's end gives FS_ABORTED.
func loadCurrent(ctx context.Context, f file, info fs.FileInfo, e tools.Editor, op string) (*current, error) {
	if err := ctx.Err(); err != nil {
		return nil, aborted(op, err)
	}
	probe.Read()
	disk, err := f.readFile()
	if err != nil {
		return nil, ioErr(op, f.display, err)
	}
	c := &current{info: info, disk: disk}
	if e == nil {
		return c, nil
	}
	text, err := e.ReadTextFile(ctx, f.display)
	if err != nil {
		if ctx.Err() != nil {
			return nil, aborted(op, ctx.Err())
		}
		return nil, ioErr(op, f.display, err)
	}
	c.buf, c.editor = []byte(text), e
	return c, nil
}

// readBackTimeout bounds the read-back of a file just written through the
// editor.
const readBackTimeout = 10 * time.Second

// save stores content as f's new content, through the editor when c.editor
// is set, else atomically on disk. It returns what was really stored
// (through the editor: the text read back after the write, which may be
// reformatted) and its version. Errors: FS_ABORTED when ctx ends before
// the content is committed, FS_IO_ERROR otherwise.
func save(ctx context.Context, f file, c *current, content []byte, op string) ([]byte, version, error) {
	if err := ctx.Err(); err != nil {
		return nil, version{}, aborted(op, err)
	}
	if c.editor == nil {
		if err := f.writeAtomic(ctx, content, c.info); err != nil {
			if ctx.Err() != nil {
				return nil, version{}, aborted(op, ctx.Err())
			}
			return nil, version{}, ioErr(op, f.display, err)
		}
		return content, diskVersion(content), nil
	}
	if c.info == nil {
		if err := f.mkdirParents(); err != nil {
			return nil, version{}, ioErr(op, f.display, err)
		}
	}
	if err := c.editor.WriteTextFile(ctx, f.display, string(content)); err != nil {
		if ctx.Err() != nil {
			return nil, version{}, aborted(op, ctx.Err())
		}
		return nil, version{}, ioErr(op, f.display, err)
	}
	// Record what the editor really holds and what reached the disk, so
	// format-on-save does not make the next edit stale. The write is done:
	// a failure from here on must not report it as failed, so the read-back
	// runs without ctx's cancellation (bounded by readBackTimeout) and a
	// failed read-back keeps what was sent.
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), readBackTimeout)
	defer cancel()
	stored := content
	if text, err := c.editor.ReadTextFile(bg, f.display); err == nil {
		stored = []byte(text)
	}
	s := sumOf(stored)
	v := version{sum: s, buf: s, hasBuf: true}
	same := false
	if disk, err := f.readFile(); err == nil {
		v.disk, same = sumOf(disk), sameText(stored, disk)
	}
	if !same {
		// The editor did not save what it took: its buffer holds it.
		v.state = bufUnsaved
	}
	return stored, v, nil
}
