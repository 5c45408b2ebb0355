//go:build unix && !linux

package toolmcp

import "syscall"

// sysProcAttr puts a stdio server in its own process group (so its
// children can be signalled with it); only Linux offers Pdeathsig.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
