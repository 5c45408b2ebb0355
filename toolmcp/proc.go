package toolmcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Grace periods of a stdio server: stopGrace between closing its stdin
// and SIGTERM, and between SIGTERM and SIGKILL (of the whole process
// group); pipeGrace is how long its stdout may stay open after it
// exited before the agent closes it.
var (
	stopGrace = time.Second
	pipeGrace = 500 * time.Millisecond
)

// stderrTail is how much of a stdio server's stderr is kept for the
// notice when it fails, in bytes.
const stderrTail = 2 << 10

// proc is one started stdio server: a child process leading its own
// process group (killed with the parent on Linux: Pdeathsig), its pipes
// and the tail of its stderr. The goroutines it starts (the stderr
// reader, the waiter) end when the process group is gone.
type proc struct {
	cmd    *exec.Cmd
	pgid   int
	stdin  *os.File // our end: writing
	stdout *os.File // our end: reading
	done   chan struct{}

	mu   sync.Mutex
	tail []byte
	err  error // set once the process was reaped: how it ended
}

// procTransport is an mcp.Transport that starts a stdio server under the
// agent's process rules and speaks newline-delimited JSON over its
// stdin/stdout (the SDK's IOTransport).
type procTransport struct {
	cmd  *exec.Cmd
	proc *proc // set by Connect
}

// stdioCommand builds the command of s: Dir is cwd, the environment is
// the agent's less the variables whose names look like credentials
// (KEY, SECRET, TOKEN in any case: the agent's API key is no server's
// business, as for shell commands), then s.Env (which wins, secrets
// included: the editor passed them on purpose).
func stdioCommand(s Server, cwd string) *exec.Cmd {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = cwd
	cmd.Env = serverEnv(os.Environ(), s.Env)
	cmd.SysProcAttr = sysProcAttr()
	return cmd
}

func serverEnv(environ []string, extra []EnvVariable) []string {
	out := make([]string, 0, len(environ)+len(extra))
	set := map[string]bool{}
	for _, e := range extra {
		set[e.Name] = true
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if secretName(name) || set[name] {
			continue
		}
		out = append(out, kv)
	}
	for _, e := range extra {
		out = append(out, e.Name+"="+e.Value)
	}
	return out
}

func secretName(name string) bool {
	up := strings.ToUpper(name)
	return strings.Contains(up, "KEY") || strings.Contains(up, "SECRET") || strings.Contains(up, "TOKEN")
}

// Connect starts the process and returns the JSON-RPC connection over
// its pipes.
func (t *procTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	p, err := startProc(t.cmd)
	if err != nil {
		return nil, err
	}
	t.proc = p
	return (&mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}).Connect(ctx)
}

func startProc(cmd *exec.Cmd) (*proc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW, outR, outW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	closeFiles(inR, outW, errW)
	if err != nil {
		closeFiles(inW, outR, errR)
		return nil, err
	}
	p := &proc{cmd: cmd, pgid: cmd.Process.Pid, stdin: inW, stdout: outR, done: make(chan struct{})}
	stderrDone := make(chan struct{})
	go p.readStderr(errR, stderrDone)
	go p.wait(stderrDone)
	return p, nil
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// readStderr keeps the last stderrTail bytes of the server's stderr.
func (p *proc) readStderr(r *os.File, done chan struct{}) {
	defer close(done)
	defer r.Close()
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			p.mu.Lock()
			p.tail = append(p.tail, buf[:n]...)
			if len(p.tail) > stderrTail {
				p.tail = append(p.tail[:0], p.tail[len(p.tail)-stderrTail:]...)
			}
			p.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// wait reaps the server, kills what it left in its process group (no
// orphans), lets stdout drain, and closes done.
func (p *proc) wait(stderrDone chan struct{}) {
	err := p.cmd.Wait()
	killLeftovers(p)
	p.mu.Lock()
	if err == nil {
		err = errors.New("exited")
	}
	p.err = err
	p.mu.Unlock()
	select {
	case <-stderrDone:
	case <-time.After(pipeGrace):
	}
	// A process that left the group may still hold stdout: close our
	// end after a grace, so the connection ends.
	time.AfterFunc(pipeGrace, func() { _ = p.stdout.Close() })
	close(p.done)
}

// reason says how the process ended (its exit status or signal and the
// last line of its stderr), "" while it runs.
func (p *proc) reason() string {
	select {
	case <-p.done:
	default:
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.err.Error()
	if line := lastLine(string(p.tail)); line != "" {
		r += ": " + line
	}
	return r
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.TrimSpace(s)
}

// stop ends the server: its stdin is closed (the MCP way to ask a stdio
// server to exit), then the group gets SIGTERM after stopGrace and
// SIGKILL after another; it returns once the process is reaped.
func (p *proc) stop() {
	_ = p.stdin.Close()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-p.done:
			return
		case <-time.After(stopGrace):
		}
		signalGroup(p, sig)
	}
	<-p.done
}

// errExited says how the process ended.
func errExited(p *proc) error {
	return fmt.Errorf("the server process ended (%s)", p.reason())
}
