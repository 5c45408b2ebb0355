//go:build linux

package sandbox

import (
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/sandbox/internal/proctree"
)

// needLandlock skips t when the kernel cannot confine commands, except
// under CI=true (CI runs on kernels that can): there it fails.
func needLandlock(t *testing.T, minABI int) Host {
	t.Helper()
	h := Probe()
	if h.LandlockABI >= minABI {
		return h
	}
	why := h.LandlockReason
	if h.LandlockABI > 0 {
		why = "Landlock ABI " + strconv.Itoa(h.LandlockABI) + " < " + strconv.Itoa(minABI)
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but commands cannot be confined: %s", why)
	}
	t.Skipf("commands cannot be confined here: %s", why)
	return h
}

// needNamespaces is needLandlock for user and PID namespaces.
func needNamespaces(t *testing.T) {
	t.Helper()
	if h := Probe(); !h.Namespaces {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %s", h.NamespaceReason)
		}
		t.Skip(h.NamespaceReason)
	}
}

// run runs script with bash under pol in dir and returns its output
// (stdout and stderr together) and wait status.
func run(t *testing.T, pol Policy, dir, script string) (string, syscall.WaitStatus) {
	t.Helper()
	p, out := start(t, pol, dir, script)
	b, _ := io.ReadAll(out)
	return string(b), p.WaitCommand()
}

func start(t *testing.T, pol Policy, dir, script string) (*Process, *os.File) {
	t.Helper()
	return startOwned(t, pol, dir, script, "")
}

// startOwned is start for a Command.Owner.
func startOwned(t *testing.T, pol Policy, dir, script, owner string) (*Process, *os.File) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TMPDIR="+pol.TempDir)
	p, err := Start(Command{Path: bash, Args: []string{"bash", "-c", script}, Dir: dir, Env: env, Stdout: w, Stderr: w, Policy: pol, Owner: owner})
	_ = w.Close()
	if err != nil {
		_ = r.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Signal(syscall.SIGKILL); _ = r.Close() })
	return p, r
}

func TestConfinedWrites(t *testing.T) {
	needLandlock(t, 1)
	proj, tmp, outside := t.TempDir(), t.TempDir(), t.TempDir()
	victim := outside + "/victim"
	if err := os.WriteFile(victim, []byte("orig"), 0o644); err != nil {
		t.Fatal(err)
	}
	pol := Policy{Project: proj, TempDir: tmp}
	out, ws := run(t, pol, proj, `echo in > in.txt && echo t > "$TMPDIR/t" && echo x > /dev/null && echo ok
echo pwned > `+victim+`; touch `+outside+`/new; echo ". $?"`)
	if ws.ExitStatus() != 0 || !strings.HasPrefix(out, "ok\n") || !strings.HasSuffix(out, ". 1\n") || strings.Count(out, "Permission denied") != 2 {
		t.Fatalf("status %v, output:\n%s", ws, out)
	}
	if b, _ := os.ReadFile(victim); string(b) != "orig" {
		t.Errorf("the file outside holds %q", b)
	}
	if _, err := os.Stat(outside + "/new"); err == nil {
		t.Error("a file was created outside")
	}
	for _, f := range []string{proj + "/in.txt", tmp + "/t"} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	pol.Config.Mode = ReadOnly
	out, _ = run(t, pol, proj, `echo a > in2.txt; echo b > "$TMPDIR/t2" && echo tmp-ok`)
	if !strings.Contains(out, "in2.txt: Permission denied") || !strings.Contains(out, "tmp-ok") {
		t.Errorf("read-only: %s", out)
	}
	pol.Config.Mode = Off
	out, _ = run(t, pol, proj, `echo free > `+victim+` && echo off-ok`)
	if b, _ := os.ReadFile(victim); out != "off-ok\n" || string(b) != "free\n" {
		t.Errorf("off: %q, file %q", out, b)
	}
}

// TestDenyNetwork: TCP connect to a listener of the test is refused with
// DenyNetwork and works without.
func TestDenyNetwork(t *testing.T) {
	needLandlock(t, 4)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	dir := t.TempDir()
	script := `exec 3<>/dev/tcp/127.0.0.1/` + port + ` && echo connected`
	for _, deny := range []bool{false, true} {
		out, _ := run(t, Policy{Config: Config{DenyNetwork: deny}, Project: dir, TempDir: dir}, dir, script)
		if connected := strings.Contains(out, "connected"); connected == deny {
			t.Errorf("deny %v: %q", deny, out)
		}
	}
}

