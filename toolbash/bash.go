package toolbash

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/sandbox"
	"github.com/dsh-acp/dsh-acp/tools"
)

// Timeouts of a foreground command, in milliseconds.
const (
	DefaultTimeoutMs = 120000
	MaxTimeoutMs     = 600000
)

// bashArgs are the bash tool's arguments.
type bashArgs struct {
	Command         string   `json:"command"`
	Description     string   `json:"description"`
	TimeoutMs       *float64 `json:"timeoutMs"`
	Workdir         string   `json:"workdir"`
	RunInBackground bool     `json:"run_in_background"`
	// DangerouslyDisableSandbox runs this one command outside the
	// sandbox; the permission check always asks for it.
	DangerouslyDisableSandbox bool `json:"dangerously_disable_sandbox"`
}

const bashDescription = `Run a shell command with bash and return its output.

- Every call starts a fresh non-interactive shell (bash -c): a cd or a variable does not carry over to the next call. Use workdir instead of cd.
- stdin is closed, so commands that wait for input fail. Colours and pagers are off (NO_COLOR=1, TERM=dumb, PAGER=cat).
- The result is stdout, then stderr after a "[stderr]" line. A non-zero exit adds "[exit code: N]" (not an error); a signal adds "[killed by signal: SIG…]".
- Each stream keeps only its last 64000 bytes: when output was cut, the result says so and names a file with the full output (read it with other tools, or grep it).
- Timeout: 120000 ms by default, at most 600000 ms (timeoutMs). On timeout the command is stopped and "[timed out after …ms]" is added.
- For servers, watchers and other long-running commands set run_in_background: the call returns a task id at once and no timeout applies. Read its new output with bash_output, stop it with bash_kill; you are told when it finishes.`

var bashSpec = tools.Spec{
	{Name: "command", Prop: tools.Prop{Type: tools.TypeString, Required: true,
		Description: "The command line to run (bash syntax)."}},
	{Name: "description", Prop: tools.Prop{Type: tools.TypeString, Required: true,
		Description: `What the command does, in 5-10 words, shown to the user. Examples: "List files in src", "Run the unit tests", "Show recent commits".`}},
	{Name: "timeoutMs", Prop: tools.Prop{Type: tools.TypeNumber,
		Description: "Timeout in milliseconds (default 120000, at most 600000)."}},
	{Name: "workdir", Prop: tools.Prop{Type: tools.TypeString,
		Description: "Directory to run in. Defaults to the session workspace; a relative path is resolved against it."}},
	{Name: "run_in_background", Prop: tools.Prop{Type: tools.TypeBoolean,
		Description: "Run as a background task and return its id at once. No timeout applies."}},
	{Name: "dangerously_disable_sandbox", Prop: tools.Prop{Type: tools.TypeBoolean,
		Description: "Run this one command outside the sandbox. Only after the result said the sandbox blocked a write the command needs; the user is asked first, every time."}},
}

// sandboxDescription is added to the bash description when commands run
// confined; %s says where they may write.
const sandboxDescription = `
- Commands run in a sandbox: they read everything, but write only %s; elsewhere writes fail with "Permission denied", and the result then says the sandbox blocked them. If the command really must write there, call bash again with dangerously_disable_sandbox: true (the user is asked). Processes it leaves running are stopped when the session ends.`

// writableText says where a command may write under mode.
func writableText(mode sandbox.Mode) string {
	if mode == sandbox.ReadOnly {
		return "to TMPDIR (a private temporary directory): the project is read-only"
	}
	return "inside the project, TMPDIR (a private temporary directory) and the build caches"
}

// description is what the model is told about bash: bashDescription,
// and what the sandbox does once the probe says commands are confined.
func (m *Manager) description() string {
	desc := bashDescription
	if m.Confined() {
		mode, _ := sandbox.ParseMode(string(m.sandbox.Mode))
		desc += fmt.Sprintf(sandboxDescription, writableText(mode))
		if m.Host().Namespaces {
			desc += " Each command sees only its own processes (ps, kill): stop a background task with bash_kill."
		}
	}
	return desc
}

func (m *Manager) bashTool() tools.Tool {
	return tools.Define(tools.Def[bashArgs]{
		Name: "bash",
		// The sandbox's part is known once the probe returned: the model
		// reads the description at the first request, not at start-up.
		Description:   bashDescription,
		Describe:      sync.OnceValue(m.description),
		Spec:          bashSpec,
		Terminal:      true,
		Class:         tools.ClassExecute,
		Execute:       m.execBash,
		Access:        m.bashAccess,
		PresentCall:   presentBashCall,
		PresentResult: presentBashResult,
	})
}

