// Package agentcmd runs the commands the agent runs by itself, not at
// the model's request: the git commands of /review (and any later
// feature that asks git about the project). They are commands like the
// model's: each runs through the sandbox (package sandbox) with the
// session's sandbox configuration, read-only unless the caller names
// the folders it writes, never with network, and with the scrubbed
// environment commands get (no variable whose name says KEY, SECRET or
// TOKEN). Git also runs with every setting that makes it start another
// program turned off for the call (GitSafe), so a repository's own
// configuration, which a sandboxed command may have written, cannot run
// code through the agent.
package agentcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"github.com/dsh-acp/dsh-acp/sandbox"
)

// Runner runs the agent's own commands under one sandbox configuration
// (the --sandbox choice). The zero value is the default sandbox
// (workspace-write confinement, here always without network).
type Runner struct {
	Sandbox sandbox.Config
}

// Call is one command of the agent's own.
type Call struct {
	// Path is the program (looked up in PATH when it holds no "/");
	// Args its arguments after the program name.
	Path string
	Args []string
	// Dir is the working directory (the project).
	Dir string
	// Env are KEY=value entries added last to the scrubbed environment.
	Env []string
	// Writable are the folders the command may write below (absolute);
	// none makes it read-only (it writes only its private temporary
	// directory).
	Writable []string
	// Stdout and Stderr receive the output (nil drops it).
	Stdout, Stderr io.Writer
	// Drivers, for GitCall, are the filter drivers to turn off as
	// FilterDrivers found them (a caller running many git commands on a
	// repository looks them up once); nil looks them up for the call.
	Drivers []string
}

// Run runs c and waits for it and for its output. When ctx ends first the
// command (and everything it started) is killed and ctx's error is
// returned. Errors: exec.ErrNotFound (wrapped) when the program is
// missing, *exec.ExitError for a non-zero exit, the sandbox's start
// errors.
func (r Runner) Run(ctx context.Context, c Call) error {
	path, err := exec.LookPath(c.Path)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "dsh-agentcmd-")
	if err != nil {
		return fmt.Errorf("the command's temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	pol := sandbox.Policy{Config: r.Sandbox, TempDir: tmp}
	pol.Config.DenyNetwork = true
	if mode, _ := sandbox.ParseMode(string(r.Sandbox.Mode)); mode != sandbox.Off {
		pol.Config.Mode = sandbox.ReadOnly
		if len(c.Writable) > 0 {
			pol.Config.Mode = sandbox.WorkspaceWrite
			pol.Project, pol.Dirs = c.Writable[0], c.Writable[1:]
		}
	}
	env := append(Env(os.Environ()), "TMPDIR="+tmp)
	env = append(env, c.Env...)
	return run(ctx, sandbox.Command{Path: path, Args: append([]string{c.Path}, c.Args...), Dir: c.Dir, Env: env, Policy: pol}, c.Stdout, c.Stderr)
}

// run starts cmd with its output copied to stdout and stderr and waits
// for it; ctx's end kills it.
func run(ctx context.Context, cmd sandbox.Command, stdout, stderr io.Writer) error {
	var (
		pipes   [2]*os.File
		readers sync.WaitGroup
	)
	for i, w := range []io.Writer{stdout, stderr} {
		r, wr, err := os.Pipe()
		if err != nil {
			closeAll(pipes[:i]...)
			return err
		}
		if i == 0 {
			cmd.Stdout = wr
		} else {
			cmd.Stderr = wr
		}
		pipes[i] = r
		if w == nil {
			w = io.Discard
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			_, _ = io.Copy(w, r)
		}()
	}
	p, err := sandbox.Start(cmd)
	closeAll(cmd.Stdout, cmd.Stderr)
	if err != nil {
		closeAll(pipes[:]...)
		readers.Wait()
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = p.Signal(syscall.SIGKILL) })
	ws := p.WaitCommand()
	stop()
	// What the command left behind goes with it, so the pipes close.
	_ = p.Signal(syscall.SIGKILL)
	readers.Wait()
	closeAll(pipes[:]...)
	<-p.Exited()
	if err := ctx.Err(); err != nil {
		return err
	}
	if ws.Exited() && ws.ExitStatus() == 0 {
		return nil
	}
	return &exitError{ws: ws}
}

// exitError is a command that did not exit 0.
type exitError struct{ ws syscall.WaitStatus }

func (e *exitError) Error() string {
	if e.ws.Signaled() {
		return "signal: " + e.ws.Signal().String()
	}
	return fmt.Sprintf("exit status %d", e.ws.ExitStatus())
}

// ExitCode is the exit status of a command that ended with one, else -1.
func (e *exitError) ExitCode() int {
	if e.ws.Exited() {
		return e.ws.ExitStatus()
	}
	return -1
}

// ExitCode returns the exit status err reports (a non-zero exit of Run),
// or -1 when err is no such exit.
func ExitCode(err error) int {
	var e *exitError
	if errors.As(err, &e) {
		return e.ExitCode()
	}
	return -1
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			_ = f.Close()
		}
	}
}

// keptGitVars are the GIT_* variables of the agent's environment a
// command of the agent's keeps (who the user is, which global
// configuration is theirs); every other GIT_* variable is dropped (a
// GIT_DIR, GIT_CONFIG_PARAMETERS or GIT_EXTERNAL_DIFF the agent happens
// to have must not steer the agent's git).
var keptGitVars = map[string]bool{
	"GIT_CONFIG_GLOBAL": true, "GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true,
	"GIT_COMMITTER_NAME": true, "GIT_COMMITTER_EMAIL": true,
}

// forcedEnv ends every environment Env returns.
var forcedEnv = []string{"NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat",
	"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C"}

// Env returns the environment of an agent's command from environ
// (KEY=value entries): sandbox.CommandEnv without GIT_* variables but
// keptGitVars and without TMPDIR, followed by forcedEnv.
func Env(environ []string) []string {
	return sandbox.CommandEnv(environ, func(name string) bool {
		return name == "TMPDIR" || strings.HasPrefix(name, "GIT_") && !keptGitVars[name]
	}, forcedEnv...)
}
