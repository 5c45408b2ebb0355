//go:build unix

package toolmcp

import "syscall"

// signalGroup sends sig to p's process group: the server and what it
// started.
func signalGroup(p *proc, sig syscall.Signal) { _ = syscall.Kill(-p.pgid, sig) }

// killLeftovers kills, once the server is reaped, what it left in its
// process group (no orphans).
func killLeftovers(p *proc) { _ = syscall.Kill(-p.pgid, syscall.SIGKILL) }
