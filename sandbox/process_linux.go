//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/dsh-acp/dsh-acp/sandbox/internal/helper"
	"github.com/dsh-acp/dsh-acp/sandbox/internal/proctree"
)

// selfExe is the agent's own executable, as the kernel holds it (a binary
// replaced on disk meanwhile still re-executes the running version).
const selfExe = "/proc/self/exe"

// marker is the AgentVar entry of the commands of owner in this process.
func marker(owner string) string {
	v := AgentVar + "=" + strconv.Itoa(os.Getpid())
	if owner != "" {
		v += ":" + owner
	}
	return v
}

// noNamespaces makes Start use the subreaper helper even where the host
// has namespaces (tests of that path set it).
var noNamespaces bool

// Process is a started command: the helper (the process group leader)
// and, below it, the command's tree. Safe for concurrent use.
type Process struct {
	cmd    *exec.Cmd
	pid    int
	helper bool // started through the helper
	ns     bool // the helper is PID 1 of its own namespaces
	// Confined reports whether Landlock confines the command.
	Confined bool
	status   *bufio.Reader
	statusF  *os.File
	exited   chan struct{} // closed once the helper is reaped

	mu        sync.Mutex
	state     *os.ProcessState
	killTimer *time.Timer
}

// Start starts c: through the helper (in its own namespaces where the
// host allows it and the mode is not Off, confined by Landlock where
// c.Policy confines), or, when the helper cannot run at all, directly.
// The process is the leader of a new process group and gets SIGKILL when
// the agent's thread that started it dies. Start returns once the command
// has started; errors are those of exec (a missing Dir, say) or the
// helper's ("sandbox: ...").
func Start(c Command) (*Process, error) {
	h := Probe()
	c.Env = append(slices.Clip(c.Env), marker(c.Owner))
	if !h.helper {
		return startDirect(c)
	}
	spec := helper.Spec{UID: os.Getuid(), GID: os.Getgid(), NS: h.Namespaces && !noNamespaces && c.Policy.Config.mode() != Off}
	if spec.NS && c.Policy.Config.DenyNetwork {
		spec.Net, spec.Mask = true, KnownSockets()
	}
	if spec.NS {
		spec.ReadOnly, spec.Pinned = c.Policy.Protected, c.Policy.Pinned
	}
	var ruleset *os.File
	if c.Policy.Config.Confines(h) {
		f, flags, err := rulesetFor(c.Policy, h.LandlockABI)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		ruleset = f
		spec.Landlock, spec.LandlockFlags = true, flags
	}
	argv := append([]string{c.Path}, c.Args...)
	return launch(spec, argv, c.Dir, c.Env, c.Stdout, c.Stderr, ruleset)
}

// launch starts the helper with spec for argv (PATH ARG0 ARGS...) and
// waits for its first report.
func launch(spec helper.Spec, argv []string, dir string, env []string, stdout, stderr any, ruleset *os.File) (*Process, error) {
	specArgs, err := spec.Args()
	if err != nil {
		closeFile(ruleset)
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		closeFile(ruleset)
		return nil, fmt.Errorf("sandbox: status pipe: %w", err)
	}
	cmd := &exec.Cmd{
		Path: selfExe,
		Args: slices.Concat([]string{"dsh-sandbox", helper.ExecArg}, specArgs, []string{"--"}, argv),
		Dir:  dir,
		Env:  env,
	}
	setOutput(cmd, stdout, stderr)
	cmd.ExtraFiles = []*os.File{w}
	if ruleset != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, ruleset)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if spec.NS {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS
		if spec.Net {
			cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
		}
		// The helper's uid has no mapping yet when it is executed, so it
		// keeps the capabilities to map it (and to mount /proc) only as
		// ambient ones; it clears them before starting the command.
		cmd.SysProcAttr.AmbientCaps = []uintptr{capSysAdmin, capSetUID, capSetGID}
	}
	p := &Process{cmd: cmd, helper: true, ns: spec.NS, Confined: spec.Landlock,
		status: bufio.NewReader(r), statusF: r, exited: make(chan struct{})}
	err = startRegistered(p)
	_ = w.Close()
	closeFile(ruleset)
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	go p.reap()
	// A helper stuck before its report (say, on a hung file system) is
	// killed, which ends the read.
	stuck := time.AfterFunc(startTimeout, func() { _ = syscall.Kill(-p.pid, syscall.SIGKILL) })
	line, _ := p.status.ReadString('\n')
	inTime := stuck.Stop()
	if inTime && line == "ok\n" {
		return p, nil
	}
	<-p.exited
	_ = r.Close()
	msg := strings.TrimSpace(strings.TrimPrefix(line, "err "))
	switch {
	case msg != "":
	case !inTime:
		msg = "the helper did not start the command within " + startTimeout.String()
	default:
		msg = "the helper ended before starting the command (" + p.state.String() + ")"
	}
	return nil, errors.New("sandbox: " + msg)
}

