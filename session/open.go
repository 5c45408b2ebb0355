package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Open makes the file hold exactly l.Events and returns it as a Log for
// appending, which holds the log's Lock (taken by ReadLogLocked, or now:
// a *LockedError when another process holds it). When the file needs repair (NeedsRepair), the user's log is
// first copied beside it as BackupPath (recorded in l.Backup) (mode 0600, never overwriting a
// file), then the repaired log (the kept bytes plus the synthetic events)
// is written to a temporary file and renamed over the original. Errors
// wrap the file system's; on error the original file is unchanged.
func (l *Loaded) Open() (*Log, error) {
	if l.lock == nil {
		lock, err := Acquire(l.Path)
		if err != nil {
			return nil, err
		}
		l.lock = lock
	}
	if l.NeedsRepair() {
		if err := l.writeRepair(); err != nil {
			l.Release()
			return nil, err
		}
	}
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		l.Release()
		return nil, fmt.Errorf("session: opening the log: %w", err)
	}
	lock := l.lock
	l.lock = nil // the Log owns it now
	return appendLog(l.Path, l.Header, f, lock), nil
}

// ReadLogLazyLocked is ReadLogLocked reading as ReadLogLazy does.
func ReadLogLazyLocked(path string, want func(typ string) bool) (*Loaded, error) {
	lock, err := Acquire(path)
	if err != nil {
		return nil, err
	}
	l, err := ReadLogLazy(path, want)
	if err != nil {
		lock.Release()
		return nil, err
	}
	l.lock = lock
	return l, nil
}

// ReadLogLocked takes the log's Lock, then reads it (ReadLog): a log
// another process writes is neither read half-written nor repaired under
// it. The Lock passes to the Log that Open returns; call Release when the
// log is not opened after all. Errors: *LockedError when another process
// holds the lock, and ReadLog's.
func ReadLogLocked(path string) (*Loaded, error) {
	lock, err := Acquire(path)
	if err != nil {
		return nil, err
	}
	l, err := ReadLog(path)
	if err != nil {
		lock.Release()
		return nil, err
	}
	l.lock = lock
	return l, nil
}

// Release gives up the Lock ReadLogLocked took, when the log is not
// opened; harmless otherwise.
func (l *Loaded) Release() {
	_ = l.lock.Release()
	l.lock = nil
}

// BackupPath is the backup name of the log at path taken at t:
// <path>.<Unix ms>.bak (not a *.jsonl name, so never listed).
func BackupPath(path string, t time.Time) string {
	return path + "." + strconv.FormatInt(t.UnixMilli(), 10) + ".bak"
}

// writeRepair backs the file up and replaces it with the repaired log.
func (l *Loaded) writeRepair() error {
	backup := BackupPath(l.Path, time.Now())
	if err := writeNew(backup, l.data); err != nil {
		return fmt.Errorf("session: backing up the log before repair: %w", err)
	}
	repaired := NewLog(l.Path, l.Header)
	repaired.buf.Write(l.data[:l.Keep])
	for _, ev := range l.Events[len(l.Events)-l.Synthetic:] {
		if err := repaired.encodeEvent(ev); err != nil {
			return err
		}
	}
	// A repair left half-written by a crash: the lock is ours, so no
	// other process is writing one; remove it now.
	stale, _ := filepath.Glob(filepath.Join(filepath.Dir(l.Path), globEscape(tempPrefix(filepath.Base(l.Path)))+"*"))
	for _, p := range stale {
		_ = os.Remove(p)
	}
	if err := replaceFile(l.Path, repaired.buf.Bytes(), true); err != nil {
		return fmt.Errorf("session: replacing the log with its repair: %w", err)
	}
	l.data = repaired.buf.Bytes()
	l.size = int64(len(l.data))
	l.Keep, l.Synthetic, l.Backup = l.size, 0, backup
	return nil
}

// writeNew creates path (which must not exist) with mode 0600, writes
// data and syncs it.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}

// globEscape quotes the pattern characters of a file name for
// filepath.Glob.
func globEscape(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[\\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
