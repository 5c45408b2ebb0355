package toolfs

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/tools"
)

// file is a resolved file path.
type file struct {
	// display is the absolute path named in messages, cards and editor
	// requests: the path as given, made absolute and clean, when that
	// names the same file as the kernel's resolution (target); else, when
	// cleaning ".." as text would name another file (a symlink before
	// the ".."), the real path target itself, so what is shown is what
	// is opened. It holds no "..", so the editor reads it the same way.
	display string
	// target is the real path, as the permission check resolved it
	// (permission.ResolvePath: symlinks followed where they stand, then
	// ".."; a dangling link followed to the path it names; a missing tail
	// kept). Observations and locks are keyed by it, and the disk backend
	// opens it, so a symlink is written through.
	target string
	// root is the real path of the project root target lies inside (the
	// session cwd, else one of its additional directories; then name is
	// target relative to root, and every file operation goes through an
	// os.Root handle on root, so a path that has been made to escape
	// since it was resolved fails instead of leading outside); "" for a
	// file outside them all (name is then target).
	root string
	name string
}

// resolve makes p absolute against cwd (p is used as is when absolute; cwd
// "" means the process's working directory) and resolves it once, the
// way the permission check does; dirs are the session's additional
// directories, roots of the project as cwd is. Errors: FS_IO_ERROR when
// the working directory is unknown or the path holds a symlink loop
// (ELOOP).
func resolve(cwd, p string, dirs ...string) (file, error) {
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return file{}, ioErr("resolve", p, err)
		}
		cwd = wd
	}
	shown, target, err := permission.ResolveShown(cwd, p)
	if err != nil {
		return file{}, ioErr("resolve", shown, err)
	}
	f := file{display: shown, target: target, name: target}
	for _, r := range append([]string{cwd}, dirs...) {
		if !permission.Inside(r, target) {
			continue
		}
		root := permission.Resolve(r, r)
		rel, err := filepath.Rel(root, target)
		if err != nil {
			return file{}, ioErr("resolve", shown, err)
		}
		f.root, f.name = root, rel
		break
	}
	return f, nil
}

// resolveFor is resolve for a tool call of session s: against its cwd,
// with its additional directories as roots.
func resolveFor(s tools.Session, p string) (file, error) {
	return resolve(cwdOf(s), p, tools.AdditionalDirectories(s)...)
}

// dirFS is what the disk backend does with files: an *os.Root beneath the
// session cwd, hostFS outside it. Names are relative to the root, or
// absolute for hostFS.
type dirFS interface {
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	Open(name string) (*os.File, error)
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
	ReadFile(name string) ([]byte, error)
	MkdirAll(name string, perm fs.FileMode) error
	Rename(oldname, newname string) error
	Remove(name string) error
}

// hostFS is dirFS on the whole file system (absolute names).
type hostFS struct{}

func (hostFS) Stat(name string) (fs.FileInfo, error)  { return os.Stat(name) }
func (hostFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }
func (hostFS) Open(name string) (*os.File, error)     { return os.Open(name) }
func (hostFS) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}
func (hostFS) ReadFile(name string) ([]byte, error)         { return os.ReadFile(name) }
func (hostFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }
func (hostFS) Rename(oldname, newname string) error         { return os.Rename(oldname, newname) }
func (hostFS) Remove(name string) error                     { return os.Remove(name) }

// open returns the file system f lives in and f's name there; call done
// when finished with it. Errors: opening the root (*fs.PathError).
func (f file) open() (d dirFS, name string, done func(), err error) {
	if f.root == "" {
		return hostFS{}, f.target, func() {}, nil
	}
	r, err := os.OpenRoot(f.root)
	if err != nil {
		return nil, "", nil, err
	}
	return r, f.name, func() { r.Close() }, nil
}

// stat stats f (symlinks followed, beneath the root).
func (f file) stat() (fs.FileInfo, error) {
	d, name, done, err := f.open()
	if err != nil {
		return nil, err
	}
	defer done()
	return d.Stat(name)
}

// readFile reads f's bytes.
func (f file) readFile() ([]byte, error) {
	d, name, done, err := f.open()
	if err != nil {
		return nil, err
	}
	defer done()
	return d.ReadFile(name)
}

// openRead opens f for reading; the root handle is released at once (an
// open file does not need it).
func (f file) openRead() (*os.File, error) {
	d, name, done, err := f.open()
	if err != nil {
		return nil, err
	}
	defer done()
	return d.Open(name)
}

// mkdirParents creates f's missing parent directories (0777 less the
// umask).
func (f file) mkdirParents() error {
	d, name, done, err := f.open()
	if err != nil {
		return err
	}
	defer done()
	if dir := filepath.Dir(name); dir != "." {
		return d.MkdirAll(dir, 0o777)
	}
	return nil
}

// writeAtomic replaces f's content (see the function writeAtomic).
func (f file) writeAtomic(ctx context.Context, content []byte, prev fs.FileInfo) error {
	d, name, done, err := f.open()
	if err != nil {
		return err
	}
	defer done()
	return writeAtomic(ctx, d, name, content, prev)
}