// errAborted is the result of a command stopped by the user's cancel.
var errAborted = errors.New("command aborted")

// checkBashArgs applies the value rules the schema cannot express.
func checkBashArgs(a bashArgs) error {
	if strings.TrimSpace(a.Command) == "" {
		return errors.New("invalid command: expected a non-empty string")
	}
	if strings.TrimSpace(a.Description) == "" {
		return errors.New("invalid description: expected a non-empty string")
	}
	if a.TimeoutMs != nil && !(*a.TimeoutMs > 0) {
		return fmt.Errorf("invalid timeoutMs: expected a positive number, got %s", formatMs(*a.TimeoutMs))
	}
	return nil
}

// workdir resolves the call's workdir with the permission check's own
// resolution (permission.ResolvePath: symlinks followed where they
// stand, then ".."), so the command runs in exactly the directory that
// was judged: none gives the session cwd, a relative one is resolved
// against it; without a session cwd it is used as given ("" then means
// the agent's own cwd). A directory inside the session cwd is checked
// to open beneath its root handle (permission.DirInside), so one that
// has been swapped for a way out since the check fails instead.
// Errors: the resolution's (a symlink loop) and the check's, naming the
// directory.
func workdir(wd, cwd string) (string, error) {
	switch {
	case wd == "":
		return cwd, nil
	case cwd == "":
		return wd, nil
	}
	dir, err := permission.ResolvePath(cwd, wd)
	if err != nil {
		return "", fmt.Errorf("invalid workdir %q: %w", wd, err)
	}
	if permission.Inside(cwd, dir) {
		if err := permission.DirInside(cwd, dir); err != nil {
			// Worded as the spawn's own chdir failure would be.
			var errno syscall.Errno
			if errors.As(err, &errno) {
				err = &fs.PathError{Op: "chdir", Path: dir, Err: errno}
			}
			return "", spawnError(err)
		}
	}
	return dir, nil
}

func (m *Manager) execBash(ctx context.Context, ex *tools.Exec, a bashArgs) (tools.Output, error) {
	if err := checkBashArgs(a); err != nil {
		return tools.Output{}, err
	}
	cwd := ""
	if ex.Session != nil {
		cwd = ex.Session.Cwd()
	}
	dir, err := workdir(a.Workdir, cwd)
	if err != nil {
		return tools.Output{}, err
	}
	if ctx.Err() != nil {
		return tools.Output{}, fmt.Errorf("aborted before spawn: %w", context.Cause(ctx))
	}
	if a.RunInBackground {
		return m.startTask(ex, a.Command, dir, a.DangerouslyDisableSandbox)
	}
	timeoutMs := float64(DefaultTimeoutMs)
	if a.TimeoutMs != nil {
		timeoutMs = min(*a.TimeoutMs, MaxTimeoutMs)
	}
	return m.runForeground(ctx, ex, a.Command, dir, timeoutMs, a.DangerouslyDisableSandbox)
}

// runForeground runs a command until it ends, times out (SIGTERM, SIGKILL
// KillGrace later, then the result) or ctx is cancelled (SIGTERM, return at
// once; SIGKILL follows in the background).
func (m *Manager) runForeground(ctx context.Context, ex *tools.Exec, command, dir string, timeoutMs float64, unconfined bool) (tools.Output, error) {
	var lv *liveView
	if ex.Progress != nil {
		lv = newLiveView(ex.Report, m.liveCap)
	}
	p, err := m.start(ex.Session, command, dir, unconfined, lv)
	if err != nil {
		return tools.Output{}, err
	}
	if lv != nil {
		go lv.run()
	}
	abort := func() (tools.Output, error) {
		p.terminate(KillGrace)
		if lv != nil {
			lv.abort()
			<-lv.done
		}
		return tools.Output{}, errAborted
	}
	timer := time.NewTimer(time.Duration(timeoutMs * float64(time.Millisecond)))
	defer timer.Stop()
	timedOut := false
	select {
	case <-p.done:
	case <-ctx.Done():
		return abort()
	case <-timer.C:
		timedOut = true
		p.terminate(KillGrace)
		select {
		case <-p.done:
		case <-ctx.Done():
			return abort()
		}
	}
	c := p.capture()
	c.timedOut, c.timeoutMs = timedOut, timeoutMs
	if c.exitCode != 0 || c.signal != "" {
		c.sandboxLine = p.blockedLine(c.stdout + "\n" + c.stderr)
	}
	if lv != nil {
		// The command has exited and its output is drained: the live
		// view reports what is left at once, then the result follows.
		lv.finish(p.spillPaths(), liveNotes(c))
		select {
		case <-lv.done:
		case <-ctx.Done():
			return abort()
		}
	}
	text, outputLen := renderResult(c)
	return tools.Output{Content: []tools.Content{tools.Text(text)}, Meta: newResultMeta(c, outputLen)}, nil
}

