package toolbash

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// Options configures a Manager. The zero value is ready to use.
type Options struct {
	// Log receives warnings (spill files that could not be written,
	// processes that outlived shutdown); nil discards them.
	Log *slog.Logger
	// TempDir is where the private spill directory (dsh-bash-XXXX, mode
	// 0700) is created; "" means os.TempDir().
	TempDir string
}

// errShutdown is returned for a command started after Shutdown.
var errShutdown = errors.New("the agent is shutting down")

// Manager owns every command the shell tools start: foreground commands,
// background tasks and the processes they leave behind. It is safe for
// concurrent use.
type Manager struct {
	log     *slog.Logger
	tempDir string
	liveCap int64 // LiveCap, smaller in tests

	mu       sync.Mutex
	closed   bool
	procs    map[*proc]struct{} // process groups that may have members
	tasks    map[string]*task   // background tasks by id
	cmdSeq   int                // commands started (spill file names)
	taskSeq  int                // background tasks started (ids)
	spillDir string             // created on the first spill
}

// undumpable makes the agent process undumpable once per process.
var undumpable sync.Once

// New returns a Manager. The first call also makes the whole agent
// process undumpable on Linux (prctl PR_SET_DUMPABLE 0), so that the
// commands cannot read the agent's environment, API key included, from
// /proc/$PPID/environ; this also disables the agent's core dumps and
// ptrace attachment to it by same-uid processes (root still can). The
// commands themselves stay dumpable (exec resets the flag). A failure is
// logged as a warning to the first Manager's Log.
func New(o Options) *Manager {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	undumpable.Do(func() {
		if err := makeUndumpable(); err != nil {
			log.Warn("bash: the agent's environment stays readable by its commands", "err", err)
		}
	})
	return &Manager{log: log, tempDir: o.TempDir, liveCap: LiveCap, procs: map[*proc]struct{}{}, tasks: map[string]*task{}}
}

// Tools returns the tools bash, bash_output and bash_kill, in that order.
func (m *Manager) Tools() []tools.Tool {
	return []tools.Tool{m.bashTool(), m.outputTool(), m.killTool()}
}

// start starts a command with fresh streams and registers its process
// group; lv is its live view or nil.
func (m *Manager) start(command, dir string, lv *liveView) (*proc, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errShutdown
	}
	m.prune()
	m.cmdSeq++
	n := m.cmdSeq
	spill := func(stream string) (*os.File, string, error) { return m.createSpill(n, stream) }
	out := [2]*stream{newStream("stdout", TailBytes, spill), newStream("stderr", TailBytes, spill)}
	p, err := startProc(command, dir, out, lv)
	if err != nil {
		return nil, err
	}
	m.procs[p] = struct{}{}
	return p, nil
}

// prune forgets process groups known to be gone (m.mu held).
func (m *Manager) prune() {
	for p := range m.procs {
		if p.finished() && !p.alive() {
			delete(m.procs, p)
		}
	}
}

// createSpill creates the spill file of command n's stream:
// dsh-bash-<pid>-<n>-<12 hex>-<stream>.log, opened exclusively with mode
// 0600, in the private spill directory.
func (m *Manager) createSpill(n int, stream string) (*os.File, string, error) {
	dir, err := m.spillDirectory()
	if err != nil {
		m.log.Warn("bash: no spill directory", "err", err)
		return nil, "", err
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name := fmt.Sprintf("dsh-bash-%d-%d-%s-%s.log", os.Getpid(), n, hex.EncodeToString(rnd[:]), stream)
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		m.log.Warn("bash: cannot create a spill file", "err", err)
		return nil, "", fmt.Errorf("create spill file: %w", err)
	}
	return f, path, nil
}

// createOverflow creates a live view's overflow file: a temporary file in
// the private spill directory, unlinked at once (it goes when closed).
func (m *Manager) createOverflow() (*os.File, error) {
	dir, err := m.spillDirectory()
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "dsh-live-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("create live overflow file: %w", err)
	}
	_ = os.Remove(f.Name())
	return f, nil
}

// spillDirectory creates the private spill directory once.
func (m *Manager) spillDirectory() (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.spillDir != "" {
		return m.spillDir, nil
	}
	if m.closed {
		return "", errShutdown
	}
	dir, err := os.MkdirTemp(m.tempDir, "dsh-bash-")
	if err != nil {
		return "", fmt.Errorf("create spill directory: %w", err)
	}
	m.spillDir = dir
	return dir, nil
}

// Shutdown stops every process the tools started, as the agent exits:
// SIGTERM to each process group still running, SIGKILL ShutdownGrace later
// to those still there (it returns early when all are gone); pending
// SIGKILL timers are stopped. Later commands fail. Then the spill directory
// is removed. Shutdown blocks for at most about ShutdownGrace plus
// pipeGrace; calling it again does nothing.
func (m *Manager) Shutdown() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	ps := make([]*proc, 0, len(m.procs))
	for p := range m.procs {
		ps = append(ps, p)
	}
	for _, t := range m.tasks {
		t.silent = true
	}
	spillDir := m.spillDir
	m.mu.Unlock()
	stopGroups(ps, ShutdownGrace)
	// The readers end once the groups are gone; wait a little so that the
	// spill files are closed before their directory goes.
	deadline := time.After(pipeGrace + 50*time.Millisecond)
	for _, p := range ps {
		select {
		case <-p.done:
		case <-deadline:
		}
	}
	if spillDir != "" {
		if err := os.RemoveAll(spillDir); err != nil {
			m.log.Warn("bash: cannot remove the spill directory", "dir", spillDir, "err", err)
		}
	}
}

// stopGroups sends SIGTERM to every group in ps, waits until none has a
// member left or grace has passed, then sends SIGKILL to those left.
func stopGroups(ps []*proc, grace time.Duration) {
	for _, p := range ps {
		p.takeOver()
		p.force(sigTERM)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		left := false
		for _, p := range ps {
			if p.alive() {
				left = true
				break
			}
		}
		if !left {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, p := range ps {
		p.force(sigKILL)
	}
}

// KillSession stops the background tasks owned by session id (the
// bridge calls it when the session is closed): SIGTERM to the process
// group of each task still running or whose group still has members (a
// finished shell's leftovers), SIGKILL KillGrace later; it does not wait.
// No notice is posted for them and they are forgotten.
func (m *Manager) KillSession(id string) {
	m.mu.Lock()
	var ps []*proc
	for tid, t := range m.tasks {
		if t.owner == id {
			t.silent = true
			ps = append(ps, t.p)
			delete(m.tasks, tid)
		}
	}
	m.mu.Unlock()
	for _, p := range ps {
		if !p.finished() || p.alive() {
			p.terminate(KillGrace)
		}
	}
}

func (m *Manager) nextTaskID() string {
	m.taskSeq++
	return "bash-" + strconv.Itoa(m.taskSeq)
}
