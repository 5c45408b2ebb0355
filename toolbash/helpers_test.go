package toolbash

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// rig is a Manager with its tools registered, stopped at the test's end.
type rig struct {
	t   *testing.T
	m   *Manager
	reg *tools.Registry
}

func newRig(t *testing.T) *rig {
	t.Helper()
	m := New(Options{TempDir: t.TempDir()})
	t.Cleanup(m.Shutdown)
	reg := tools.NewRegistry()
	for _, tl := range m.Tools() {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	return &rig{t: t, m: m, reg: reg}
}

// report is one live report and when it was made.
type report struct {
	at   time.Time
	text string
}

// recorder collects the live reports of one call and flags reports made
// after Execute returned.
type recorder struct {
	mu      sync.Mutex
	reports []report
	closed  bool
	late    int
}

func (r *recorder) progress(p tools.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		r.late++
	}
	r.reports = append(r.reports, report{time.Now(), p.Output})
}

func (r *recorder) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
}

func (r *recorder) all() []report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]report(nil), r.reports...)
}

func (r *recorder) text() string {
	var b strings.Builder
	for _, rp := range r.all() {
		b.WriteString(rp.text)
	}
	return b.String()
}

// call runs tool name with args (a Go value marshalled to JSON) in session
// s (nil for none) and returns the result and the live reports.
func (g *rig) call(ctx context.Context, s tools.Session, name string, args any) (tools.Result, *recorder) {
	g.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		g.t.Fatal(err)
	}
	rec := &recorder{}
	res := g.reg.Execute(ctx, &tools.Exec{CallID: "c1", Name: name, Args: raw, Session: s, Progress: rec.progress})
	rec.close()
	return res, rec
}

// run runs a foreground bash command in session s and returns the result
// text.
func (g *rig) run(s tools.Session, command string) string {
	g.t.Helper()
	res, _ := g.call(context.Background(), s, "bash", map[string]any{"command": command, "description": "test"})
	if res.IsError {
		g.t.Fatalf("%q: error result %q", command, tools.JoinText(res.Content))
	}
	return tools.JoinText(res.Content)
}

func text(r tools.Result) string { return tools.JoinText(r.Content) }

// waitUntil polls cond for up to d.
func waitUntil(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func texts(rs []report) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.text
	}
	return out
}

// groupMembers lists the live (non-zombie) processes of process group
// pgid, from /proc.
func groupMembers(pgid int) []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, d.Name())
		}
	}
	return out
}

// agentChildVar names, in a child test process started by runAgentChild,
// the test it plays the agent for.
const agentChildVar = "DSH_TOOLBASH_AGENT_CHILD"

// nobody is the unprivileged uid and gid runAgentChild uses as root.
const nobody = 65534

// runAgentChild runs test name of this test binary in a child process,
// with agentChildVar=name and env (KEY=value entries) added to the
// environment, and returns its combined output; it fails t when the child
// fails. As root, the child runs as uid and gid 65534 without
// supplementary groups, from a copy of the binary that user may execute,
// with its TMPDIR and HOME in a directory it owns: root reads any
// process's /proc files, so only then do the checks mean something. The
// test is skipped when the child cannot be started that way.
func runAgentChild(t *testing.T, name string, env ...string) string {
	t.Helper()
	bin := os.Args[0]
	env = append(append(os.Environ(), agentChildVar+"="+name), env...)
	var attr *syscall.SysProcAttr
	dir := ""
	if os.Geteuid() == 0 {
		var err error
		dir, err = os.MkdirTemp("", "dsh-toolbash-nobody-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		home := filepath.Join(dir, "home")
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(home, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(home, nobody, nobody); err != nil {
			t.Skipf("cannot give uid %d a directory, so cannot drop root for the agent: %v", nobody, err)
		}
		bin = filepath.Join(dir, filepath.Base(os.Args[0]))
		if err := copyExecutable(os.Args[0], bin); err != nil {
			t.Fatal(err)
		}
		env = append(env, "TMPDIR="+home, "HOME="+home)
		attr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env, cmd.Dir, cmd.SysProcAttr = env, dir, attr
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		t.Fatalf("the agent child failed: %v\n%s", err, out)
	case err != nil && attr != nil:
		t.Skipf("cannot start the agent child as uid %d to drop root's right to read every /proc/<pid>/environ: %v", nobody, err)
	case err != nil:
		t.Fatalf("start the agent child: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("the agent child did not run %s:\n%s", name, out)
	}
	return string(out)
}

// copyExecutable copies file src to a new file dst with mode 0755.
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
