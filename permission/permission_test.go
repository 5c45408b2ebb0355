package permission

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

func TestBashPrefixes(t *testing.T) {
	cwd := t.TempDir()
	cases := []struct {
		cmd  string
		want []string
		ok   bool
	}{
		{"git status --short", []string{"git status"}, true},
		{"git log", []string{"git log"}, true},
		{"ls -la && go test ./...", []string{"ls", "go test"}, true},
		{"git status; rm -rf x", []string{"git status", "rm"}, true},
		{"cat a | grep b > out.txt", []string{"cat", "grep"}, true},
		{"make build 2>&1 >/dev/null", []string{"make build"}, true},
		{"FOO=1 make build", nil, false},
		{"echo x >&2", []string{"echo"}, true},
		{"echo hi > /dev/null", []string{"echo"}, true},
		{"git status $(rm -rf x)", nil, false},
		{"diff <(ls a) <(ls b)", nil, false},
		{"echo x > /etc/passwd", nil, false},
		{"echo x > ../outside", nil, false},
		{"echo x > $TARGET", nil, false},
		{"$CMD arg", nil, false},
		{"if then fi (", nil, false},
	}
	for _, c := range cases {
		got, ok := BashPrefixes(c.cmd, cwd)
		if ok != c.ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("BashPrefixes(%q) = %q, %v; want %q, %v", c.cmd, got, ok, c.want, c.ok)
		}
	}
}

// TestAllowAlwaysGitStatus is the example.
func TestAllowAlwaysGitStatus(t *testing.T) {
	cwd := t.TempDir()
	m := NewMemory()
	m.Remember(Call{Tool: "bash", Class: tools.ClassExecute, Command: "git status", Cwd: cwd}, true)
	for cmd, want := range map[string]Decision{
		"git status --short":       Allow,
		"git log":                  Ask,
		"git status; rm -rf x":     Ask,
		"git status $(rm -rf x)":   Ask,
		"git status && git status": Allow,
	} {
		if got, _ := m.Decide(ModeDefault, Call{Tool: "bash", Class: tools.ClassExecute, Command: cmd, Cwd: cwd}); got != want {
			t.Errorf("%q: got %v, want %v", cmd, got, want)
		}
	}
	m.Remember(Call{Tool: "bash", Class: tools.ClassExecute, Command: "rm x", Cwd: cwd}, false)
	if got, _ := m.Decide(ModeDefault, Call{Tool: "bash", Class: tools.ClassExecute, Command: "git status; rm -rf y", Cwd: cwd}); got != Refuse {
		t.Errorf("remembered reject: got %v", got)
	}
}

// TestDecideTable: mode × tool class × inside/outside.
func TestDecideTable(t *testing.T) {
	cwd := t.TempDir()
	outside := t.TempDir()
	in, out := filepath.Join(cwd, "a.txt"), filepath.Join(outside, "b.txt")
	type row struct {
		tool  string
		class tools.Class
		path  string
		want  map[string]Decision // by mode
	}
	all := func(d Decision) map[string]Decision {
		return map[string]Decision{ModeDefault: d, ModeAcceptEdits: d, ModePlan: d, ModeBypass: d}
	}
	rows := []row{
		{"read", tools.ClassReadOnly, in, all(Allow)},
		{"read", tools.ClassReadOnly, out, all(Ask)},
		{"todo_write", tools.ClassAgentState, "", all(Allow)},
		{"bash_output", tools.ClassReadOnly, "", all(Allow)},
		{"bash_kill", tools.ClassAgentState, "", all(Allow)},
		{"write", tools.ClassEdit, in, map[string]Decision{ModeDefault: Ask, ModeAcceptEdits: Allow, ModePlan: Refuse, ModeBypass: Allow}},
		{"edit", tools.ClassEdit, in, map[string]Decision{ModeDefault: Ask, ModeAcceptEdits: Allow, ModePlan: Refuse, ModeBypass: Allow}},
		{"write", tools.ClassEdit, out, map[string]Decision{ModeDefault: Ask, ModeAcceptEdits: Ask, ModePlan: Refuse, ModeBypass: Ask}},
		{"bash", tools.ClassExecute, "", map[string]Decision{ModeDefault: Ask, ModeAcceptEdits: Ask, ModePlan: Refuse, ModeBypass: Allow}},
		{"bash", tools.ClassExecute, outside, map[string]Decision{ModeDefault: Ask, ModeAcceptEdits: Ask, ModePlan: Refuse, ModeBypass: Ask}},
		{"mcp_tool", tools.ClassUndeclared, "", map[string]Decision{ModeDefault: Ask, ModeAcceptEdits: Ask, ModePlan: Refuse, ModeBypass: Allow}},
		// The class decides, never the name: a read-only tool the policy
		// has never heard of runs unasked, and a tool called "read" that
		// declares nothing is judged strictest.
		{"grep", tools.ClassReadOnly, in, all(Allow)},
		{"grep", tools.ClassReadOnly, out, all(Ask)},
		{"read", tools.ClassUndeclared, in, map[string]Decision{ModeDefault: Ask, ModeAcceptEdits: Ask, ModePlan: Refuse, ModeBypass: Allow}},
	}
	for _, r := range rows {
		for mode, want := range r.want {
			c := Call{Tool: r.tool, Class: r.class, Cwd: cwd, Command: "make build"}
			if r.path != "" {
				c.Paths = []string{r.path}
			}
			if got, _ := NewMemory().Decide(mode, c); got != want {
				t.Errorf("%s %s in %s: got %v, want %v", r.tool, r.path, mode, got, want)
			}
		}
	}
}

