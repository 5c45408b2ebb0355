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
	"strconv"
	"strings"
	"time"
)

// StreamThreshold is the size from which read streams a file from disk
// instead of loading it whole, in bytes; files of unknown size (a regular
// file whose stat says 0 bytes, as in /proc) are streamed too. Files this
// large are also never read or written through the editor.
const StreamThreshold = 10 << 20

// keptMode is the part of a file's mode a rewrite keeps.
const keptMode = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// writeAtomic replaces name's content in d with content so that the file
// is always either wholly old or wholly new, also across a crash: it
// writes a temporary file in the same directory
// (".<base>.<pid>.<random>.dsh-tmp", created exclusively), fsyncs it,
// renames it over name and fsyncs the directory. prev is the file's
// current FileInfo, nil for a new file: an existing file's mode bits
// (permissions, setuid, setgid, sticky) are kept, and its owner and group
// when the process may set them; a new file gets 0666 less the umask, and
// its missing parent directories are created (0777 less the umask). An
// existing file the process may not write is refused (rename would
// replace it anyway). A temporary file is removed on every failure except
// a crash of the process; one left by a crash is removed by the next
// write to that directory (see removeStale). ctx is checked last before
// the rename: once renamed, the write is complete. Errors are wrapped
// *fs.PathError values, or ctx's error.
func writeAtomic(ctx context.Context, d dirFS, name string, content []byte, prev fs.FileInfo) (err error) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	perm := fs.FileMode(0o666)
	if prev == nil {
		if err := d.MkdirAll(dir, 0o777); err != nil {
			return err
		}
	} else {
		if err := writable(d, dir, base); err != nil {
			return &fs.PathError{Op: "write", Path: name, Err: err}
		}
		perm = 0o600
	}
	removeStale(d, dir)
	f, tmp, err := createTemp(d, dir, base, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			d.Remove(tmp)
		}
	}()
	if _, err := f.Write(content); err != nil {
		return err
	}
	if prev != nil {
		if err := f.Chmod(prev.Mode() & keptMode); err != nil {
			return err
		}
		if err := keepOwner(f, prev); err != nil {
			return err
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
	if err := d.Rename(tmp, name); err != nil {
		return err
	}
	syncDir(d, dir)
	return nil
}

// tempSuffix ends every temporary file name of writeAtomic.
const tempSuffix = ".dsh-tmp"

// createTemp creates a new file in dir for base's replacement, exclusively,
// with perm (less the umask), named ".<base>.<pid>.<random>.dsh-tmp".
func createTemp(d dirFS, dir, base string, perm fs.FileMode) (*os.File, string, error) {
	pid := strconv.Itoa(os.Getpid())
	for range 10 {
		var r [6]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, "", fmt.Errorf("temporary name: %w", err)
		}
		name := filepath.Join(dir, "."+base+"."+pid+"."+hex.EncodeToString(r[:])+tempSuffix)
		f, err := d.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", &fs.PathError{Op: "create", Path: filepath.Join(dir, "."+base+".*"+tempSuffix), Err: fs.ErrExist}
}

// staleAge is the age after which any temporary file of writeAtomic is
// taken as left by a crash, whoever wrote it: no write takes that long.
const staleAge = time.Hour

// removeStale removes the temporary files a crashed writeAtomic left in
// dir: those whose writer (the pid in the name) is no longer running,
// and any older than staleAge. A live writer's file (this process's, or
// another agent's on the same project) is left alone. Failures are
// ignored: the write itself does not depend on this.
func removeStale(d dirFS, dir string) {
	df, err := d.Open(dir)
	if err != nil {
		return
	}
	names, _ := df.Readdirnames(-1)
	df.Close()
	for _, n := range names {
		if !strings.HasPrefix(n, ".") || !strings.HasSuffix(n, tempSuffix) {
			continue
		}
		path := filepath.Join(dir, n)
		fi, err := d.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if writerGone(n) || time.Since(fi.ModTime()) > staleAge {
			_ = d.Remove(path)
		}
	}
}

// writerGone reports whether the pid in a temporary file's name
// (".<base>.<pid>.<random>.dsh-tmp") names no running process.
func writerGone(name string) bool {
	parts := strings.Split(strings.TrimSuffix(name, tempSuffix), ".")
	if len(parts) < 4 {
		return false
	}
	pid, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil || pid <= 0 {
		return false
	}
	return processGone(pid)
}

// syncDir fsyncs a directory so a rename in it survives a crash; failures
// (some file systems refuse it) are ignored, the rename itself succeeded.
func syncDir(d dirFS, dir string) {
	df, err := d.Open(dir)
	if err != nil {
		return
	}
	_ = df.Sync()
	df.Close()
}
