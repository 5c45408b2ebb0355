// Package permission decides, for one tool call, whether it runs, asks
// the user first, or is refused: from the session mode, the class the
// tool declares (tools.Class), the paths it touches (inside or outside
// the session cwd) and the answers the user asked to remember. It knows
// no tool by name. It holds no I/O beyond resolving paths; the bridge
// asks the editor and applies the answer.
package permission

import (
	"sync"

	"github.com/dsh-acp/dsh-acp/tools"
)

// The session modes (ACP SessionModeId values; the --mode flag).
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
	// command line), judged by its text (see BashPrefixes).
	Command string
	// Unsandboxed: the command runs outside the kernel sandbox (bash's
	// dangerously_disable_sandbox). Such a call asks in every mode,
	// bypassPermissions included, even when its prefix or paths were
	// allowed always; a remembered reject still refuses it.
	Unsandboxed bool
	// Dir is the directory Command starts in, as given (relative to
	// Cwd); "" means Cwd. Relative paths in Command are judged against it.
	Dir string
	// Host is the network host a ClassNetwork call sends its request to
	// (Access.Host, lower case): asked, and remembered, per host.
	Host string
	// Cwd is the session's absolute working directory.
	Cwd string
	// Dirs are the session's additional workspace roots (ACP
	// additionalDirectories, absolute): paths under them are inside the
	// project, as paths under Cwd are. Relative paths and command text
	// are still judged against Cwd alone.
	Dirs []string
}

// Memory holds a session's remembered answers (allow_always and
// reject_always). Safe for concurrent use.
type Memory struct {
	mu       sync.Mutex
	tools    map[string]bool  // tool name -> allowed (edit and other tools)
	prefixes map[string]bool  // bash command prefix -> allowed
	paths    map[pathKey]bool // (tool, resolved outside path) -> allowed
	hosts    map[pathKey]bool // (tool, network host) -> allowed
}

// pathKey is an outside path remembered for one tool.
type pathKey struct{ tool, path string }

// NewMemory returns an empty memory.
func NewMemory() *Memory {
	return &Memory{tools: map[string]bool{}, prefixes: map[string]bool{}, paths: map[pathKey]bool{}, hosts: map[pathKey]bool{}}
}

// Clone returns a memory holding the same answers as m, which later
// answers to either do not change (a forked session's copy).
func (m *Memory) Clone() *Memory {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := NewMemory()
	for k, v := range m.tools {
		c.tools[k] = v
	}
	for k, v := range m.prefixes {
		c.prefixes[k] = v
	}
	for k, v := range m.paths {
		c.paths[k] = v
	}
	for k, v := range m.hosts {
		c.hosts[k] = v
	}
	return c
}

