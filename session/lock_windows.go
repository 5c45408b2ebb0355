package session

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// errWouldBlock is lockFile's error when another handle holds a
// conflicting lock; errInterrupted never happens on Windows.
var (
	errWouldBlock  = errors.New("the lock is held")
	errInterrupted = errors.New("interrupted")
)

// lockOffset is the byte the lock covers: far past any content, since a
// Windows lock also bars other handles from reading the bytes it covers
// (holder reads the pid at offset 0).
const lockOffset = 1 << 62

// lockFile takes a lock on f without waiting (LockFileEx): exclusive,
// or shared. The lock ends when f is closed.
func lockFile(f *os.File, exclusive bool) error {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := &windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return errWouldBlock
	}
	return err
}