// startTimeout bounds how long the helper may take to start a command.
const startTimeout = 30 * time.Second

// The capabilities (linux/capability.h) the helper needs in its new user
// namespace.
const (
	capSetGID   = 6
	capSetUID   = 7
	capSysAdmin = 21
)

func setOutput(cmd *exec.Cmd, stdout, stderr any) {
	if f, ok := stdout.(*os.File); ok && f != nil {
		cmd.Stdout = f
	} else if b, ok := stdout.(*bytes.Buffer); ok {
		cmd.Stdout = b
	}
	if f, ok := stderr.(*os.File); ok && f != nil {
		cmd.Stderr = f
	} else if b, ok := stderr.(*bytes.Buffer); ok {
		cmd.Stderr = b
	}
}

func closeFile(f *os.File) {
	if f != nil {
		_ = f.Close()
	}
}

// started are the processes Start started (helpers, or direct
// commands) that are not reaped yet, by pid: KillAdopted spares them.
// startedMu is read-locked from before a process is started until it is
// in started, and write-locked by KillAdopted for its whole sweep, so a
// sweep never sees a child of Start's that is not registered yet (such a
// child already carries the marker once it has executed).
var (
	startedMu sync.RWMutex
	startedP  sync.Mutex // guards started among the readers of startedMu
	started   = map[int]*Process{}
)

// startedHook, when set (by tests), runs between a start and its
// registration.
var startedHook func()

// startRegistered starts p.cmd and registers p under its pid.
func startRegistered(p *Process) error {
	startedMu.RLock()
	defer startedMu.RUnlock()
	if !p.ns {
		orphanable.Store(true)
	}
	if err := p.cmd.Start(); err != nil {
		return err
	}
	p.pid = p.cmd.Process.Pid
	if startedHook != nil {
		startedHook()
	}
	startedP.Lock()
	started[p.pid] = p
	startedP.Unlock()
	return nil
}

// reap waits for the helper (or the direct command) to exit.
func (p *Process) reap() {
	_ = p.cmd.Wait()
	p.mu.Lock()
	p.state = p.cmd.ProcessState
	if p.killTimer != nil {
		p.killTimer.Stop()
	}
	p.mu.Unlock()
	startedP.Lock()
	// The pid may already be a newer process's, registered meanwhile.
	if started[p.pid] == p {
		delete(started, p.pid)
	}
	startedP.Unlock()
	close(p.exited)
}

