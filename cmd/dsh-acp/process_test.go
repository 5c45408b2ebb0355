package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/internal/acptest"
)

// TestMain removes the binary built for the process tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	for _, dir := range benchDirs {
		os.RemoveAll(dir)
	}
	acptest.RemoveBuilt()
	os.Exit(code)
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary builds bin/dsh-acp into a temporary directory once per test run,
// statically (CGO_ENABLED=0) as the README and the release build do.
func binary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dsh-acp-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "dsh-acp")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *bytes.Buffer
	done   chan error
}

func startProc(t testing.TB, args ...string) *proc {
	t.Helper()
	return startProcWith(t, nil, args...)
}

// startProcWith is startProc with env added (it wins over the defaults:
// e.g. a DSH_STATE_DIR shared by two processes).
func startProcWith(t testing.TB, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(append(os.Environ(), "DSH_STATE_DIR="+t.TempDir(), "DSH_API_KEY=", "DEEPSEEK_API_KEY="), env...)
	return startCmd(t, cmd)
}

// startCmd starts cmd (not started yet) with its stdin and stdout piped
// and its stdout read line by line.
func startCmd(t testing.TB, cmd *exec.Cmd) *proc {
	t.Helper()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	p := &proc{cmd: cmd, stdin: stdin, lines: make(chan []byte, 1024), stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(stdout)
		for {
			l, err := r.ReadBytes('\n')
			if len(l) > 0 {
				p.lines <- l
			}
			if err != nil {
				close(p.lines)
				p.done <- cmd.Wait()
				return
			}
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return p
}

func (p *proc) send(t testing.TB, line string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (p *proc) next(t testing.TB) []byte {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			t.Fatalf("stdout ended; stderr:\n%s", p.stderr)
		}
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("no output within 30 s")
	}
	return nil
}

// newSession sends session/new (request id, cwd, mcpServers as JSON)
// and returns the new session's id and the answer's line, failing t
// when the answer holds no session id.
func (p *proc) newSession(t testing.TB, id int, cwd, mcpServers string) (string, []byte) {
	t.Helper()
	p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":%s,"mcpServers":%s}}`, id, jsonQuote(cwd), mcpServers))
	l := p.next(t)
	var ns struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if err := json.Unmarshal(l, &ns); err != nil || ns.Result.SessionID == "" {
		t.Fatalf("session/new answered %s (%v)", l, err)
	}
	return ns.Result.SessionID, l
}

// answer reads lines up to the answer to request id (a line holding
// `"id":ID,` or starting with `{"id":ID`) and returns every line read,
// the answer last.
func (p *proc) answer(t testing.TB, id int) [][]byte {
	t.Helper()
	var ls [][]byte
	for {
		l := p.next(t)
		ls = append(ls, l)
		if s := string(l); strings.Contains(s, `"id":`+strconv.Itoa(id)+`,`) || strings.HasPrefix(s, `{"id":`+strconv.Itoa(id)) {
			return ls
		}
	}
}

// wait waits for the process to exit and returns its exit code and how
// long it took.
func (p *proc) wait(t testing.TB) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	for range p.lines {
		t.Error("unexpected output after shutdown")
	}
	select {
	case err := <-p.done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, time.Since(start)
	case <-time.After(30 * time.Second):
		t.Fatal("process did not exit within 30 s")
	}
	return -1, 0
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`

// TestProcessEOF: the binary answers, then exits 0 soon after stdin ends,
// and everything on stdout is one JSON object per line.
func TestProcessEOF(t *testing.T) {
	p := startProc(t)
	p.send(t, initLine)
	// Closing stdin right after a request: the request already read is
	// still answered.
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	p.stdin.Close()
	var got []string
	for l := range p.lines {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q", l)
		}
		if m["method"] == "session/update" {
			continue // the new session's slash commands, after its answer
		}
		got = append(got, fmt.Sprint(m["id"]))
	}
	// Requests are served concurrently: both must be answered, in any
	// order.
	sort.Strings(got)
	if strings.Join(got, ",") != "1,2" {
		t.Errorf("responses for ids %v, want 1 and 2", got)
	}
	code, _ := p.wait(t)
	if code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, p.stderr)
	}
}

// TestProcessSIGTERM: SIGTERM makes the agent exit 0.
func TestProcessSIGTERM(t *testing.T) {
	p := startProc(t)
	p.send(t, initLine)
	p.next(t)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	code, _ := p.wait(t)
	if code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
}

// TestVersionAndHelp: `version` and `help` work
// like --version and --help; the help asked for goes to stdout and exits
// 0; a bad flag prints the usage to stderr and exits 2.
func TestVersionAndHelp(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}, {"--sandbox", "off", "--version"}, {"version", "--sandbox", "off"}} {
		out, err := exec.Command(binary(t), args...).Output()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		// A fourth line names the caches under workspace-write.
		caches := len(args) == 1
		if err != nil || len(lines) != map[bool]int{true: 4, false: 3}[caches] || lines[0] != "dsh-acp "+version ||
			!strings.HasPrefix(lines[1], "sandbox: ") || !strings.HasPrefix(lines[2], "processes: ") ||
			caches && !strings.HasPrefix(lines[3], "caches: writable ") {
			t.Errorf("%v = %q, %v", args, out, err)
			continue
		}
		if len(args) > 1 && lines[1] != "sandbox: off" {
			t.Errorf("%v: %q, want sandbox: off", args, lines[1])
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		cmd := exec.Command(binary(t), args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		if err != nil || stderr.Len() != 0 {
			t.Errorf("%v: err %v, stderr %q (must stay empty)", args, err, stderr.String())
		}
		for _, flag := range []string{"-base-url", "-model", "-max-steps", "-mode", "-replay", "-record", "-log-level", "-location-line-base", "-sandbox", "-sandbox-network", "-thinking", "-context-window", "-prices", "-trace", "-titles", "-compact-threshold", "-version", "DSH_API_KEY", "DSH_TRACE", "dsh-acp help"} {
			if !strings.Contains(string(stdout), flag) {
				t.Errorf("%v does not mention %s", args, flag)
			}
		}
	}
	cmd := exec.Command(binary(t), "--no-such-flag")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || len(stdout) != 0 ||
		!strings.Contains(stderr.String(), "flag provided but not defined") || !strings.Contains(stderr.String(), "dsh-acp --help") ||
		strings.Count(stderr.String(), "\n") != 2 {
		t.Errorf("a bad flag: %v, stdout %q, stderr %q", err, stdout, stderr.String())
	}
	if err := exec.Command(binary(t), "--max-steps", "0").Run(); err == nil {
		t.Error("--max-steps 0 was accepted")
	}
}

// TestDemo runs `dsh-acp demo` from another directory.
func TestDemo(t *testing.T) {
	cmd := exec.Command(binary(t), "demo")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{"agent_thought_chunk", "agent_message_chunk", "stop        end_turn",
		`plan                [in_progress] Read config.txt`, `title="Read config.txt" kind=read`,
		`diff config.txt: "mode=DEBUG\nlevel=info" -> "mode=RELEASE\nlevel=info"`,
		`request_permission  call_demo_edit "Edit config.txt" -> allow-once`,
		`output="1:mode=RELEASE\n"`, "status=completed exit=0", "available_commands_update /compact /init /review"} {
		if !strings.Contains(s, want) {
			t.Errorf("demo output lacks %q:\n%s", want, s)
		}
	}
}

// TestBinaryIsStatic: the binary as the README builds it (CGO_ENABLED=0)
// has no dynamic loader and no shared libraries, so nothing is resolved
// at start-up; a dependency that needs cgo or an external link would
// break this (or the build).
func TestBinaryIsStatic(t *testing.T) {
	f, err := elf.Open(binary(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary has a %v program header: it is dynamically linked", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
}
