// Package permission decides, for one tool call, whether it runs, asks
// the user first, or is refused: from the session mode, the class the
// tool declares (tools.Class), the paths it touches (inside or outside
// the session cwd) and the answers the user asked to remember. It knows
// no tool by name. It holds no I/O beyond resolving paths; the bridge
// asks the editor and applies the answer.
package permission

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dsh-acp/dsh-acp/tools"
)

// The session modes (ACP SessionModeId values; INTERFACE.md --mode).
const (
	ModeDefault     = "default"
	ModeAcceptEdits = "acceptEdits"
	ModePlan        = "plan"
	ModeBypass      = "bypassPermissions"
)

// Mode describes one mode for the editor's mode selector.
type Mode struct {
	ID, Name, Description string
}

// Modes are the modes a session can be in, in selector order.
var Modes = []Mode{
	{ModeDefault, "Default", "Reads inside the project run; file edits and commands ask first."},
	{ModeAcceptEdits, "Accept edits", "File edits inside the project run without asking; commands ask first."},
	{ModePlan, "Plan", "Read-only: nothing that changes files or runs commands."},
	{ModeBypass, "Bypass permissions", "Everything runs without asking, except paths outside the project."},
}

// ValidMode reports whether id is one of Modes.
func ValidMode(id string) bool {
	for _, m := range Modes {
		if m.ID == id {
			return true
		}
	}
	return false
}

// Decision is the outcome of Decide.
type Decision int

// Decisions.
const (
	Allow Decision = iota
	Ask
	Refuse
)

// Call is one tool call as the policy sees it.
type Call struct {
	// Tool is the tool's name: the key of remembered answers, never a
	// rule of its own.
	Tool string
	// Class is what the tool declares its calls change (Tool.Class); the
	// zero value, tools.ClassUndeclared, is judged strictest.
	Class tools.Class
	// Paths are the files or directories the call touches, as given
	// (relative ones are resolved against Cwd): what the tool's Access
	// returns (a file path, a command's working directory).
	Paths []string
	// Command is the command text of a ClassExecute call (a shell
	// command line), judged by BashPrefixes and RedirectsOutside.
	Command string
	// Unsandboxed: the command runs outside the kernel sandbox (bash's
	// dangerously_disable_sandbox). Such a call asks in every mode but
	// bypassPermissions, even when its prefix or paths were allowed
	// always; a remembered reject still refuses it.
	Unsandboxed bool
	// Cwd is the session's absolute working directory.
	Cwd string
}

// Memory holds a session's remembered answers (allow_always and
// reject_always). Safe for concurrent use.
type Memory struct {
	mu       sync.Mutex
	tools    map[string]bool  // tool name -> allowed (edit and other tools)
	prefixes map[string]bool  // bash command prefix -> allowed
	paths    map[pathKey]bool // (tool, resolved outside path) -> allowed
}

// pathKey is an outside path remembered for one tool.
type pathKey struct{ tool, path string }

// NewMemory returns an empty memory.
func NewMemory() *Memory {
	return &Memory{tools: map[string]bool{}, prefixes: map[string]bool{}, paths: map[pathKey]bool{}}
}