// TestOutsideRemembered: allow_always for a path outside the cwd covers
// that path only; symlinks and ".." are resolved.
func TestOutsideRemembered(t *testing.T) {
	cwd := t.TempDir()
	outside := t.TempDir()
	link := filepath.Join(cwd, "escape")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	m := NewMemory()
	c := Call{Tool: "read", Class: tools.ClassReadOnly, Paths: []string{"escape/secret.txt"}, Cwd: cwd}
	if got, _ := m.Decide(ModeBypass, c); got != Ask {
		t.Fatalf("read through a symlink out of the cwd: got %v, want Ask", got)
	}
	m.Remember(c, true)
	if got, _ := m.Decide(ModeBypass, c); got != Allow {
		t.Errorf("remembered path: got %v", got)
	}
	other := Call{Tool: "read", Class: tools.ClassReadOnly, Paths: []string{filepath.Join(outside, "other.txt")}, Cwd: cwd}
	if got, _ := m.Decide(ModeBypass, other); got != Ask {
		t.Errorf("another outside path: got %v, want Ask", got)
	}
	if got, _ := m.Decide(ModeDefault, Call{Tool: "read", Class: tools.ClassReadOnly, Paths: []string{"sub/../../x"}, Cwd: cwd}); got != Ask {
		t.Errorf("../ out of the cwd: got %v", got)
	}
	if Inside("/proj", "/proj2/a") {
		t.Error("/proj2 counted inside /proj")
	}
}

// TestBypassStillAsksForOutsideRedirects: bypassPermissions runs
// commands unasked, except those writing outside the project.
func TestBypassStillAsksForOutsideRedirects(t *testing.T) {
	cwd := t.TempDir()
	for cmd, want := range map[string]Decision{
		"echo hi > out.txt":        Allow,
		"echo hi > /tmp/elsewhere": Ask,
		"echo hi >> ~/.bashrc":     Ask,
		"make $(echo build) 2>&1":  Allow,
		"cat < /etc/hosts":         Ask,
		"echo hi >/dev/null 2>&1":  Allow,
	} {
		if got, _ := NewMemory().Decide(ModeBypass, Call{Tool: "bash", Class: tools.ClassExecute, Command: cmd, Cwd: cwd}); got != want {
			t.Errorf("%q in bypassPermissions: got %v, want %v", cmd, got, want)
		}
	}
}

// TestUnsandboxedAsks: a call that runs outside the sandbox asks in every
// mode, bypassPermissions too (plan refuses it like any command), whatever
// prefix or path was allowed always; a remembered reject still refuses
// it, and allowing it once remembers nothing about leaving the sandbox.
func TestUnsandboxedAsks(t *testing.T) {
	cwd := t.TempDir()
	m := NewMemory()
	m.Remember(Call{Tool: "bash", Class: tools.ClassExecute, Command: "make build", Cwd: cwd}, true)
	m.Remember(Call{Tool: "bash", Class: tools.ClassExecute, Command: "rm x", Cwd: cwd}, false)
	out := Call{Tool: "bash", Class: tools.ClassExecute, Command: "make build", Cwd: cwd, Unsandboxed: true}
	for mode, want := range map[string]Decision{ModeDefault: Ask, ModeAcceptEdits: Ask, ModeBypass: Ask, ModePlan: Refuse} {
		if got, _ := m.Decide(mode, out); got != want {
			t.Errorf("%s: %v, want %v", mode, got, want)
		}
	}
	inside := out
	inside.Unsandboxed = false
	if got, _ := m.Decide(ModeDefault, inside); got != Allow {
		t.Errorf("the same call inside the sandbox: %v, want Allow", got)
	}
	if got, why := m.Decide(ModeDefault, Call{Tool: "bash", Class: tools.ClassExecute, Command: "rm -rf y", Cwd: cwd, Unsandboxed: true}); got != Refuse || why == "" {
		t.Errorf("remembered reject: %v %q", got, why)
	}
	m.Remember(out, true)
	if got, _ := m.Decide(ModeDefault, out); got != Ask {
		t.Errorf("after always-allow of an unsandboxed run: %v, want Ask", got)
	}
}

