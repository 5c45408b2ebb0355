//go:build !windows

package toolbash

import "syscall"

// groupEnded reports whether p's process group has no member left
// (kill(-pgid, 0) fails with ESRCH).
func groupEnded(p *proc) bool { return syscall.Kill(-p.pgid, 0) == syscall.ESRCH }
