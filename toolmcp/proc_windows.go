package toolmcp

import (
	"os/exec"
	"strconv"
	"syscall"
)

// sysProcAttr starts a stdio server in a new process group. Windows has
// no parent-death signal: a server outlives an agent that is killed.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// signalGroup ends the server and its process tree (taskkill /T /F),
// whatever sig is: Windows cannot deliver POSIX signals, so the SIGTERM
// step already ends the server for good.
func signalGroup(p *proc, _ syscall.Signal) {
	if exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(p.pgid)).Run() != nil {
		_ = p.cmd.Process.Kill()
	}
}

// killLeftovers does nothing here: once the server is reaped, Windows
// has no process group left to find what it started by.
func killLeftovers(*proc) {}