// TestAdditionalDirectories: paths under an additional directory are
// inside the project (edits run unasked in acceptEdits, reads in every
// mode), a symlink out of one is not, and a sibling named like it is
// outside; Clone copies answers that later answers to the original do
// not change.
func TestAdditionalDirectories(t *testing.T) {
	cwd, extra, outside := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(extra, "escape")); err != nil {
		t.Fatal(err)
	}
	m := NewMemory()
	call := func(class tools.Class, p string) Call {
		return Call{Tool: "edit", Class: class, Paths: []string{p}, Cwd: cwd, Dirs: []string{extra}}
	}
	cases := []struct {
		mode  string
		class tools.Class
		path  string
		want  Decision
	}{
		{ModeAcceptEdits, tools.ClassEdit, filepath.Join(extra, "a.txt"), Allow},
		{ModeDefault, tools.ClassReadOnly, filepath.Join(extra, "sub", "b.txt"), Allow},
		{ModeDefault, tools.ClassEdit, filepath.Join(extra, "a.txt"), Ask},
		{ModeAcceptEdits, tools.ClassEdit, filepath.Join(extra, "escape", "x"), Ask},
		{ModeAcceptEdits, tools.ClassEdit, extra + "2/a.txt", Ask},
		{ModeAcceptEdits, tools.ClassEdit, filepath.Join(outside, "a.txt"), Ask},
	}
	for _, c := range cases {
		if got, _ := m.Decide(c.mode, call(c.class, c.path)); got != c.want {
			t.Errorf("%s %v %s: got %v, want %v", c.mode, c.class, c.path, got, c.want)
		}
	}
	m.Remember(Call{Tool: "write", Class: tools.ClassEdit, Cwd: cwd}, true)
	cl := m.Clone()
	m.Remember(Call{Tool: "write", Class: tools.ClassEdit, Cwd: cwd}, false)
	if got, _ := cl.Decide(ModeDefault, Call{Tool: "write", Class: tools.ClassEdit, Cwd: cwd}); got != Allow {
		t.Errorf("the clone's answer: %v", got)
	}
	if got, _ := m.Decide(ModeDefault, Call{Tool: "write", Class: tools.ClassEdit, Cwd: cwd}); got != Refuse {
		t.Errorf("the original's later answer: %v", got)
	}
}

// TestReadOnlyClaimed: a read-only claim of an untrusted party runs
// unasked in default, acceptEdits and bypassPermissions on paths inside
// the project, asks on a path outside (bypassPermissions too) or on a
// file that runs code, and is refused in plan mode.
func TestReadOnlyClaimed(t *testing.T) {
	cwd := t.TempDir()
	m := NewMemory()
	call := func(paths ...string) Call {
		return Call{Tool: "mcp__x__read", Class: tools.ClassReadOnlyClaimed, Paths: paths, Cwd: cwd}
	}
	for _, mode := range []string{ModeDefault, ModeAcceptEdits, ModeBypass} {
		if d, _ := m.Decide(mode, call("a.txt")); d != Allow {
			t.Errorf("%s inside: %v, want Allow", mode, d)
		}
		if d, _ := m.Decide(mode, call("/etc/passwd")); d != Ask {
			t.Errorf("%s outside: %v, want Ask", mode, d)
		}
	}
	if d, _ := m.Decide(ModeDefault, call(".git/config")); d != Ask {
		t.Errorf("a file that runs code: %v, want Ask", d)
	}
	if d, why := m.Decide(ModePlan, call("a.txt")); d != Refuse || !strings.Contains(why, "not marked the server trusted") {
		t.Errorf("plan: %v %q, want Refuse", d, why)
	}
}