// TestScopedAbstractSocket: with ABI 6 a confined command cannot connect
// to an abstract unix socket the agent listens on; unconfined it can.
func TestScopedAbstractSocket(t *testing.T) {
	needLandlock(t, 6)
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed (the test's socket client)")
	}
	name := "dsh-sandbox-test-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	l, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	dir := t.TempDir()
	script := python + ` -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('\0` + name + `'); print('connected')" 2>&1`
	for _, mode := range []Mode{WorkspaceWrite, Off} {
		out, _ := run(t, Policy{Config: Config{Mode: mode}, Project: dir, TempDir: dir}, dir, script)
		if connected := strings.Contains(out, "connected"); connected != (mode == Off) {
			t.Errorf("%s: %q", mode, out)
		}
		if mode != Off && !strings.Contains(out, "PermissionError") {
			t.Errorf("%s: refused otherwise than by the kernel: %q", mode, out)
		}
	}
}

// TestSubreaperHelper: without a PID namespace the helper is a subreaper:
// a setsid'd and a double-forked process are still its descendants,
// SIGTERM reaches them (the helper passes it on), and so does SIGKILL; a
// confined command cannot signal a process outside its sandbox (ABI 6).
func TestSubreaperHelper(t *testing.T) {
	h := needLandlock(t, 1)
	noNamespaces = true
	t.Cleanup(func() { noNamespaces = false })
	dir := t.TempDir()
	pol := Policy{Project: dir, TempDir: dir}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		// The first sleep ignores SIGTERM only in the SIGKILL round.
		trap := ""
		if sig == syscall.SIGKILL {
			trap = "trap '' TERM; "
		}
		p, out := start(t, pol, dir, trap+`setsid sleep 300 & (sleep 301 &); echo started; wait`)
		buf := make([]byte, 8)
		if n, _ := out.Read(buf); string(buf[:n]) != "started\n" {
			t.Fatalf("output %q", buf[:n])
		}
		var desc []proctree.Proc
		waitFor(t, func() bool {
			procs, _ := proctree.Scan()
			desc = live(proctree.Descendants(procs, p.Pid()))
			return len(desc) == 3 // bash and the two sleeps
		})
		if sig == syscall.SIGKILL {
			_ = p.Signal(syscall.SIGTERM) // ignored by all three
			time.Sleep(100 * time.Millisecond)
		}
		if err := p.Signal(sig); err != nil && err != syscall.ESRCH {
			t.Fatalf("%v: %v", sig, err)
		}
		select {
		case <-p.Exited():
		case <-time.After(5 * time.Second):
			t.Fatalf("%v: the helper did not exit", sig)
		}
		for _, d := range desc {
			if q, ok := proctree.Stat(d.Pid); ok && !q.Zombie() {
				t.Errorf("%v: process %d survived", sig, d.Pid)
			}
		}
	}
	if h.LandlockABI >= 6 {
		out, _ := run(t, pol, dir, "kill -0 "+strconv.Itoa(os.Getpid())+" && echo reached")
		if !strings.Contains(out, "Operation not permitted") {
			t.Errorf("a confined command signalled the agent: %q", out)
		}
		pol.Config.Mode = Off
		if out, _ := run(t, pol, dir, "kill -0 "+strconv.Itoa(os.Getpid())+" && echo reached"); out != "reached\n" {
			t.Errorf("unconfined: %q", out)
		}
	}
}

// TestNamespaceHelper: in a PID namespace the command sees only its own
// processes (its own /proc), and SIGKILL to the group takes the whole tree
// with it, setsid'd processes included.
func TestNamespaceHelper(t *testing.T) {
	needNamespaces(t)
	dir := t.TempDir()
	pol := Policy{Project: dir, TempDir: dir}
	out, _ := run(t, pol, dir, `echo $$ $PPID; ls /proc | grep -c '^[0-9]'`)
	if f := strings.Fields(out); len(f) != 3 || f[1] != "1" {
		t.Errorf("pid, ppid, process count: %q", out)
	}
	marker := "301." + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	p, r := start(t, pol, dir, `setsid sleep `+marker+` & echo started; wait`)
	buf := make([]byte, 8)
	_, _ = r.Read(buf)
	var pids []int
	waitFor(t, func() bool { pids = byCmdline("sleep\x00" + marker); return len(pids) == 1 })
	if err := p.Signal(syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(byCmdline("sleep\x00"+marker)) == 0 })
}

func live(ps []proctree.Proc) []proctree.Proc {
	var out []proctree.Proc
	for _, p := range ps {
		if !p.Zombie() {
			out = append(out, p)
		}
	}
	return out
}

