package sandbox

import (
	"os"
	"os/exec"
	"strconv"
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
	// Owner is carried for the API's sake; Windows has no sweep.
	Owner string
}

// Process is a started command; on Windows it is the command itself,
// unconfined, in a new process group. Windows has no process-group
// signals: Signal ends the whole process tree (taskkill /T /F).
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

// Start starts c directly, in a new process group.
func Start(c Command) (*Process, error) {
	cmd := &exec.Cmd{Path: c.Path, Args: c.Args, Dir: c.Dir, Env: c.Env, Stdout: c.Stdout, Stderr: c.Stderr}
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
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

// Pid is the command's process id.
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

// Running reports whether the command has not ended (its children are
// not tracked on Windows).
func (p *Process) Running() bool { return !p.Reaped() }

// Signal ends the command and its children, whatever sig is (Windows
// cannot deliver POSIX signals); ESRCH once the command has ended.
func (p *Process) Signal(syscall.Signal) error {
	if p.Reaped() {
		return syscall.ESRCH
	}
	if err := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(p.pid)).Run(); err != nil {
		return p.cmd.Process.Kill()
	}
	return nil
}

// BecomeSubreaper does nothing here.
func BecomeSubreaper() error { return nil }

// KillAdopted does nothing here.
func KillAdopted(owner string) int { return 0 }
