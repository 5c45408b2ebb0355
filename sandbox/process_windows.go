package sandbox

import (
	"os/exec"
	"strconv"
	"syscall"
)

// newGroup starts the command in a new process group. Windows has no
// process-group signals: Signal ends the whole process tree instead.
func newGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// Running reports whether the command has not ended (its children are
// not tracked on Windows).
func (p *Process) Running() bool { return !p.Reaped() }

// Signal ends the command and its children (taskkill /T /F), whatever
// sig is (Windows cannot deliver POSIX signals); ESRCH once the command
// has ended.
func (p *Process) Signal(syscall.Signal) error {
	if p.Reaped() {
		return syscall.ESRCH
	}
	if err := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(p.pid)).Run(); err != nil {
		return p.cmd.Process.Kill()
	}
	return nil
}