// startDirect starts c without the helper (no /proc/self/exe): unconfined,
// in its own process group, as the agent did before the sandbox.
func startDirect(c Command) (*Process, error) {
	cmd := &exec.Cmd{Path: c.Path, Args: c.Args, Dir: c.Dir, Env: c.Env}
	setOutput(cmd, c.Stdout, c.Stderr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &Process{cmd: cmd, exited: make(chan struct{})}
	if err := startRegistered(p); err != nil {
		return nil, err
	}
	go p.reap()
	return p, nil
}

// WaitCommand blocks until the command itself (the shell) has ended and
// returns its wait status; its leftovers may still run. When the helper
// died before it could report (it was killed), this is the helper's
// status, once it has been reaped. Call it once.
func (p *Process) WaitCommand() syscall.WaitStatus {
	if p.helper {
		line, _ := p.status.ReadString('\n')
		_ = p.statusF.Close()
		if rest, ok := strings.CutPrefix(line, "exit "); ok {
			if n, err := strconv.ParseUint(strings.TrimSpace(rest), 10, 32); err == nil {
				return syscall.WaitStatus(n)
			}
		}
	}
	<-p.exited
	ws, _ := p.state.Sys().(syscall.WaitStatus)
	return ws
}

// Running reports whether a process of the command is running (not a
// zombie): the shell, or a process it left behind. Through the helper,
// that is any live descendant of the helper (orphans are re-parented to
// it, so this covers processes that left the process group too);
// otherwise any live member of the process group. It reads /proc.
func (p *Process) Running() bool {
	if p.helper && p.Reaped() {
		return false
	}
	procs, err := proctree.Scan()
	if err != nil {
		return true
	}
	if p.helper {
		for _, d := range proctree.Descendants(procs, p.pid) {
			if !d.Zombie() {
				return true
			}
		}
		return false
	}
	for _, q := range procs {
		if q.Pgid == p.pid && !q.Zombie() {
			return true
		}
	}
	return false
}

// helperGrace is how long a helper may take to exit once its tree has
// been killed, before it is killed too.
const helperGrace = time.Second

// Signal sends sig to the whole command: to its process group, which the
// helper leads and passes it on from to the processes that left the group.
// SIGKILL kills everything: where the helper runs the command in a PID
// namespace, by killing the helper (the kernel kills the rest); where it
// is a subreaper, by killing its descendants (it then reaps them and
// exits; it is killed too if it is not gone within a second). The error is
// that of kill(2) on the group (ESRCH once nothing of it is left).
func (p *Process) Signal(sig syscall.Signal) error {
	if sig == syscall.SIGKILL && p.helper && !p.ns {
		p.mu.Lock()
		reaped := p.state != nil
		if !reaped && p.killTimer == nil {
			p.killTimer = time.AfterFunc(helperGrace, func() { _ = p.cmd.Process.Signal(syscall.SIGKILL) })
		}
		p.mu.Unlock()
		if !reaped {
			_, _ = proctree.Kill(p.pid, 8)
		}
		return syscall.Kill(-p.pid, 0)
	}
	return syscall.Kill(-p.pid, sig)
}

// rulesetFor builds the Landlock ruleset of pol for ABI abi: the
// go-landlock preset of exactly that ABI (the newest it knows, beyond),
// without best effort, so that a right the kernel lacks is an error and
// never silently dropped; network rights only with DenyNetwork. Rules:
// read, execute and list everything (and, ABI 9, connect to pathname unix
// sockets); write below pol.Writable() (with renames across them, ABI 2);
// the device files read-write, the terminals also with ioctl (ABI 5).
func rulesetFor(pol Policy, abi int) (*os.File, uint32, error) {
	presets := []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5,
		landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}
	cfg := presets[min(abi, len(presets))-1]
	if !pol.Config.DenyNetwork {
		cfg.HandledAccessNet = 0
	}
	hidden := resolveAll(pol.Config.Hidden)
	rules := carvedRules(carve("/", hidden), false, abi)
	rules = append(rules,
		landlock.RWFiles(devices...).IgnoreIfMissing(),
		landlock.RWFiles(ttys...).WithIoctlDev().IgnoreIfMissing(),
	)
	// Writes are carved around the secrets and the read-only sources.
	around := append(slices.Clip(hidden), resolveAll(pol.Sources)...)
	for _, w := range pol.Writable() {
		if _, err := os.Stat(w); err != nil {
			continue // a missing writable folder is left out
		}
		rules = append(rules, carvedRules(carve(resolve(w), around), true, abi)...)
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return nil, 0, err
	}
	if fd < 0 {
		return nil, 0, errors.New("landlock: nothing to restrict")
	}
	return os.NewFile(uintptr(fd), "landlock-ruleset"), flags, nil
}

// landlockABI asks the kernel for its Landlock ABI version (tests
// replace it to force Landlock off).
var landlockABI = llsys.LandlockGetABIVersion

