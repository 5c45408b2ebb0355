//go:build linux

package sandbox

import (
	"bytes"
	"os"
	"strconv"
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
// it adopted from a command: processes whose parent is the agent, that
// Start did not start, and whose environment carries AgentVar
// with the agent's pid (every command's does, and so, unless it cleared
// it, everything the command started). The agent calls it last, at exit.
// Children the agent started itself (no AgentVar) are left alone. It
// returns how many it killed.
func KillAdopted() int {
	procs, err := proctree.Scan()
	if err != nil {
		return 0
	}
	self := os.Getpid()
	mark := []byte(AgentVar + "=" + strconv.Itoa(self) + "\x00")
	startedMu.Lock()
	live := make(map[int]bool, len(started))
	for pid := range started {
		live[pid] = true
	}
	startedMu.Unlock()
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
	// Reap them (they are the agent's children), waiting at most about
	// 100 ms for a process stuck in the kernel.
	left := killed
	for try := 0; len(left) > 0 && try < 50; try++ {
		if try > 0 {
			time.Sleep(2 * time.Millisecond)
		}
		next := left[:0]
		for _, pid := range left {
			var ws syscall.WaitStatus
			if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got == 0 && err == nil {
				next = append(next, pid)
			}
		}
		left = next
	}
	return len(killed)
}
