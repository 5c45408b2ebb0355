//go:build linux

// Package proctree reads the process tree from /proc and signals the
// descendants of a process without signalling a process whose id was
// reused meanwhile. It imports only a few early packages of the standard
// library (not strconv: see package decimal) and decimal: the sandbox
// helper uses it at start-up (see package helper).
package proctree

import (
	"bytes"
	"os"
	"syscall"

	"github.com/dsh-acp/dsh-acp/sandbox/internal/decimal"
)

// Proc is one process as /proc/<pid>/stat shows it, with ids as seen in
// the pid namespace of the /proc mount.
type Proc struct {
	Pid, PPid, Pgid int
	// State is the one-letter state ('R', 'S', 'Z', ...).
	State byte
}

// Zombie reports whether the process has exited and waits to be reaped.
func (p Proc) Zombie() bool { return p.State == 'Z' || p.State == 'X' }

// Scan lists every process under /proc. Processes that vanish while it
// reads are left out; it fails only when /proc cannot be listed.
func Scan() ([]Proc, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	_ = d.Close()
	if err != nil {
		return nil, err
	}
	out := make([]Proc, 0, len(names))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		pid, ok := decimal.Atoi(n)
		if !ok {
			continue
		}
		if p, ok := Stat(pid); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// Children lists the children of pid (the processes whose parent it is,
// as Stat shows them): from /proc/<pid>/task/*/children where the kernel
// provides those files (CONFIG_PROC_CHILDREN), which costs what the
// process's threads and children number, not the machine's processes;
// elsewhere from Scan. A child that forks or exits meanwhile may be left
// out or listed (check it again before acting on it).
func Children(pid int) ([]Proc, error) {
	dir := "/proc/" + decimal.Itoa(uint64(pid)) + "/task/"
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	tids, err := d.Readdirnames(-1)
	_ = d.Close()
	if err != nil {
		return nil, err
	}
	var out []Proc
	for _, tid := range tids {
		b, err := os.ReadFile(dir + tid + "/children")
		if err != nil {
			if os.IsNotExist(err) && len(out) == 0 {
				return children(pid)
			}
			continue // the thread ended
		}
		for _, f := range bytes.Fields(b) {
			if c, ok := decimal.Atoi(f); ok {
				if p, ok := Stat(c); ok && p.PPid == pid {
					out = append(out, p)
				}
			}
		}
	}
	return out, nil
}

// children is Children from a Scan.
func children(pid int) ([]Proc, error) {
	procs, err := Scan()
	if err != nil {
		return nil, err
	}
	out := procs[:0]
	for _, p := range procs {
		if p.PPid == pid {
			out = append(out, p)
		}
	}
	return out, nil
}

// Stat reads /proc/<pid>/stat; ok is false when the process is gone.
func Stat(pid int) (p Proc, ok bool) {
	b, err := os.ReadFile("/proc/" + decimal.Itoa(uint64(pid)) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return Proc{}, false
	}
	ppid, ok1 := decimal.Atoi(f[1])
	pgid, ok2 := decimal.Atoi(f[2])
	if !ok1 || !ok2 {
		return Proc{}, false
	}
	return Proc{Pid: pid, PPid: ppid, Pgid: pgid, State: f[0][0]}, true
}

// Descendants returns the processes of procs below root (children,
// their children, ...), parents before children; root itself is not in
// it.
func Descendants(procs []Proc, root int) []Proc {
	kids := map[int][]Proc{}
	for _, p := range procs {
		kids[p.PPid] = append(kids[p.PPid], p)
	}
	var out []Proc
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range kids[pid] {
			if seen[c.Pid] {
				continue
			}
			seen[c.Pid] = true
			out = append(out, c)
			queue = append(queue, c.Pid)
		}
	}
	return out
}

// Signal sends sig to the descendants of root that are not zombies,
// except those in process group skipPgid (0 skips none), and returns how
// many it signalled. Each one is signalled through a pidfd opened before
// its parent is checked again, so a process id reused since the scan is
// never signalled (on kernels without pidfds, since Linux 5.3, plain
// kill(2) is used).
func Signal(root int, sig syscall.Signal, skipPgid int) (int, error) {
	procs, err := Scan()
	if err != nil {
		return 0, err
	}
	desc := Descendants(procs, root)
	inTree := map[int]bool{root: true}
	for _, p := range desc {
		inTree[p.Pid] = true
	}
	n := 0
	for _, p := range desc {
		if p.Zombie() || (skipPgid != 0 && p.Pgid == skipPgid) {
			continue
		}
		if signalChecked(p.Pid, sig, inTree) {
			n++
		}
	}
	return n, nil
}

// Kill sends SIGKILL to every descendant of root (not to root), again
// and again while new ones appear (a process may fork while its siblings
// are killed), at most rounds times. It returns how many it signalled.
func Kill(root, rounds int) (int, error) {
	total := 0
	for range rounds {
		n, err := Signal(root, syscall.SIGKILL, 0)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
	return total, nil
}

// Linux syscall numbers shared by every architecture (asm-generic).
const (
	sysPidfdSendSignal = 424
	sysPidfdOpen       = 434
)

// signalChecked signals pid when, holding a pidfd for it, its parent is
// still one of tree.
func signalChecked(pid int, sig syscall.Signal, tree map[int]bool) bool {
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno == syscall.ENOSYS {
		return syscall.Kill(pid, sig) == nil
	}
	if errno != 0 {
		return false // gone
	}
	defer syscall.Close(int(fd))
	p, ok := Stat(pid)
	if !ok || !tree[p.PPid] {
		return false
	}
	_, _, errno = syscall.Syscall6(sysPidfdSendSignal, fd, uintptr(sig), 0, 0, 0, 0)
	return errno == 0
}
