//go:build !linux && !windows

package sandbox

import "syscall"

// newGroup makes the command the leader of its own process group, whose
// id is its pid.
func newGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// Running reports whether the process group may have a member (zombies
// cannot be told apart here).
func (p *Process) Running() bool { return syscall.Kill(-p.pid, 0) == nil }

// Signal sends sig to the process group.
func (p *Process) Signal(sig syscall.Signal) error { return syscall.Kill(-p.pid, sig) }
