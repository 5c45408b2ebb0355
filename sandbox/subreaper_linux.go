//go:build linux

package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-acp/dsh-acp/sandbox/internal/proctree"
)

// BecomeSubreaper makes the agent process a child subreaper
// (prctl PR_SET_CHILD_SUBREAPER): a process orphaned below it is
// re-parented to it instead of to init. Commands' orphans go to their
// helper, which is a subreaper (or namespace init) itself; the agent
// catches those of a helper that died before them, for KillAdopted.
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// KillAdopted kills with SIGKILL, and reaps, the agent's children that
// it adopted from a command of owner (Command.Owner): processes whose
// parent is the agent, that Start did not start, and whose environment
// carries AgentVar with the agent's pid and owner (every command's does,
// and so, unless it cleared it, everything the command started). A
// Manager calls it last, at exit, with its own owner token. Children the
// agent started itself (no AgentVar), and those of other owners, are
// left alone; Starts wait while it looks for them. It waits up to about
// a second for the killed ones to exit, to reap them. It returns how many
// it killed.
//
// Only a process started outside a PID namespace of its own (directly, or
// through a subreaper helper) can leave orphans to the agent: a namespace
// dies whole with its helper. So when Start started none, KillAdopted
// reads nothing at all; otherwise it reads the agent's children from
// /proc/self/task/*/children where the kernel has them, and walks /proc
// only where it has not.
func KillAdopted(owner string) int {
	if !orphanable.Load() {
		return 0
	}
	self := os.Getpid()
	mark := []byte(marker(owner) + "\x00")
	startedMu.Lock()
	killed := killAdopted(self, mark)
	startedMu.Unlock()
	// Reap them (they are the agent's children), waiting at most about a
	// second: a killed process exits once it is scheduled, which on a
	// loaded machine may take a while (one stuck in the kernel longer).
	left := append([]int(nil), killed...)
	deadline := time.Now().Add(time.Second)
	for len(left) > 0 {
		next := left[:0]
		for _, pid := range left {
			var ws syscall.WaitStatus
			if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got == 0 && err == nil {
				next = append(next, pid)
			}
		}
		left = next
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	return len(killed)
}

// killAdopted sends SIGKILL to the children of self whose environment
// holds mark (an AgentVar entry and its NUL) and that Start did not
// start, and returns their pids (startedMu held).
func killAdopted(self int, mark []byte) []int {
	procs, err := proctree.Children(self)
	if err != nil {
		return nil
	}
	startedP.Lock()
	live := make(map[int]bool, len(started))
	for pid := range started {
		live[pid] = true
	}
	startedP.Unlock()
	var killed []int
	for _, p := range procs {
		if p.PPid != self || live[p.Pid] || p.Zombie() {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid) + "/environ")
		if err != nil || !bytes.Contains(append([]byte{0}, env...), append([]byte{0}, mark...)) {
			continue
		}
		fd, err := unix.PidfdOpen(p.Pid, 0)
		if err != nil {
			continue
		}
		if q, ok := proctree.Stat(p.Pid); ok && q.PPid == self {
			if unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil {
				killed = append(killed, p.Pid)
			}
		}
		_ = unix.Close(fd)
	}
	return killed
}

// orphanable is set once Start has started a process that is not PID 1
// of its own namespace: only such a process's tree can leave orphans to
// the agent.
var orphanable atomic.Bool