// byCmdline lists the live processes whose command line contains s.
func byCmdline(s string) []int {
	var out []int
	procs, _ := proctree.Scan()
	for _, p := range procs {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid) + "/cmdline")
		if err == nil && !p.Zombie() && strings.Contains(string(b), s) {
			out = append(out, p.Pid)
		}
	}
	return out
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	waitForWithin(t, 5*time.Second, cond)
}

// waitForWithin polls cond every 10 ms until it holds; t fails after d.
func waitForWithin(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestKillAdopted: when a helper is killed by someone else, what it had
// reaped goes to the agent (a subreaper); KillAdopted of the command's
// owner kills that, and nothing the agent started itself; KillAdopted of
// another owner (another Manager in the same process) leaves it alone.
func TestKillAdopted(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	noNamespaces = true
	t.Cleanup(func() { noNamespaces = false })
	dir := t.TempDir()
	owner, other := NewOwner(), NewOwner()
	if owner == other || owner == "" {
		t.Fatalf("NewOwner gave %q and %q", owner, other)
	}
	marker := "302." + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	p, r := startOwned(t, Policy{Config: Config{Mode: Off}, Project: dir, TempDir: dir}, dir, `setsid sleep `+marker+` > /dev/null 2>&1 & echo started; wait`, owner)
	buf := make([]byte, 8)
	_, _ = r.Read(buf)
	var pids []int
	waitFor(t, func() bool { pids = byCmdline("sleep\x00" + marker); return len(pids) == 1 })
	mine := exec.Command("sleep", "30")
	if err := mine.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = mine.Process.Kill(); _ = mine.Wait() }()
	_ = p.cmd.Process.Signal(syscall.SIGKILL) // the helper alone
	<-p.Exited()
	// The orphan goes to the agent once the helper has died; under load
	// that may take a while.
	waitForWithin(t, 30*time.Second, func() bool { q, ok := proctree.Stat(pids[0]); return ok && q.PPid == os.Getpid() })
	// The shell dies with its helper (a parent-death signal), but on a
	// loaded machine it may still be there, adopted too: wait for it.
	waitForWithin(t, 30*time.Second, func() bool { return len(byCmdline("setsid sleep "+marker)) == 0 })
	if n := KillAdopted(other); n != 0 {
		t.Errorf("KillAdopted of another owner killed %d, want 0", n)
	}
	if q, ok := proctree.Stat(pids[0]); !ok || q.Zombie() {
		t.Fatal("KillAdopted of another owner killed the orphan")
	}
	if n := KillAdopted(owner); n != 1 {
		t.Errorf("KillAdopted killed %d, want 1", n)
	}
	if _, ok := proctree.Stat(pids[0]); ok {
		t.Error("the adopted sleep is still there (or unreaped)")
	}
	if q, ok := proctree.Stat(mine.Process.Pid); !ok || q.Zombie() {
		t.Error("KillAdopted killed a child the agent started itself")
	}
}

// TestKillAdoptedSparesStarting: a sweep (another Manager's exit, or a
// Manager's own) that runs while Start has started a helper but not yet
// registered it leaves the helper alone: the sweep waits for the
// registration. The sweep is started inside that window (startedHook)
// and given 300 ms there; without the lock it kills the helper, and Start
// fails with "the helper ended before starting the command".
func TestKillAdoptedSparesStarting(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	owner := NewOwner()
	swept := make(chan int, 1)
	startedHook = func() {
		startedHook = nil // one start only
		go func() { swept <- KillAdopted(owner) }()
		select {
		case n := <-swept:
			swept <- n
		case <-time.After(300 * time.Millisecond):
		}
	}
	t.Cleanup(func() { startedHook = nil })
	p, r := startOwned(t, Policy{Config: Config{Mode: Off}, Project: dir, TempDir: dir}, dir, "echo started", owner)
	out, _ := io.ReadAll(r)
	if ws := p.WaitCommand(); string(out) != "started\n" || !ws.Exited() || ws.ExitStatus() != 0 {
		t.Errorf("the command ended %v with output %q", ws, out)
	}
	if n := <-swept; n != 0 {
		t.Errorf("the sweep killed %d processes, want 0", n)
	}
}

// TestHelperStartError: a command the helper cannot start is Start's
// error, with the helper's reason, and nothing is left running.
func TestHelperStartError(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []Mode{WorkspaceWrite, Off} {
		p, err := Start(Command{Path: dir + "/no-such-program", Args: []string{"x"}, Dir: dir, Env: os.Environ(),
			Policy: Policy{Config: Config{Mode: mode}, Project: dir, TempDir: dir}})
		if p != nil || err == nil || !strings.HasPrefix(err.Error(), "sandbox: start "+dir+"/no-such-program: no such file or directory") {
			t.Errorf("%s: %v, %v", mode, p, err)
		}
	}
}
