//go:build !windows

package sandbox

import "golang.org/x/sys/unix"

// writable reports whether this process may write p (access(2) W_OK).
func writable(p string) bool { return unix.Access(p, unix.W_OK) == nil }
