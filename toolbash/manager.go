package toolbash

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-acp/dsh-acp/sandbox"
	"github.com/dsh-acp/dsh-acp/tools"
)

// Options configures a Manager. The zero value is ready to use.
type Options struct {
	// Log receives warnings (spill files that could not be written,
	// processes that outlived shutdown); nil discards them.
	Log *slog.Logger
	// TempDir is where the private spill directory (dsh-bash-XXXX, mode
	// 0700) and each session's private temporary directory (dsh-tmp-XXXX,
	// mode 0700, the commands' TMPDIR) are created; "" means
	// os.TempDir().
	TempDir string
	// Sandbox is how commands are confined (see package sandbox); the zero
	// value is workspace-write.
	Sandbox sandbox.Config
	// SpillMax is how many bytes of output one command may write to its
	// spill files (both streams together); 0 means DefaultSpillMax, a
	// negative value no limit.
	SpillMax int64
	// AdditionalDirs are directories commands of every session may write
	// besides the session cwd under workspace-write; a session's own
	// additional directories (tools.AdditionalDirectories) are added to
	// them for its commands.
	AdditionalDirs []string
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
	// spillMax is Options.SpillMax resolved (< 0: no limit).
	spillMax int64
	sandbox  sandbox.Config
	// probeLog logs, once, what the probe found (see Host).
	probeLog sync.Once
	// guessed is set once SandboxWarning said "" before the probe had run.
	guessed atomic.Bool
	dirs    []string // AdditionalDirs
	// caches: under workspace-write commands may write the build caches
	// (sandbox.Caches, which makes missing ones: looked up at the first
	// command, so that starting the agent creates nothing in HOME).
	caches bool
	// owner marks this Manager's commands (sandbox.Command.Owner), so
	// that its exit sweep (sandbox.KillAdopted) spares other Managers'.
	owner string

	mu       sync.Mutex
	closed   bool
	procs    map[*proc]struct{} // process groups that may have members
	tasks    map[string]*task   // background tasks by id
	cmdSeq   int                // commands started (spill file names)
	taskSeq  int                // background tasks started (ids)
	spillDir string             // created on the first spill

	tempMu sync.Mutex
	temps  map[string]bool // the sessions' private temporary directories
	// noSessionTemp is the temporary directory of calls without a session.
	noSessionTemp tempDir
}

// undumpable makes the agent process undumpable, and subreaper a child
// subreaper, once per process.
var undumpable, subreaper sync.Once

// New returns a Manager. The first call also makes the whole agent
// process undumpable on Linux (prctl PR_SET_DUMPABLE 0), so that the
// commands cannot read the agent's environment, API key included, from
// /proc/$PPID/environ; this also disables the agent's core dumps and
// ptrace attachment to it by same-uid processes (root still can). The
// commands themselves stay dumpable (exec resets the flag). A failure is
// logged as a warning to the first Manager's Log.
//
// New also makes the agent a child subreaper (sandbox.BecomeSubreaper).
// It starts no process: the kernel's sandbox support is probed when it is
// first needed (see Host).
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
	subreaper.Do(func() {
		if err := sandbox.BecomeSubreaper(); err != nil {
			log.Warn("bash: orphaned processes of killed sandbox helpers go to init", "err", err)
		}
	})
	m := &Manager{log: log, tempDir: o.TempDir, liveCap: LiveCap, procs: map[*proc]struct{}{}, tasks: map[string]*task{},
		sandbox: o.Sandbox, dirs: o.AdditionalDirs, temps: map[string]bool{},
		owner: sandbox.NewOwner(), spillMax: o.SpillMax}
	if m.spillMax == 0 {
		m.spillMax = DefaultSpillMax
	}
	if mode, _ := sandbox.ParseMode(string(o.Sandbox.Mode)); mode == sandbox.WorkspaceWrite {
		m.caches = true
	}
	return m
}

// Tools returns the tools bash, bash_output and bash_kill, in that order.
func (m *Manager) Tools() []tools.Tool {
	return []tools.Tool{m.bashTool(), m.outputTool(), m.killTool()}
}

