//go:build linux

package toolbash

import "syscall"

// sysProcAttr puts the command in its own process group and asks the
// kernel to SIGKILL the shell if the agent dies first (best effort: it
// covers the shell, not its children).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
