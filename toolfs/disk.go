package toolfs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// StreamThreshold is the size from which read streams a file from disk
// instead of loading it whole, in bytes; files of unknown size (a regular
// file whose stat says 0 bytes, as in /proc) are streamed too. Files this
// large are also never read or written through the editor.
const StreamThreshold = 10 << 20

// keptMode is the part of a file's mode a rewrite keeps.
const keptMode = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// writeAtomic replaces target's content with content so that target is
// always either wholly old or wholly new, also across a crash: it writes a
// temporary file in target's directory (".<base>.<random>.dsh-tmp",
// created exclusively), fsyncs it, renames it over target and fsyncs the
// directory. prev is target's current FileInfo, nil for a new file: an
// existing file's mode bits (permissions, setuid, setgid, sticky) are kept,
// and its owner and group when the process may set them; a new file gets
// 0666 less the umask, and its missing parent directories are created
// (0777 less the umask). An existing file the process may not write is
// refused (rename would replace it anyway). A temporary file is removed on
// every failure except a crash of the process. ctx is checked last before
// the rename: once renamed, the write is complete. Errors are wrapped
// *fs.PathError values, or ctx's error.
func writeAtomic(ctx context.Context, target string, content []byte, prev fs.FileInfo) (err error) {
	dir, base := filepath.Split(target)
	perm := fs.FileMode(0o666)
	if prev == nil {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
	} else {
		if err := syscall.Access(target, 2 /* W_OK */); err != nil {
			return &fs.PathError{Op: "write", Path: target, Err: err}
		}
		perm = 0o600
	}
	f, tmp, err := createTemp(dir, base, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(content); err != nil {
		return err
	}
	if prev != nil {
		if err := f.Chmod(prev.Mode() & keptMode); err != nil {
			return err
		}
		if st, ok := prev.Sys().(*syscall.Stat_t); ok {
			// Best effort: only a privileged process may give a file away.
			_ = f.Chown(int(st.Uid), int(st.Gid))
			if st.Mode&syscall.S_ISUID != 0 || st.Mode&syscall.S_ISGID != 0 {
				// chown clears setuid/setgid: set the mode again.
				if err := f.Chmod(prev.Mode() & keptMode); err != nil {
					return err
				}
			}
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Rename(tmp, target); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// createTemp creates a new file in dir for base's replacement, exclusively,
// with perm (less the umask).
func createTemp(dir, base string, perm fs.FileMode) (*os.File, string, error) {
	for range 10 {
		var r [6]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, "", fmt.Errorf("temporary name: %w", err)
		}
		name := filepath.Join(dir, "."+base+"."+hex.EncodeToString(r[:])+".dsh-tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", &fs.PathError{Op: "create", Path: filepath.Join(dir, "."+base+".*.dsh-tmp"), Err: fs.ErrExist}
}

// syncDir fsyncs a directory so a rename in it survives a crash; failures
// (some file systems refuse it) are ignored, the rename itself succeeded.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}
