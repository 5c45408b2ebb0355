package toolfs

import (
	"context"
	"errors"
	"io/fs"
	"syscall"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// current is a file's state as a mutation sees it.
type current struct {
	info   fs.FileInfo  // stat of the file (symlinks followed); nil when absent
	disk   []byte       // the bytes on disk; nil when absent
	text   []byte       // the content the backend returns (disk, or the editor's text); nil when absent
	ver    version      // the version of text (and of the disk bytes)
	editor tools.Editor // non-nil: read and written through the editor
}

// matches reports whether the file is still as observed in v: the disk
// bytes, and through the editor also the editor's text, hash the same.
func (c *current) matches(v version) bool {
	if c.editor != nil {
		return c.ver.sum == v.sum && c.ver.disk == v.disk
	}
	return c.ver.disk == v.disk
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

// editorFor returns the session's editor when f is to be read (write
// false) or read and written (write true) through it: the client offers
// it, f is inside the session cwd or one of its additional directories
// (the editor's workspace roots), and the file on disk (info, nil when
// absent) is under StreamThreshold. Otherwise nil: use the disk.
func editorFor(s tools.Session, f file, info fs.FileInfo, write bool) tools.Editor {
	e := tools.EditorOf(s)
	if e == nil || !e.CanRead() || write && !e.CanWrite() {
		return nil
	}
	if f.root == "" {
		return nil // outside the session cwd and its additional directories
	}
	if info != nil && info.Size() >= StreamThreshold {
		return nil
	}
	return e
}

// loadCurrent reads the existing file f (info non-nil) for a mutation:
// through e when non-nil, else from disk. Through the editor the disk
// bytes are read too, for the version. Nothing is checked here: the
// caller compares the version first, then the text. Errors: FS_IO_ERROR;
// ctx's end gives FS_ABORTED.
func loadCurrent(ctx context.Context, f file, info fs.FileInfo, e tools.Editor, op string) (*current, error) {
	if err := ctx.Err(); err != nil {
		return nil, aborted(op, err)
	}
	disk, err := f.readFile()
	if err != nil {
		return nil, ioErr(op, f.display, err)
	}
	c := &current{info: info, disk: disk, text: disk, ver: diskVersion(disk)}
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
	c.text, c.editor = []byte(text), e
	c.ver.sum = sumOf(c.text)
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
	v := version{sum: sumOf(stored)}
	if disk, err := f.readFile(); err == nil {
		v.disk = sumOf(disk)
	}
	return stored, v, nil
}
