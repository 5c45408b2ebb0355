package toolbash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/dsh-acp/dsh-acp/sandbox"
)

// Grace periods: KillGrace between SIGTERM and SIGKILL for a timeout, a
// cancel or bash_kill; ShutdownGrace when the agent exits; pipeGrace is how
// long the output pipes may stay open after the shell has exited (held by
// a process it left behind) before they are closed.
const (
	KillGrace     = 3 * time.Second
	ShutdownGrace = 500 * time.Millisecond
	pipeGrace     = 200 * time.Millisecond
)

// proc is one started command: the shell, its process group (led by the
// sandbox helper, see package sandbox), its output.
type proc struct {
	sp      *sandbox.Process
	owner   string         // the session's id, "" for none
	policy  sandbox.Policy // what the command could write
	dir     string         // its working directory
	pgid    int
	out     [2]*stream // stdout, stderr
	pipes   [2]*os.File
	readers sync.WaitGroup
	done    chan struct{} // closed when the shell has ended and the output is read

	mu        sync.Mutex
	shell     *syscall.WaitStatus // set once the shell has ended
	groupGone bool                // the process group has no member left
	killTimer *time.Timer         // the pending SIGKILL
	stopped   bool                // signals are no longer sent (shutdown took over)
}

// startProc starts `bash -c command` in dir under policy pol, with the
// environment env, for owner (sandbox.Command.Owner), the streams'
// capture and the live view (nil for none).
// The readers and the waiter goroutine are owned by the returned proc and
// end with its output.
func startProc(command, dir string, pol sandbox.Policy, env []string, owner string, out [2]*stream, lv *liveView) (*proc, error) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, spawnError(err)
	}
	p := &proc{policy: pol, dir: dir, out: out, done: make(chan struct{})}
	var w [2]*os.File
	for i := range 2 {
		r, wr, err := os.Pipe()
		if err != nil {
			closeAll(p.pipes[:i]...)
			closeAll(w[:i]...)
			return nil, fmt.Errorf("spawn bash: pipe: %w", err)
		}
		p.pipes[i], w[i] = r, wr
	}
	sp, err := sandbox.Start(sandbox.Command{Path: bash, Args: []string{"bash", "-c", command},
		Dir: dir, Env: env, Stdout: w[0], Stderr: w[1], Policy: pol, Owner: owner})
	closeAll(w[:]...)
	if err != nil {
		closeAll(p.pipes[:]...)
		return nil, spawnError(err)
	}
	p.sp, p.pgid = sp, sp.Pid()
	for i := range 2 {
		p.readers.Add(1)
		go p.read(i, lv)
	}
	go p.wait()
	return p, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			_ = f.Close()
		}
	}
}

// spawnError names the errno (e.g. ENOENT for a missing directory), as the
// model knows it from other tools.
func spawnError(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name := errnoNames[errno]; name != "" {
			return fmt.Errorf("spawn bash: %w (%s)", err, name)
		}
	}
	return fmt.Errorf("spawn bash: %w", err)
}

var errnoNames = map[syscall.Errno]string{
	syscall.ENOENT: "ENOENT", syscall.ENOTDIR: "ENOTDIR", syscall.EACCES: "EACCES",
	syscall.EPERM: "EPERM", syscall.E2BIG: "E2BIG", syscall.EAGAIN: "EAGAIN", syscall.ENOMEM: "ENOMEM",
}

// read drains stream i at full speed into its capture and the live view.
func (p *proc) read(i int, lv *liveView) {
	defer p.readers.Done()
	buf := make([]byte, 64<<10)
	for {
		n, err := p.pipes[i].Read(buf)
		if n > 0 {
			p.out[i].write(buf[:n])
			if lv != nil {
				lv.add(i, buf[:n])
			}
		}
		if err != nil {
			break
		}
	}
	p.out[i].close()
	if lv != nil {
		lv.eof(i)
	}
}

// wait waits for the shell's end, then for the output (closing the pipes
// when a leftover process keeps them open), then closes done. The
// sandbox helper may still be exiting then (tearing its namespaces
// down): running tells leftovers apart from it.
func (p *proc) wait() {
	ws := p.sp.WaitCommand()
	p.mu.Lock()
	p.shell = &ws
	p.mu.Unlock()
	drained := make(chan struct{})
	go func() {
		p.readers.Wait()
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(pipeGrace):
		closeAll(p.pipes[:]...)
		<-drained
	}
	closeAll(p.pipes[:]...)
	p.mu.Lock()
	if !p.groupGone && p.sp.Reaped() && groupEnded(p) {
		p.groupGone = true
	}
	p.mu.Unlock()
	close(p.done)
}

// finished reports whether done is closed.
func (p *proc) finished() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal sends sig to the process group, unless the group is known to be
// gone (then its id may belong to someone else) or shutdown took over.
func (p *proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signalLocked(sig)
}

func (p *proc) signalLocked(sig syscall.Signal) {
	if p.groupGone || p.stopped {
		return
	}
	if err := p.sp.Signal(sig); errors.Is(err, syscall.ESRCH) && p.sp.Reaped() {
		p.groupGone = true
	}
}

// terminate sends SIGTERM to the group now and SIGKILL after grace (once:
// a second terminate does not move the SIGKILL).
func (p *proc) terminate(grace time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signalLocked(syscall.SIGTERM)
	if p.killTimer == nil && !p.stopped && !p.groupGone {
		p.killTimer = time.AfterFunc(grace, func() { p.signal(syscall.SIGKILL) })
	}
}

// alive reports whether the process group may still have a member.
func (p *proc) alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.groupGone {
		return false
	}
	if groupEnded(p) {
		if p.sp.Reaped() {
			p.groupGone = true
		}
		return false
	}
	return true
}

// running reports whether a process of the command is running (not a
// zombie): the shell or what it left behind, also outside the process
// group (sandbox.Process.Running).
func (p *proc) running() bool {
	return p.alive() && p.sp.Running()
}

// waitStopped waits until the shell has ended, its output was read, no
// process of the command is running (see running) and the sandbox helper
// has exited, polling every 20 ms, for at most d or until ctx ends; it
// reports whether all of that happened.
func (p *proc) waitStopped(ctx context.Context, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	select {
	case <-p.done:
	case <-ctx.Done():
		return false
	case <-deadline.C:
		return false
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for p.running() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		}
	}
	select {
	case <-p.sp.Exited():
		return true
	case <-ctx.Done():
	case <-deadline.C:
	}
	return false
}

// exit describes how the shell ended; ok is false while it runs.
func (p *proc) exit() (code int, signal string, ok bool) {
	p.mu.Lock()
	ws := p.shell
	p.mu.Unlock()
	if ws == nil {
		return 0, "", false
	}
	if ws.Signaled() {
		return 0, signalName(ws.Signal()), true
	}
	return ws.ExitStatus(), "", true
}

// takeOver stops the pending SIGKILL timer and any later timer-driven
// signal: shutdown sends the signals from now on (with force).
func (p *proc) takeOver() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.killTimer != nil {
		p.killTimer.Stop()
	}
}

// force sends sig to the group even after takeOver (not when it is gone).
func (p *proc) force(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.groupGone {
		return
	}
	if err := p.sp.Signal(sig); errors.Is(err, syscall.ESRCH) && p.sp.Reaped() {
		p.groupGone = true
	}
}
