//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/sandbox/internal/proctree"
)

// TestOrphanableOnlyOutsideNamespaces: commands run in PID namespaces of
// their own cannot leave orphans to the agent, so after those alone the
// exit sweep reads nothing (KillAdopted returns at once, even with an
// adopted-looking child present); the first command started outside one
// (a subreaper helper) arms the sweep, which then finds and kills what
// that command left behind, and only that.
func TestOrphanableOnlyOutsideNamespaces(t *testing.T) {
	needNamespaces(t)
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	was := orphanable.Load()
	orphanable.Store(false)
	t.Cleanup(func() { orphanable.Store(was || orphanable.Load()) })
	dir := t.TempDir()
	owner := NewOwner()
	pol := Policy{Project: dir, TempDir: dir}
	marker := "303." + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	p, r := startOwned(t, pol, dir, `setsid sleep `+marker+` > /dev/null 2>&1 & echo started; wait`, owner)
	buf := make([]byte, 8)
	_, _ = r.Read(buf)
	if orphanable.Load() {
		t.Fatal("a command in its own namespaces armed the exit sweep")
	}
	_ = p.Signal(syscall.SIGKILL)
	<-p.Exited()
	waitFor(t, func() bool { return len(byCmdline("sleep\x00"+marker)) == 0 })
	if n := KillAdopted(owner); n != 0 {
		t.Errorf("KillAdopted killed %d after namespace commands only", n)
	}

	noNamespaces = true
	t.Cleanup(func() { noNamespaces = false })
	p, r = startOwned(t, Policy{Config: Config{Mode: Off}, Project: dir, TempDir: dir}, dir, `setsid sleep `+marker+` > /dev/null 2>&1 & echo started; wait`, owner)
	_, _ = r.Read(buf)
	if !orphanable.Load() {
		t.Fatal("a subreaper helper did not arm the exit sweep")
	}
	var pids []int
	waitFor(t, func() bool { pids = byCmdline("sleep\x00" + marker); return len(pids) == 1 })
	mine := exec.Command("sleep", "30")
	if err := mine.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = mine.Process.Kill(); _ = mine.Wait() }()
	_ = p.cmd.Process.Signal(syscall.SIGKILL) // the helper alone: its orphan goes to the agent
	<-p.Exited()
	waitForWithin(t, 30*time.Second, func() bool { q, ok := proctree.Stat(pids[0]); return ok && q.PPid == os.Getpid() })
	waitForWithin(t, 30*time.Second, func() bool { return len(byCmdline("setsid sleep "+marker)) == 0 })
	if n := KillAdopted(owner); n != 1 {
		t.Errorf("KillAdopted killed %d, want 1", n)
	}
	if _, ok := proctree.Stat(pids[0]); ok {
		t.Error("the adopted sleep is still there")
	}
	if q, ok := proctree.Stat(mine.Process.Pid); !ok || q.Zombie() {
		t.Error("KillAdopted killed a child the agent started itself")
	}
}

// TestChildren: proctree.Children lists exactly the agent's children,
// whichever way the kernel offers them.
func TestChildren(t *testing.T) {
	var want []int
	for range 3 {
		c := exec.Command("sleep", "30")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		want = append(want, c.Process.Pid)
	}
	kids, err := proctree.Children(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var got, scanned []int
	for _, k := range kids {
		got = append(got, k.Pid)
	}
	all, _ := proctree.Scan()
	for _, q := range all {
		if q.PPid == os.Getpid() {
			scanned = append(scanned, q.Pid)
		}
	}
	slices.Sort(got)
	slices.Sort(scanned)
	if !slices.Equal(got, scanned) {
		t.Errorf("Children = %v, a scan finds %v", got, scanned)
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("child %d missing from %v", w, got)
		}
	}
}
