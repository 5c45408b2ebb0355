//go:build !linux && !windows

package sandbox

import (
	"os"
	"os/exec"
	"syscall"
)

// AgentVar is set in every command's environment on Linux.
const AgentVar = "DSH_SANDBOX_AGENT"

// Command is one command to start (see the Linux documentation).
type Command struct {
	Path           string
	Args           []string
	Dir            string
	Env            []string
	Stdout, Stderr *os.File
	Policy         Policy
	Owner          string
}

// Process is a started command; without Linux it is the command itself,
// unconfined, leading its own process group.
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

// Start starts c directly, in its own process group.
func Start(c Command) (*Process, error) {
	cmd := &exec.Cmd{Path: c.Path, Args: c.Args, Dir: c.Dir, Env: c.Env, Stdout: c.Stdout, Stderr: c.Stderr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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

// Pid is the process group's id.
func (p *Process) Pid() int { return p.pid }

// Exited is closed once the command has been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Reaped reports whether Exited is closed.
func (p *Process) Reaped() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// WaitCommand waits for the command and returns its wait status.
func (p *Process) WaitCommand() syscall.WaitStatus {
	<-p.exited
	ws, _ := p.state.Sys().(syscall.WaitStatus)
	return ws
}

// Running reports whether the process group may have a member (zombies
// cannot be told apart here).
func (p *Process) Running() bool { return syscall.Kill(-p.pid, 0) == nil }

// Signal sends sig to the process group.
func (p *Process) Signal(sig syscall.Signal) error { return syscall.Kill(-p.pid, sig) }

// BecomeSubreaper does nothing here.
func BecomeSubreaper() error { return nil }

// KillAdopted does nothing here.
func KillAdopted(owner string) int { return 0 }
