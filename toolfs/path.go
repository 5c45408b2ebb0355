package toolfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// file is a resolved file path.
type file struct {
	// display is the absolute path with symlinks not resolved: the path
	// named in messages, cards and editor requests.
	display string
	// target is the real path (symlinks resolved). For a path that does not
	// exist yet it is the real path of its nearest existing ancestor with
	// the missing tail added back (a dangling symlink is followed to the
	// path it names). Observations and locks are keyed by it, and the disk
	// backend writes to it, so a symlink is written through.
	target string
}

// maxLinks bounds the symlinks followed while resolving a dangling link.
const maxLinks = 40

// resolve makes p absolute against cwd (p is used as is when absolute; cwd
// "" means the process's working directory) and finds its real path.
// Errors: FS_NOT_FOUND `cannot resolve "<display>": a parent path segment
// is not a directory`; FS_IO_ERROR when a path segment cannot be examined.
func resolve(cwd, p string) (file, error) {
	display := p
	if !filepath.IsAbs(p) {
		if cwd == "" {
			wd, err := os.Getwd()
			if err != nil {
				return file{}, ioErr("resolve", p, err)
			}
			cwd = wd
		}
		display = filepath.Join(cwd, p)
	}
	display = filepath.Clean(display)
	target, err := realPath(display, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return file{}, fsErr(CodeNotFound, "cannot resolve %q: a parent path segment is not a directory", display)
		}
		return file{}, ioErr("resolve", display, err)
	}
	return file{display: display, target: target}, nil
}

// realPath returns p with every symlink resolved; a missing tail is kept
// (see file.target). depth counts the dangling links followed so far.
func realPath(p string, depth int) (string, error) {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r, nil
	}
	fi, err := os.Lstat(p)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		// A dangling link: resolve the path it names.
		if depth >= maxLinks {
			return "", &fs.PathError{Op: "resolve", Path: p, Err: syscall.ELOOP}
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(p), dest)
		}
		return realPath(dest, depth+1)
	case err == nil:
		// It exists, yet EvalSymlinks failed: report why.
		_, err = filepath.EvalSymlinks(p)
		return "", err
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(p)
		if dir == p {
			return p, nil
		}
		rd, err := realPath(dir, depth)
		if err != nil {
			return "", err
		}
		return filepath.Join(rd, filepath.Base(p)), nil
	}
	return "", err
}

// inside reports whether p lies strictly inside dir, by path segment (both
// absolute and clean).
func inside(dir, p string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
