//go:build !linux

package sandbox

import (
	"os"
	"os/exec"
	"syscall"
)

// Process is a started command; without Linux it is the command itself,
// unconfined, leading a new process group (see Signal for what that
// means on Windows).
type Process struct {
	cmd *exec.Cmd
	pid int
	// Confined is always false here.
	Confined bool
	exited   chan struct{}
	state    *os.ProcessState
}

func probe() Host {
	return Host{LandlockReason: "Landlock is Linux's", NamespaceReason: "namespaces are Linux's"}
}

// quick is probe here: nothing is started either way.
func quick() (Host, int) { return probe(), 0 }

// Start starts c directly, in a new process group (newGroup).
func Start(c Command) (*Process, error) {
	cmd := &exec.Cmd{Path: c.Path, Args: c.Args, Dir: c.Dir, Env: c.Env, Stdout: c.Stdout, Stderr: c.Stderr}
	cmd.SysProcAttr = newGroup()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	return p, nil
}

// WaitCommand waits for the command and returns its wait status.
func (p *Process) WaitCommand() syscall.WaitStatus {
	<-p.exited
	ws, _ := p.state.Sys().(syscall.WaitStatus)
	return ws
}

// BecomeSubreaper does nothing here.
func BecomeSubreaper() error { return nil }

// KillAdopted does nothing here.
func KillAdopted(owner string) int { return 0 }
