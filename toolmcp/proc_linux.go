//go:build linux

package toolmcp

import "syscall"

// sysProcAttr puts a stdio server in its own process group (so its
// children can be signalled with it) and has the kernel kill it when the
// agent dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