// Decide returns what to do with c in mode, and a reason for the model
// when the call is refused.
func (m *Memory) Decide(mode string, c Call) (Decision, string) {
	class := c.Class
	if mode == ModePlan && !unasked(class) {
		return Refuse, "the session is in plan mode: tools that change files or run commands are not available; describe the change instead, or ask the user to leave plan mode"
	}
	if c.Unsandboxed && mode != ModeBypass {
		// Its own prompt, every time: what was allowed was allowed inside
		// the sandbox.
		inside := c
		inside.Unsandboxed = false
		if d, why := m.Decide(mode, inside); d == Refuse {
			return d, why
		}
		return Ask, ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if outside := outsidePaths(c); len(outside) > 0 {
		// Outside the cwd every call asks, unless the user said "always"
		// for this tool on these very paths; a command there must still
		// pass the prefix rule.
		for _, p := range outside {
			allowed, known := m.paths[pathKey{c.Tool, p}]
			if known && !allowed {
				return Refuse, "the user refused " + c.Tool + " on " + p
			}
			if !known {
				return Ask, ""
			}
		}
		if class == tools.ClassExecute && mode != ModeBypass {
			return m.commandDecision(c)
		}
		return Allow, ""
	}
	if unasked(class) {
		return Allow, ""
	}
	if mode == ModeBypass {
		if class == tools.ClassExecute && RedirectsOutside(c.Command, c.Cwd) {
			return Ask, ""
		}
		return Allow, ""
	}
	switch class {
	case tools.ClassEdit:
		if mode == ModeAcceptEdits {
			return Allow, ""
		}
		return m.toolDecision(c.Tool)
	case tools.ClassExecute:
		return m.commandDecision(c)
	}
	// ClassUndeclared (or a class this policy does not know): asked in
	// acceptEdits too, which vouches for file edits only.
	return m.toolDecision(c.Tool)
}

// unasked reports whether calls of class run without asking in every
// mode (inside the cwd): they change nothing outside the agent.
func unasked(class tools.Class) bool {
	return class == tools.ClassReadOnly || class == tools.ClassAgentState
}

// commandDecision applies the remembered bash prefixes: a command runs
// unasked only when every simple command in it has an allowed prefix.
func (m *Memory) commandDecision(c Call) (Decision, string) {
	prefixes, ok := BashPrefixes(c.Command, c.Cwd)
	if !ok || len(prefixes) == 0 {
		return Ask, ""
	}
	all := true
	for _, p := range prefixes {
		allowed, known := m.prefixes[p]
		if known && !allowed {
			return Refuse, "the user refused commands starting with " + p
		}
		all = all && known && allowed
	}
	if all {
		return Allow, ""
	}
	return Ask, ""
}

func (m *Memory) toolDecision(tool string) (Decision, string) {
	allowed, known := m.tools[tool]
	switch {
	case !known:
		return Ask, ""
	case allowed:
		return Allow, ""
	}
	return Refuse, "the user refused " + tool + " for this session"
}

// Remember records an always answer for c: for a call touching paths
// outside the cwd, those paths for that tool only; for a ClassExecute
// call, also the prefixes of the simple commands of its Command (nothing
// when the command cannot be judged); for other tools inside the cwd, the
// tool. Running outside the sandbox (c.Unsandboxed) is never remembered:
// an allow covers the same prefixes inside the sandbox, and the next
// unsandboxed run asks again.
func (m *Memory) Remember(c Call, allow bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	outside := outsidePaths(c)
	for _, p := range outside {
		m.paths[pathKey{c.Tool, p}] = allow
	}
	if c.Class == tools.ClassExecute {
		if prefixes, ok := BashPrefixes(c.Command, c.Cwd); ok {
			for _, p := range prefixes {
				m.prefixes[p] = allow
			}
		}
		return
	}
	if len(outside) > 0 {
		return
	}
	m.tools[c.Tool] = allow
}

// outsidePaths returns the resolved paths of c that are not inside its cwd.
func outsidePaths(c Call) []string {
	var out []string
	for _, p := range c.Paths {
		if p == "" {
			continue
		}
		r := Resolve(c.Cwd, p)
		if !Inside(c.Cwd, r) {
			out = append(out, r)
		}
	}
	return out
}

// Resolve makes p absolute against cwd and resolves it the way the kernel
// does, one component at a time: a symlink is followed where it stands
// (so "link/.." is the link target's parent), a dangling link to its
// target, and the missing tail of a path that does not exist yet is kept.
// After 40 links it gives up and returns the path as it is.
func Resolve(cwd, p string) string {
	if !filepath.IsAbs(p) {
		p = cwd + string(filepath.Separator) + p
	}
	pending := strings.Split(p, string(filepath.Separator))
	resolved := string(filepath.Separator)
	for hops := 0; len(pending) > 0; {
		comp := pending[0]
		pending = pending[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, comp)
		target, err := os.Readlink(next)
		if err != nil {
			// Not a link (or not there): take it as it is.
			resolved = next
			continue
		}
		if hops++; hops > 40 {
			return filepath.Clean(p)
		}
		if filepath.IsAbs(target) {
			resolved = string(filepath.Separator)
		}
		pending = append(strings.Split(target, string(filepath.Separator)), pending...)
	}
	return resolved
}

// Inside reports whether the resolved path p is cwd or below it (by path
// segment: /proj2 is not inside /proj). cwd is resolved the same way.
func Inside(cwd, p string) bool {
	root := Resolve(cwd, cwd)
	if p == root {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}
