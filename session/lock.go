package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// LockPath is the lock file of the log at path: path + ".lock" (not a
// *.jsonl name, so never listed). It holds the pid of the process that
// holds the lock; it is never removed (removing a lock file races with a
// process about to lock it).
func LockPath(path string) string { return path + ".lock" }

// LockedError says another process holds a session log's lock: it has
// the session open (loaded, or created and written) and is its one
// writer. PID is that process's id as it wrote it in the lock file, 0
// when it could not be read.
type LockedError struct {
	Path string
	PID  int
}

func (e *LockedError) Error() string {
	who := "another process"
	switch {
	case e.PID == os.Getpid():
		who = fmt.Sprintf("this process (pid %d), by an earlier open that has not been closed", e.PID)
	case e.PID > 0:
		who = fmt.Sprintf("another dsh-acp process (pid %d)", e.PID)
	}
	return fmt.Sprintf("session log %s is in use by %s; close the session there first", e.Path, who)
}

// Lock is the exclusive advisory lock (flock) of one session log, held
// from the moment a process opens the log for writing until it closes
// it, so two processes never append to one log. The kernel releases it
// when the process dies, however it dies.
type Lock struct {
	f *os.File
}

// Acquire takes the lock of the log at path without waiting, creating
// the lock file (mode 0600, in the log's folder, which must exist) and
// writing this process's pid in it. Errors: *LockedError when another
// open file description holds it (another process, or this one through
// another Log of the same path); the file system's otherwise.
func Acquire(path string) (*Lock, error) {
	f, err := os.OpenFile(LockPath(path), os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return nil, fmt.Errorf("session: opening the lock of %s: %w", path, err)
	}
	for try := 0; ; try++ {
		err = lockFile(f, true)
		if errors.Is(err, errWouldBlock) && try < 10 {
			// Perhaps a Holder probe, which holds a shared lock for an
			// instant: try again shortly.
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if !errors.Is(err, errInterrupted) {
			break
		}
	}
	if err != nil {
		defer f.Close()
		if errors.Is(err, errWouldBlock) {
			return nil, &LockedError{Path: path, PID: holder(f)}
		}
		return nil, fmt.Errorf("session: locking %s: %w", path, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	// A failed truncate or write is the lock's error too: a lock file
	// without our pid would name no holder (or a stale one) to others.
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt(pid, 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("session: writing the lock of %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// holder reads the pid the lock's holder wrote; it retries briefly, as
// the holder writes it just after locking. 0 when unreadable.
func holder(f *os.File) int {
	for range 20 {
		var b [32]byte
		n, _ := f.ReadAt(b[:], 0)
		if pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:n]))); err == nil && pid > 0 {
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0
}

// Release gives the lock up; releasing twice (or a nil Lock) is harmless.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Holder reports whether a process holds the lock of the log at path,
// and its pid (0 when unreadable), without taking the lock for more than
// an instant (a shared lock, which Acquire waits out). A missing lock
// file means no holder.
func Holder(path string) (pid int, held bool) {
	f, err := os.Open(LockPath(path))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	err = lockFile(f, false)
	if errors.Is(err, errWouldBlock) {
		return holder(f), true
	}
	return 0, false // closing f drops the shared lock
}