// start starts a command for session sess (nil for none) with fresh
// streams and registers its process group; unconfined runs it outside the
// sandbox; lv is its live view or nil. The lock is not held while the
// command starts (the sandbox helper reports back first); a Shutdown
// meanwhile kills it.
func (m *Manager) start(sess tools.Session, command, dir string, unconfined bool, lv *liveView) (*proc, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errShutdown
	}
	m.prune()
	m.cmdSeq++
	n := m.cmdSeq
	m.mu.Unlock()
	m.noteProbe(sess)
	pol, env, err := m.setup(sess, dir, unconfined)
	if err != nil {
		return nil, err
	}
	spill := func(stream string) (*os.File, string, error) { return m.createSpill(n, stream) }
	var budget *spillBudget
	if m.spillMax > 0 {
		budget = new(spillBudget)
		budget.Store(m.spillMax)
	}
	out := [2]*stream{newStream("stdout", TailBytes, spill, budget), newStream("stderr", TailBytes, spill, budget)}
	p, err := startProc(command, dir, pol, env, m.owner, out, lv)
	if err != nil {
		return nil, err
	}
	if sess != nil {
		p.owner = sess.ID()
		sess.Value(closeHookKey{m}, func() any {
			owner := p.owner
			tools.OnClose(sess, func() { m.KillSession(owner) })
			return true
		})
	}
	m.mu.Lock()
	closed := m.closed
	if !closed {
		m.procs[p] = struct{}{}
	}
	m.mu.Unlock()
	if closed {
		stopGroups([]*proc{p}, 0)
		return nil, errShutdown
	}
	return p, nil
}

// setup returns the policy and the environment of a command run in dir
// for sess: the session cwd (or, without a session, dir) as the project,
// the session's private temporary directory as TMPDIR (created on the
// first command; none under --sandbox off), and the mode Off for an
// unconfined run.
func (m *Manager) setup(sess tools.Session, dir string, unconfined bool) (sandbox.Policy, []string, error) {
	pol := sandbox.Policy{Config: m.sandbox, Dirs: m.dirs, Sources: sandbox.Sources()}
	if m.caches {
		pol.Caches = sandbox.Caches()
	}
	if sess != nil {
		pol.Project = sess.Cwd()
		// The session's other workspace roots are part of the project.
		pol.Dirs = append(slices.Clone(m.dirs), tools.AdditionalDirectories(sess)...)
	}
	if pol.Project == "" {
		pol.Project = dir
		if pol.Project == "" {
			pol.Project, _ = os.Getwd()
		}
	}
	if mode, _ := sandbox.ParseMode(string(m.sandbox.Mode)); mode == sandbox.WorkspaceWrite && !unconfined {
		// What the user's own git runs later (hooks, config) stays as
		// it is: a command cannot plant code that runs outside.
		dirs := append([]string{pol.Project}, pol.Dirs...)
		pol.Protected, pol.Pinned = sandbox.GitProtected(dirs...), sandbox.GitPinned(dirs...)
	}
	env := commandEnv(processEnv())
	if mode, _ := sandbox.ParseMode(string(m.sandbox.Mode)); mode != sandbox.Off {
		tmp, err := m.sessionTemp(sess)
		if err != nil {
			return pol, nil, err
		}
		pol.TempDir = tmp
		kept := env[:0]
		for _, kv := range env {
			if !strings.HasPrefix(kv, "TMPDIR=") {
				kept = append(kept, kv)
			}
		}
		env = append(kept, "TMPDIR="+tmp)
	}
	if unconfined {
		pol.Config.Mode = sandbox.Off
	}
	return pol, env, nil
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
// SIGKILL timers are stopped. Later commands fail. Then the spill
// directory and the sessions' temporary directories are removed, and the
// processes of commands whose helper died before them are killed
// (sandbox.KillAdopted, for this Manager's commands only, and reaped).
// Shutdown blocks for at most about ShutdownGrace plus pipeGrace (plus up
// to a second when such processes are slow to die); calling it again does
// nothing.
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
	m.tempMu.Lock()
	var temps []string
	for d := range m.temps {
		temps = append(temps, d)
	}
	m.tempMu.Unlock()
	for _, d := range temps {
		m.removeTemp(d)
	}
	if n := sandbox.KillAdopted(m.owner); n > 0 {
		m.log.Warn("bash: killed processes whose sandbox helper had died", "count", n)
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

// KillSession stops the commands of session id (the session closes:
// every session a command ran in gets this as an OnClose hook): SIGTERM
// to the process group of each background task still running, and of
// each command, foreground ones included, whose group still has members
// (the processes a finished shell left behind, also those that left the
// group: the sandbox helper passes the signal on), SIGKILL KillGrace later;
// it does not wait. No notice is posted for the tasks and they are
// forgotten.
func (m *Manager) KillSession(id string) {
	m.mu.Lock()
	var ps []*proc
	for tid, t := range m.tasks {
		if t.owner == id {
			t.silent = true
			delete(m.tasks, tid)
		}
	}
	for p := range m.procs {
		if p.owner == id {
			ps = append(ps, p)
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
