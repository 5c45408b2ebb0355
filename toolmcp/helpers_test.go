package toolmcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// serverBin is the test MCP server (testdata/mcpserver), built once by
// TestMain.
var serverBin string

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		runHelper()
		return
	}
	dir, err := os.MkdirTemp("", "toolmcp-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "mcpserver")
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	build := exec.Command(goTool, "build", "-o", serverBin, "./testdata/mcpserver")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the test MCP server:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixture is one session's worth of MCP servers: the shared registry
// (where the execute chain runs), the session and its registry, the set,
// and the notices it gave.
type fixture struct {
	t       *testing.T
	shared  *tools.Registry
	session tools.Session
	set     *Set

	mu      sync.Mutex
	notices []string
}

// stdioServer is the config of the test server over stdio, writing its
// events to events.
func stdioServer(name, events string, flags ...string) Server {
	return Server{Name: name, Command: serverBin, Args: append([]string{"-events", events, "-name", name}, flags...)}
}

// start starts servers for a fresh session and waits for them.
func start(t *testing.T, o Options, servers ...Server) *fixture {
	t.Helper()
	f := &fixture{t: t, shared: tools.NewRegistry(), session: tools.NewSession("s-"+t.Name(), t.TempDir())}
	o.Registry = tools.SessionTools(f.session)
	o.Cwd = f.session.Cwd()
	o.Notice = func(name, reason string) {
		f.mu.Lock()
		f.notices = append(f.notices, name+": "+reason)
		f.mu.Unlock()
	}
	f.set = Start(servers, o)
	t.Cleanup(f.set.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.set.Wait(ctx); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return f
}

func (f *fixture) noticeList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.notices...)
}

// waitNotice waits up to 10 s for a notice containing all of parts.
func (f *fixture) waitNotice(parts ...string) string {
	f.t.Helper()
	var got []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got = f.noticeList()
		for _, n := range got {
			if containsAll(n, parts...) {
				return n
			}
		}
	}
	f.t.Fatalf("no notice with %q among %q", parts, got)
	return ""
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// call runs a tool call of the session through the shared registry.
func (f *fixture) call(ctx context.Context, name, args string) tools.Result {
	return f.shared.Execute(ctx, &tools.Exec{CallID: "call_1", Name: name, Args: json.RawMessage(args), Session: f.session})
}

func (f *fixture) text(name, args string) string {
	f.t.Helper()
	r := f.call(context.Background(), name, args)
	if r.IsError {
		f.t.Fatalf("%s(%s) failed: %s", name, args, tools.JoinText(r.Content))
	}
	return tools.JoinText(r.Content)
}

func (f *fixture) names() []string {
	var out []string
	for _, s := range f.shared.SchemasFor(f.session) {
		out = append(out, s.Name)
	}
	return out
}

// waitTool waits up to 10 s for the session's tool list to have (or,
// present false, lack) name.
func (f *fixture) waitTool(name string, present bool) {
	f.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, ok := f.shared.Lookup(f.session, name)
		if ok == present {
			return
		}
	}
	f.t.Fatalf("tool %s present=%v never happened; tools: %v", name, present, f.names())
}

// readEvents returns the server's event lines.
func readEvents(path string) []string {
	b, _ := os.ReadFile(path)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// waitEvent waits up to 10 s for the event line ev.
func waitEvent(t *testing.T, path, ev string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, l := range readEvents(path) {
			if l == ev {
				return
			}
		}
	}
	t.Fatalf("event %q never came; events: %q", ev, readEvents(path))
}

// gone reports whether process pid no longer exists (or is a zombie
// nobody of ours will reap).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] == 'Z'
	}
	return false
}

// waitGone waits up to 10 s for pid to be gone.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if gone(pid) {
			return
		}
	}
	t.Fatalf("%s (pid %d) is still running", what, pid)
}

// httpServer starts the test server over HTTP or SSE and returns its
// endpoint; it is killed when the test ends.
func httpServer(t *testing.T, transport, events string, flags ...string) string {
	t.Helper()
	cmd := exec.Command(serverBin, append([]string{"-transport", transport, "-events", events}, flags...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the server's URL: %v", err)
	}
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "URL ")
	if !ok {
		t.Fatalf("first line %q", line)
	}
	return u
}

// helperEnv makes the test binary a helper agent process: it starts the
// stdio server given by TOOLMCP_HELPER (the test server binary, deaf to
// the end of its stdin), prints
// the server's pid and waits to be killed.
const helperEnv = "TOOLMCP_HELPER"

func runHelper() {
	serverBin = os.Getenv(helperEnv)
	s := tools.NewSession("helper", os.TempDir())
	set := Start([]Server{{Name: "notes", Command: serverBin, Args: []string{"-ignore-eof"}}}, Options{Registry: tools.SessionTools(s)})
	if err := set.Wait(context.Background()); err != nil {
		os.Exit(2)
	}
	reg := tools.NewRegistry()
	r := reg.Execute(context.Background(), &tools.Exec{CallID: "c", Name: "mcp__notes__pid", Session: s})
	fmt.Println(tools.JoinText(r.Content))
	time.Sleep(time.Minute)
	os.Exit(3)
}

// syncBuffer is a bytes.Buffer safe for concurrent writers (a log sink).
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