// Decide returns what to do with c in mode, and a reason for the model
// when the call is refused:
//   - plan mode refuses every call that is not read-only or agent state
//     (a read-only claim of an untrusted party, ClassReadOnlyClaimed,
//     is refused too);
//   - a call outside the sandbox (Unsandboxed) asks in every mode;
//   - a path outside the cwd (resolved the kernel's way, ResolvePath)
//     asks in every mode unless "always" was answered for this tool on
//     that very path; so does, in every mode but bypassPermissions, a
//     path naming a file that runs code (RunsCode) for a call that is
//     not read-only;
//   - read-only, claimed read-only and agent-state calls run;
//   - a command (ClassExecute) runs in bypassPermissions unless its text
//     redirects outside the project or cannot be parsed; in the other
//     modes it runs when every simple command has a remembered prefix
//     and nothing in it escapes the prefix rule (see BashPrefixes);
//   - bypassPermissions runs everything else; acceptEdits runs edits;
//     other calls run when "always" was answered for the tool;
//   - a network call (ClassNetwork) is judged by its host alone (see
//     networkDecision).
func (m *Memory) Decide(mode string, c Call) (Decision, string) {
	class := c.Class
	if class == tools.ClassNetwork {
		return m.networkDecision(mode, c)
	}
	if mode == ModePlan && class == tools.ClassReadOnlyClaimed {
		return Refuse, "the session is in plan mode, which runs only tools known to change nothing: this tool's server says it only reads, but the user has not marked the server trusted; do without it, or ask the user to leave plan mode"
	}
	if mode == ModePlan && !unasked(class) {
		return Refuse, "the session is in plan mode: tools that change files or run commands are not available; describe the change instead, or ask the user to leave plan mode"
	}
	if c.Unsandboxed {
		// Its own prompt, every time and in every mode (bypassPermissions
		// too: it vouches for what runs in the sandbox): what was allowed
		// was allowed inside the sandbox.
		inside := c
		inside.Unsandboxed = false
		if d, why := m.Decide(mode, inside); d == Refuse {
			return d, why
		}
		return Ask, ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	special := specialPaths(mode, c)
	for _, p := range special {
		// Such a path asks, unless the user said "always" for this tool
		// on this very path; a command there must still pass the rules
		// below.
		allowed, known := m.paths[pathKey{c.Tool, p}]
		if known && !allowed {
			return Refuse, "the user refused " + c.Tool + " on " + p
		}
		if !known {
			return Ask, ""
		}
	}
	if unasked(class) || class == tools.ClassReadOnlyClaimed {
		// A claimed read-only call with no special path: plan mode has
		// refused it above.
		return Allow, ""
	}
	if class == tools.ClassExecute {
		f := analyzeBash(c.Command, newScope(c.Cwd, c.Dir))
		if mode == ModeBypass {
			// bypassPermissions runs commands, except where they name
			// a path outside the project in a redirection (README).
			if !f.parsed || f.redirect {
				return Ask, ""
			}
			return Allow, ""
		}
		return m.commandDecision(f)
	}
	if mode == ModeBypass || len(special) > 0 {
		return Allow, ""
	}
	// Edits run in acceptEdits; an undeclared class (or one this policy
	// does not know) asks there too, as acceptEdits vouches for file
	// edits only.
	if class == tools.ClassEdit && mode == ModeAcceptEdits {
		return Allow, ""
	}
	return m.toolDecision(c.Tool)
}

// specialPaths are the resolved paths of c that ask on their own (see
// Decide): outside the cwd, or running code.
func specialPaths(mode string, c Call) []string {
	var out []string
	for _, n := range Explain(mode, c) {
		out = append(out, n.Path)
	}
	return out
}

// Outside returns the resolved paths of c that lie outside its cwd and
// its additional directories (the real absolute paths a prompt shows),
// in order.
func Outside(c Call) []string { return outsidePaths(c) }

// unasked reports whether calls of class run without asking in every
// mode (inside the cwd): they change nothing outside the agent.
func unasked(class tools.Class) bool {
	return class == tools.ClassReadOnly || class == tools.ClassAgentState
}

// commandDecision applies the remembered bash prefixes: a command runs
// unasked only when every simple command in it has an allowed prefix and
// nothing in it escapes the prefix rule; a remembered reject of any of
// its prefixes refuses it.
func (m *Memory) commandDecision(f bashFacts) (Decision, string) {
	if !f.parsed || len(f.prefixes) == 0 {
		return Ask, ""
	}
	all := true
	for _, p := range f.prefixes {
		allowed, known := m.prefixes[p]
		if known && !allowed {
			return Refuse, "the user refused commands starting with " + p
		}
		all = all && known && allowed
	}
	if all && f.covered() {
		return Allow, ""
	}
	return Ask, ""
}

// networkDecision judges a ClassNetwork call by its host: it runs in
// bypassPermissions, and in every other mode when "always" was answered
// for this tool on this host; a remembered reject refuses it; otherwise
// plan mode refuses it and default and acceptEdits ask (acceptEdits
// vouches for file edits, not for what leaves the machine). A call
// naming no host is judged as a host of its own ("").
func (m *Memory) networkDecision(mode string, c Call) (Decision, string) {
	if mode == ModeBypass {
		return Allow, ""
	}
	m.mu.Lock()
	allowed, known := m.hosts[pathKey{c.Tool, c.Host}]
	m.mu.Unlock()
	switch {
	case known && allowed:
		return Allow, ""
	case known:
		return Refuse, "the user refused " + c.Tool + " for " + c.Host
	case mode == ModePlan:
		return Refuse, "the session is in plan mode: " + c.Tool + " may reach only hosts the user allowed before, and " + c.Host + " is not one; ask the user to allow it or to leave plan mode"
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

// Rule is one remembered answer, as Remember stores it and Restore puts
// it back (the bridge logs it with the session, so session/load restores
// it): Allow for allow_always, false for reject_always; Tool is the
// tool's name; Paths are resolved paths remembered for Tool (outside
// paths, files that run code); Prefixes are command prefixes (for any
// command tool); Hosts are network hosts remembered for Tool (a
// ClassNetwork call); Whole means the answer covers Tool itself.
type Rule struct {
	Tool     string
	Allow    bool
	Paths    []string
	Prefixes []string
	Hosts    []string
	Whole    bool
}

// Remember records an always answer for c (given in a prompt, so in a
// mode that asked) and returns what it stored:
// for a call touching special paths (outside the cwd, files that run
// code), those paths for that tool only; for a ClassExecute call, also
// the prefixes of the simple commands of its Command (none when the
// command's text cannot be judged: it does not parse or hides
// evaluation; never a runner's, see BashPrefixes); for a ClassNetwork
// call, its host for that tool only; for other tools with no special
// path, the tool. Running
// outside the sandbox (c.Unsandboxed) is never remembered: an allow
// covers the same prefixes inside the sandbox, and the next unsandboxed
// run asks again.
func (m *Memory) Remember(c Call, allow bool) Rule {
	if c.Class == tools.ClassNetwork {
		r := Rule{Tool: c.Tool, Allow: allow, Hosts: []string{c.Host}}
		m.Restore(r)
		return r
	}
	special := specialPaths("", c)
	r := Rule{Tool: c.Tool, Allow: allow, Paths: special}
	if c.Class == tools.ClassExecute {
		r.Prefixes = analyzeBash(c.Command, newScope(c.Cwd, c.Dir)).rememberable()
	} else if len(special) == 0 {
		r.Whole = true
	}
	m.Restore(r)
	return r
}

// Restore puts back a rule Remember returned (e.g. read from a session
// log); later rules win over earlier ones.
func (m *Memory) Restore(r Rule) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range r.Paths {
		m.paths[pathKey{r.Tool, p}] = r.Allow
	}
	for _, p := range r.Prefixes {
		m.prefixes[p] = r.Allow
	}
	for _, h := range r.Hosts {
		m.hosts[pathKey{r.Tool, h}] = r.Allow
	}
	if r.Whole {
		m.tools[r.Tool] = r.Allow
	}
}

// outsidePaths returns the resolved paths of c that are neither inside
// its cwd nor inside one of its additional directories.
func outsidePaths(c Call) []string {
	var out []string
	for _, p := range c.Paths {
		if p == "" {
			continue
		}
		r := Resolve(c.Cwd, p)
		if !insideProject(c, r) {
			out = append(out, r)
		}
	}
	return out
}

// insideProject reports whether the resolved path r is inside c's cwd or
// one of its additional directories.
func insideProject(c Call, r string) bool {
	if Inside(c.Cwd, r) {
		return true
	}
	for _, d := range c.Dirs {
		if d != "" && Inside(d, r) {
			return true
		}
	}
	return false
}

// runsCodeInProject reports whether the resolved path r is a file that
// runs code (RunsCode) below c's cwd or one of its additional
// directories.
func runsCodeInProject(c Call, r string) bool {
	for _, root := range append([]string{c.Cwd}, c.Dirs...) {
		if root != "" && Inside(root, r) && RunsCode(root, r) {
			return true
		}
	}
	return false
}

// Note is one reason a call asks on its own, for the prompt (see Explain).
type Note struct {
	// Path is the real absolute path (resolved).
	Path string
	// Outside: Path lies outside the project; else it is a file that
	// runs code (RunsCode).
	Outside bool
	// Text says it in a sentence.
	Text string
}

// Explain returns, for a prompt, why c's paths ask on their own in mode:
// each path outside the cwd (its real absolute path, whatever the
// arguments spelled) and, but in bypassPermissions or for a read-only
// call, each file that runs code and the characters of the command or
// a path that do not show or reorder the text (hiddenNotes). Nil when
// there is none.
func Explain(mode string, c Call) []Note {
	var out []Note
	for _, p := range outsidePaths(c) {
		out = append(out, Note{Path: p, Outside: true, Text: "Outside the project: " + p})
	}
	if mode == ModeBypass || unasked(c.Class) {
		return out
	}
	out = append(out, hiddenNotes(c)...)
	if c.Class == tools.ClassNetwork && c.Host != "" {
		// The title is the full URL; say what an "always" covers.
		out = append(out, Note{Text: "Sends a request to " + c.Host + `; "Always allow" allows ` + c.Tool + " to reach this host for the rest of the session."})
	}
	for _, p := range c.Paths {
		if p == "" {
			continue
		}
		if r := Resolve(c.Cwd, p); runsCodeInProject(c, r) {
			out = append(out, Note{Path: r, Text: "Runs code: " + r + " (git runs commands from .git/ config and hooks; direnv runs .envrc)"})
		}
	}
	return out
}
