package toolbash

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/internal/unpriv"
	"github.com/dsh-acp/dsh-acp/sandbox"
	"github.com/dsh-acp/dsh-acp/tools"
)

// needSandbox skips t when the kernel cannot confine commands (or, with
// namespaces, give each its own PID namespace), except under CI=true: CI
// runs on kernels that can, so there it fails.
func needSandbox(t *testing.T, namespaces bool) {
	t.Helper()
	h := sandbox.Probe()
	why := ""
	switch {
	case h.LandlockABI == 0:
		why = h.LandlockReason
	case namespaces && !h.Namespaces:
		why = h.NamespaceReason
	default:
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true, but: %s", why)
	}
	t.Skipf("not here: %s", why)
}

// victim is a file outside every project, holding "orig".
func victim(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(p, []byte("orig"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func unchanged(t *testing.T, path string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != "orig" {
		t.Errorf("%s now holds %q (%v)", path, b, err)
	}
}

// sandboxLine is the start of the line a blocked write adds.
func sandboxLine(path string) string { return "[sandbox: the write to " + path + " was blocked" }

// TestSandboxWriteOutside: a write outside the project fails, the file is
// untouched, and the result (and the live view) has the command's own
// error, then the sandbox line, then the exit status, still read back
// right.
func TestSandboxWriteOutside(t *testing.T) {
	needSandbox(t, false)
	t.Parallel()
	g := newRig(t)
	s := tools.NewSession("s1", t.TempDir())
	v := victim(t)
	res, rec := g.call(context.Background(), s, "bash", map[string]any{"command": "echo pwned > " + v, "description": "d"})
	got := text(res)
	want := "[stderr]\nbash: line 1: " + v + ": Permission denied\n" + sandboxLine(v)
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "(the user will be asked)]\n[exit code: 1]") {
		t.Errorf("result:\n%s\nwant it to start with:\n%s", got, want)
	}
	if code, _ := parseExit(got); code != 1 {
		t.Errorf("exit code read back as %d", code)
	}
	if !strings.Contains(rec.text(), sandboxLine(v)) {
		t.Errorf("live view lacks the sandbox line: %q", rec.text())
	}
	unchanged(t, v)
	// A failure the sandbox did not cause gets no line.
	if got := g.run(s, "echo oops >&2; exit 3"); strings.Contains(got, "[sandbox:") {
		t.Errorf("sandbox line without a blocked write: %q", got)
	}
}

// TestSandboxProjectAndTmp: writes inside the project and to TMPDIR work;
// TMPDIR is a private directory per session (mode 0700, under
// Options.TempDir), removed when the session closes and at Shutdown.
func TestSandboxProjectAndTmp(t *testing.T) {
	needSandbox(t, false)
	t.Parallel()
	base := t.TempDir()
	g := newRigWith(t, Options{TempDir: base})
	a, b := tools.NewSession("a", t.TempDir()), tools.NewSession("b", t.TempDir())
	out := g.run(a, `echo in > in.txt && mkdir -p sub && mv in.txt sub/ && echo t > "$TMPDIR/t" && cat "$TMPDIR/t" && echo "$TMPDIR"`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != "t" {
		t.Fatalf("output %q", out)
	}
	tmpA := lines[1]
	if filepath.Dir(tmpA) != base || !strings.HasPrefix(filepath.Base(tmpA), "dsh-tmp-") {
		t.Errorf("TMPDIR %q is not a dsh-tmp- directory in %s", tmpA, base)
	}
	if st, err := os.Stat(tmpA); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("TMPDIR %s: %v, %v", tmpA, st.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(a.Cwd(), "sub", "in.txt")); err != nil {
		t.Error(err)
	}
	if again := strings.TrimSpace(g.run(a, `echo "$TMPDIR"`)); again != tmpA {
		t.Errorf("second call's TMPDIR %q, want %q", again, tmpA)
	}
	tmpB := strings.TrimSpace(g.run(b, `echo "$TMPDIR"`))
	if tmpB == tmpA {
		t.Error("two sessions share a TMPDIR")
	}
	// Another session's TMPDIR is outside this one's sandbox.
	if got := g.run(b, `echo x > `+tmpA+`/from-b || true`); !strings.Contains(got, sandboxLine(tmpA+"/from-b")) && !strings.Contains(got, "Permission denied") {
		t.Errorf("session b wrote into a's TMPDIR: %q", got)
	}
	tools.CloseSession(a)
	if _, err := os.Stat(tmpA); !os.IsNotExist(err) {
		t.Errorf("a's TMPDIR after close: %v", err)
	}
	g.m.Shutdown()
	if _, err := os.Stat(tmpB); !os.IsNotExist(err) {
		t.Errorf("b's TMPDIR after Shutdown: %v", err)
	}
}

// TestSandboxReadOnly: read-only lets a command write TMPDIR only.
func TestSandboxReadOnly(t *testing.T) {
	needSandbox(t, false)
	t.Parallel()
	g := newRigWith(t, Options{Sandbox: sandbox.Config{Mode: sandbox.ReadOnly}})
	s := tools.NewSession("s1", t.TempDir())
	in := filepath.Join(s.Cwd(), "in.txt")
	got := g.run(s, `echo t > "$TMPDIR/t" && echo tmp-ok; echo x > in.txt`)
	if !strings.HasPrefix(got, "tmp-ok\n") || !strings.Contains(got, sandboxLine(in)) {
		t.Errorf("result %q", got)
	}
	if _, err := os.Stat(in); err == nil {
		t.Error("read-only wrote into the project")
	}
	if desc := toldAbout(g.reg, "bash"); !strings.Contains(desc, "the project is read-only") || !strings.Contains(got, "the project is read-only") {
		t.Errorf("the description or the line does not say the project is read-only:\n%s\n%s", desc, got)
	}
}

// TestSandboxOff: --sandbox off runs commands as before: writes anywhere,
// the agent's TMPDIR, the agent's PID namespace, no sandbox text and no
// extra permission for dangerously_disable_sandbox.
func TestSandboxOff(t *testing.T) {
	agentTmp := t.TempDir()
	t.Setenv("TMPDIR", agentTmp)
	g := newRigWith(t, Options{Sandbox: sandbox.Config{Mode: sandbox.Off}})
	s := tools.NewSession("s1", t.TempDir())
	v := victim(t)
	ns, _ := os.Readlink("/proc/self/ns/pid")
	got := g.run(s, `echo free > `+v+` && echo "$TMPDIR" && readlink /proc/self/ns/pid`)
	if got != agentTmp+"\n"+ns+"\n" {
		t.Errorf("result %q, want TMPDIR %s and namespace %s", got, agentTmp, ns)
	}
	if b, _ := os.ReadFile(v); string(b) != "free\n" {
		t.Errorf("file %q", b)
	}
	if g.m.Confined() {
		t.Error("Confined under off")
	}
	bash, _ := g.reg.Get("bash")
	if strings.Contains(toldAbout(g.reg, "bash"), "sandbox") {
		t.Error("the description talks of a sandbox under off")
	}
	if acc, ok := bash.Access(json.RawMessage(`{"command":"ls","description":"d","dangerously_disable_sandbox":true}`)); !ok || acc.Unsandboxed {
		t.Errorf("Access = %+v, %v; want no Unsandboxed without a sandbox", acc, ok)
	}
}

// TestSandboxBackground: a background task is confined too, and
// bash_output adds the sandbox line to its failed end.
func TestSandboxBackground(t *testing.T) {
	needSandbox(t, false)
	t.Parallel()
	g := newRig(t)
	s := tools.NewSession("s1", t.TempDir())
	v := victim(t)
	id := g.startBg(s, "echo pwned > "+v)
	waitUntil(t, 30*time.Second, g.m.tasks[id].p.finished)
	got := g.output(s, id)
	if !strings.Contains(got, v+": Permission denied\n") || !strings.Contains(got, sandboxLine(v)) ||
		!strings.HasSuffix(got, "\n[status: completed, exit code: 1]") {
		t.Errorf("bash_output %q", got)
	}
	unchanged(t, v)
}

// TestSandboxDisable: dangerously_disable_sandbox runs that one command
// unconfined, and its Access says so (the permission check then asks);
// its card says it runs outside the sandbox.
func TestSandboxDisable(t *testing.T) {
	needSandbox(t, false)
	t.Parallel()
	g := newRig(t)
	s := tools.NewSession("s1", t.TempDir())
	v := victim(t)
	args := map[string]any{"command": "echo out > " + v, "description": "Write outside", "dangerously_disable_sandbox": true}
	res, _ := g.call(context.Background(), s, "bash", args)
	if text(res) != "(no output)" {
		t.Errorf("result %q", text(res))
	}
	if b, _ := os.ReadFile(v); string(b) != "out\n" {
		t.Errorf("file %q", b)
	}
	bash, _ := g.reg.Get("bash")
	raw, _ := json.Marshal(args)
	if acc, ok := bash.Access(raw); !ok || !acc.Unsandboxed || acc.Command != args["command"] {
		t.Errorf("Access = %+v, %v", acc, ok)
	}
	delete(args, "dangerously_disable_sandbox")
	raw, _ = json.Marshal(args)
	if acc, _ := bash.Access(raw); acc.Unsandboxed {
		t.Error("Unsandboxed without the flag")
	}
	view, _ := presentBashCall(bashArgs{Command: "x", Description: "Write outside", DangerouslyDisableSandbox: true}).(tools.TerminalCall)
	if view.Description != "Outside the sandbox: Write outside" {
		t.Errorf("card description %q", view.Description)
	}
	if !strings.Contains(toldAbout(g.reg, "bash"), "dangerously_disable_sandbox: true") {
		t.Error("the description does not tell the model about the sandbox")
	}
}

// TestSandboxBuilds: go build, go test and npm ci of small projects work
// inside the sandbox, offline.
func TestSandboxBuilds(t *testing.T) {
	needSandbox(t, false)
	t.Parallel()
	g := newRig(t)
	run := func(s tools.Session, cmd string) string {
		t.Helper()
		res, _ := g.call(context.Background(), s, "bash", map[string]any{"command": cmd, "description": "build", "timeoutMs": 600000})
		return text(res)
	}
	goProj := copyTree(t, "testdata/sandbox/gomod")
	got := run(tools.NewSession("go", goProj), "export GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local; go build -o tiny . && ./tiny && go test -count=1 ./... 2>&1")
	if !strings.HasPrefix(got, "5\nok  \texample.com/tiny") {
		t.Errorf("go build and test:\n%s", got)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	npmProj := copyTree(t, "testdata/sandbox/npm")
	got = run(tools.NewSession("npm", npmProj), "npm ci --offline --no-audit --no-fund --no-update-notifier 2>&1 && npm test --silent 2>&1")
	if !strings.HasSuffix(got, "\n42\n") || strings.Contains(got, "[exit code") {
		t.Errorf("npm ci and test:\n%s", got)
	}
	if _, err := os.Lstat(filepath.Join(npmProj, "node_modules", "dep")); err != nil {
		t.Error(err)
	}
}

// copyTree copies directory src into a fresh temporary directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// sleepMarker is a sleep duration unique to this run, so that the test
// can find its processes by their command line.
func sleepMarker(n int) string {
	return fmt.Sprintf("300.%d%d", time.Now().UnixNano()%1e9, n)
}

// sleeps lists the live `sleep ARG` processes.
func sleeps(arg string) []string { return commandPids("sleep", "sleep\x00"+arg+"\x00") }

// orphanCommand starts a setsid'd sleep and a double-forked one (its
// parent subshell exits at once) and prints started.
func orphanCommand(a, b string) string {
	return "setsid sleep " + a + " > /dev/null 2>&1 & (sleep " + b + " > /dev/null 2>&1 &); echo started"
}

// TestSandboxOrphans: processes that left the process group (setsid) or
// lost their parent (double fork) are found and killed when the session
// closes and when the agent exits, from a foreground command and from a
// background task, with a PID namespace per command and (under
// --sandbox off) with the subreaper helper.
func TestSandboxOrphans(t *testing.T) {
	for _, mode := range []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.Off} {
		t.Run(string(mode), func(t *testing.T) {
			if mode != sandbox.Off {
				needSandbox(t, true)
			}
			t.Parallel()
			g := newRigWith(t, Options{Sandbox: sandbox.Config{Mode: mode}})
			s := tools.NewSession("s1", t.TempDir())
			m := []string{sleepMarker(1), sleepMarker(2), sleepMarker(3), sleepMarker(4)}
			if got := g.run(s, orphanCommand(m[0], m[1])); got != "started\n" {
				t.Fatalf("foreground: %q", got)
			}
			g.startBg(s, orphanCommand(m[2], m[3])+"; wait")
			for _, x := range m {
				waitUntil(t, 30*time.Second, func() bool { return len(sleeps(x)) == 1 })
			}
			tools.CloseSession(s)
			for _, x := range m {
				waitUntil(t, 30*time.Second, func() bool { return len(sleeps(x)) == 0 })
			}
			// At exit.
			s2 := tools.NewSession("s2", t.TempDir())
			m2 := []string{sleepMarker(5), sleepMarker(6)}
			g.run(s2, orphanCommand(m2[0], m2[1]))
			for _, x := range m2 {
				waitUntil(t, 30*time.Second, func() bool { return len(sleeps(x)) == 1 })
			}
			g.m.Shutdown()
			for _, x := range m2 {
				if n := sleeps(x); len(n) > 0 {
					t.Errorf("sleep %s outlived Shutdown: %v", x, n)
				}
			}
		})
	}
}

// sigkillMarkerVar passes the sleep markers to the agent child of
// TestSandboxAgentSIGKILL (and tells it that it is that child).
const sigkillMarkerVar = "DSH_TOOLBASH_SIGKILL_MARKERS"

// TestSandboxAgentSIGKILL: when the agent is killed with SIGKILL (it can
// clean nothing up), a command's whole tree still dies with it, setsid'd
// and double-forked processes included: the helper gets a parent-death
// SIGKILL, and the kernel then kills its PID namespace. The agent is a
// child test process.
func TestSandboxAgentSIGKILL(t *testing.T) {
	if markers := os.Getenv(sigkillMarkerVar); markers != "" {
		m := strings.Fields(markers)
		g := newRig(t)
		s := tools.NewSession("s1", t.TempDir())
		g.run(s, orphanCommand(m[0], m[1]))
		g.startBg(s, orphanCommand(m[2], m[3])+"; sleep "+m[4])
		for _, x := range m {
			waitUntil(t, 30*time.Second, func() bool { return len(sleeps(x)) == 1 })
		}
		fmt.Println("READY")
		time.Sleep(time.Minute)
		return
	}
	needSandbox(t, true)
	t.Parallel()
	m := []string{sleepMarker(1), sleepMarker(2), sleepMarker(3), sleepMarker(4), sleepMarker(5)}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSandboxAgentSIGKILL$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), sigkillMarkerVar+"="+strings.Join(m, " "))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "READY" {
				ready <- true
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("the agent child ended before it was ready")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the agent child was not ready within 20 s")
	}
	for _, x := range m {
		if len(sleeps(x)) != 1 {
			t.Fatalf("sleep %s is not running", x)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for _, x := range m {
		waitUntil(t, 30*time.Second, func() bool { return len(sleeps(x)) == 0 })
	}
}

// TestSandboxUnprivileged runs the sandbox as an unprivileged user
// (unpriv.Run: as root the agent child runs as uid 65534): the helper maps
// the ids of its user namespace itself (an undumpable agent cannot),
// writes outside are blocked, and a refusal the sandbox did not cause (a
// root-owned directory) gets no sandbox line.
func TestSandboxUnprivileged(t *testing.T) {
	if unpriv.InChild(t) {
		g := newRig(t)
		s := tools.NewSession("s1", t.TempDir())
		outside := filepath.Join(t.TempDir(), "outside")
		got := g.run(s, `echo in > in.txt && echo "ppid=$PPID uid=$(id -u)"; echo x > `+outside+`; touch /etc/dsh-sandbox-test`)
		if !strings.HasPrefix(got, fmt.Sprintf("ppid=1 uid=%d\n", os.Getuid())) || !strings.Contains(got, sandboxLine(outside)) {
			t.Errorf("result:\n%s", got)
		}
		if strings.Contains(got, sandboxLine("/etc/dsh-sandbox-test")) || !strings.Contains(got, "/etc/dsh-sandbox-test': Permission denied") {
			t.Errorf("the refusal of /etc (not the sandbox's) is misreported:\n%s", got)
		}
		if _, err := os.Stat(outside); err == nil {
			t.Error("wrote outside")
		}
		fmt.Println("OUT:ok")
		return
	}
	needSandbox(t, true)
	t.Parallel()
	if out := unpriv.Run(t); !strings.Contains(out, "OUT:ok") {
		t.Fatalf("the agent child:\n%s", out)
	}
}

// TestSandboxAdditionalDirectories: a session's additional directories
// are writable under workspace-write, like its cwd; another session's are
// not.
func TestSandboxAdditionalDirectories(t *testing.T) {
	needSandbox(t, false)
	t.Parallel()
	g := newRig(t)
	extra := t.TempDir()
	s := tools.NewSession("s1", t.TempDir())
	tools.SetAdditionalDirectories(s, []string{extra})
	if got := g.run(s, "echo in > "+filepath.Join(extra, "f")); strings.Contains(got, "[sandbox:") {
		t.Errorf("write to the additional directory: %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(extra, "f")); err != nil || string(b) != "in\n" {
		t.Errorf("the additional directory's file: %q, %v", b, err)
	}
	other := tools.NewSession("s2", t.TempDir())
	target := filepath.Join(extra, "g")
	if got := g.run(other, "echo x > "+target); !strings.Contains(got, sandboxLine(target)) {
		t.Errorf("another session wrote into s1's additional directory: %q", got)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("%s exists: %v", target, err)
	}
}

// toldAbout is the description the model is told for the tool name
// (Registry.Schemas: the sandbox's part comes from the probe), or "".
func toldAbout(reg *tools.Registry, name string) string {
	for _, s := range reg.Schemas() {
		if s.Name == name {
			return s.Description
		}
	}
	return ""
}
