//go:build !windows

package session

import (
	"os"
	"syscall"
)

// errWouldBlock is lockFile's error when another open file description
// holds a conflicting lock; errInterrupted when a signal interrupted it.
var (
	errWouldBlock  error = syscall.EWOULDBLOCK
	errInterrupted error = syscall.EINTR
)

// lockFile takes f's flock without waiting: exclusive, or shared.
func lockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	return syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
}