// liveNotes are the lines the live view shows after the output, as Notes:
// the sandbox's blocked-write line and the timeout marker. The exit itself
// is not among them (a live terminal shows it in terminal_exit).
func liveNotes(c capture) []string {
	var lines []string
	if c.sandboxLine != "" {
		lines = append(lines, c.sandboxLine)
	}
	if c.timedOut {
		lines = append(lines, "[timed out after "+formatMs(c.timeoutMs)+"ms]")
	}
	return lines
}

// spillPaths returns the paths of the streams' spill files, stdout's
// first (none for a stream that did not spill).
func (p *proc) spillPaths() []string {
	var paths []string
	for _, s := range p.out {
		if path := s.spillPath(); path != "" {
			paths = append(paths, path)
		}
	}
	return paths
}

// capture collects a finished command's output and exit.
func (p *proc) capture() capture {
	var c capture
	out, cut, path, saved := p.out[0].result()
	c.stdout, c.stdoutCut, c.stdoutPath, c.stdoutSaved = string(out), cut, path, saved
	errb, cut, path, saved := p.out[1].result()
	c.stderr, c.stderrCut, c.stderrPath, c.stderrSaved = string(errb), cut, path, saved
	c.exitCode, c.signal, _ = p.exit()
	return c
}

// presentBashCall: a terminal card titled with the command (cwd only when
// the model gave a workdir); a background task gets a generic card, titled
// with the command's one-line form, and the command whole in a sh fence
// after the description when the title does not hold it all (a user asked
// for permission must see every line of it). A run outside the sandbox
// says so before the description (the permission prompt shows it).
func presentBashCall(a bashArgs) tools.ToolCallView {
	desc := a.Description
	if a.DangerouslyDisableSandbox {
		desc = unsandboxedPrefix + desc
	}
	if a.RunInBackground {
		title, whole := tools.CommandTitle(a.Command)
		content := []tools.Content{tools.Text(desc)}
		if !whole {
			content = append(content, tools.Text(tools.ShellFence(a.Command)))
		}
		return tools.GenericCall{Title: title, Kind: tools.KindExecute, RawInput: jsonText(a.Command), Content: content}
	}
	return tools.TerminalCall{Title: a.Command, Description: desc, Cwd: a.Workdir}
}

// unsandboxedPrefix starts the description of a call that runs outside
// the sandbox.
const unsandboxedPrefix = "Outside the sandbox: "

// presentBashResult: the command's output, the notes after it and its
// exit (from the result's Meta, else read back from the text); a
// background acknowledgement or an error is a generic card with the text
// in a console fence.
func presentBashResult(a bashArgs, r tools.ResultInput) tools.ToolResultView {
	if len(r.Content) != 1 {
		return nil
	}
	text := r.Content[0].Text
	if r.IsError {
		// Not the program's output (refused, rejected, not started):
		// the reason as text, never in a console block.
		return tools.GenericResult{Content: []tools.Content{tools.Text(text)}}
	}
	if a.RunInBackground {
		return tools.GenericResult{Content: []tools.Content{tools.Text(tools.ConsoleFence(text))}}
	}
	out, notes, code, sig := splitResult(text, r.Meta)
	cut, paths := cutPaths(out)
	return tools.TerminalResult{Output: out, Notes: notes, ExitCode: code, Signal: sig, Truncated: cut, FullOutput: paths}
}

// bashAccess is what a bash call touches for the permission check: its
// workdir (when given), its command and the directory it starts in, and
// whether it asks to run outside the sandbox (only when there is one to
// leave: without confinement the flag changes nothing, so it asks
// nothing extra).
func (m *Manager) bashAccess(a bashArgs) tools.Access {
	acc := tools.Access{Command: a.Command, Dir: a.Workdir, Unsandboxed: a.DangerouslyDisableSandbox && m.Confined()}
	if a.Workdir != "" {
		acc.Paths = []string{a.Workdir}
	}
	return acc
}

// blockedLine is the line added to a failed command's result when its
// output shows a write the sandbox refused (sandbox.Policy.Blocked), or "".
func (p *proc) blockedLine(output string) string {
	if !p.sp.Confined {
		return ""
	}
	path, ok := p.policy.Blocked(output, p.dir)
	if !ok {
		return ""
	}
	return "[sandbox: the write to " + path + " was blocked: commands may write only " + writableText(p.policy.Config.Mode) +
		". If this command must write there, run it again with dangerously_disable_sandbox: true (the user will be asked)]"
}