// quick is the part of the probe that starts no process: whether the
// helper can be executed, and the ABI the kernel reports (abi, or 0 and
// h.LandlockReason). Namespaces stay false, "not probed yet".
func quick() (h Host, abi int) {
	if _, err := os.Stat(selfExe); err != nil {
		h.LandlockReason = "cannot re-execute the agent: " + err.Error()
		h.NamespaceReason = h.LandlockReason
		return h, 0
	}
	h.helper = true
	h.NamespaceReason = "not probed yet"
	abi, err := landlockABI()
	switch {
	case errors.Is(err, syscall.ENOSYS):
		h.LandlockReason = "kernel has no Landlock"
	case errors.Is(err, syscall.EOPNOTSUPP):
		h.LandlockReason = "Landlock is disabled in this kernel (see the lsm= boot parameter)"
	case errors.Is(err, syscall.EPERM):
		h.LandlockReason = "Landlock is forbidden here (seccomp)"
	case err != nil:
		h.LandlockReason = "Landlock: " + err.Error()
	case abi <= 0:
		h.LandlockReason = "kernel has no Landlock"
	default:
		h.LandlockABI = abi
	}
	if err != nil {
		abi = 0
	}
	return h, abi
}

// probe is Probe's work: quick, then the helper started twice (in
// namespaces, then confined by Landlock).
func probe() Host {
	h, abi := quick()
	if !h.helper {
		return h
	}
	key, keyed := currentProbeKey(abi)
	if keyed {
		if c, ok := readProbeCache(key); ok {
			return c
		}
	}
	h = probeHelper(h, abi)
	if keyed {
		writeProbeCache(key, h)
	}
	return h
}

// probeHelper is probe's work past quick: the helper started twice
// (in namespaces, then confined by Landlock ABI abi).
func probeHelper(h Host, abi int) Host {
	h.LandlockABI, h.NamespaceReason = 0, ""
	if abi <= 0 && h.LandlockReason == "" {
		h.LandlockReason = "kernel has no Landlock"
	}
	base := helper.Spec{UID: os.Getuid(), GID: os.Getgid(), Probe: true}
	ns := base
	ns.NS = true
	if err := runProbe(ns, nil); err != nil {
		h.NamespaceReason = "no user and PID namespaces: " + err.Error()
	} else {
		h.Namespaces = true
	}
	if abi <= 0 {
		return h
	}
	spec := base
	spec.NS = h.Namespaces
	pol := Policy{Config: Config{Mode: WorkspaceWrite}, TempDir: os.TempDir()}
	ruleset, flags, err := rulesetFor(pol, abi)
	if err == nil {
		spec.Landlock, spec.LandlockFlags = true, flags
		err = runProbe(spec, ruleset)
	}
	if err != nil {
		h.LandlockReason = "Landlock is refused here: " + err.Error()
		return h
	}
	h.LandlockABI = abi
	return h
}

// runProbe runs the helper in probe mode and reports whether it set up.
func runProbe(spec helper.Spec, ruleset *os.File) error {
	helperProbes.Add(1)
	var stderr bytes.Buffer
	p, err := launch(spec, nil, "", os.Environ(), nil, &stderr, ruleset)
	if err != nil {
		return err
	}
	ws := p.WaitCommand()
	<-p.exited
	if ws.Exited() && ws.ExitStatus() == 0 {
		return nil
	}
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		return errors.New(strings.TrimPrefix(msg, "dsh-acp sandbox: "))
	}
	return fmt.Errorf("the probe ended with %v", ws)
}

// carvedRules are the Landlock rules of a carving: its whole directories
// and files read-only, or read-write with renames and links among them
// (ABI 2) when write is set; with ABI 9, also connecting to the pathname
// unix sockets there; its listed directories listing only.
func carvedRules(c carving, write bool, abi int) []landlock.Rule {
	dirs, files := landlock.RODirs(c.dirs...), landlock.ROFiles(c.files...)
	if write {
		dirs, files = landlock.RWDirs(c.dirs...), landlock.RWFiles(c.files...)
		if abi >= 2 {
			dirs = dirs.WithRefer()
		}
	}
	if abi >= 9 {
		dirs, files = dirs.WithResolveUnix(), files.WithResolveUnix()
	}
	rules := []landlock.Rule{dirs.IgnoreIfMissing(), files.IgnoreIfMissing()}
	if len(c.listed) > 0 {
		rules = append(rules, landlock.PathAccess(llsys.AccessFSReadDir, c.listed...).IgnoreIfMissing())
	}
	return rules
}
