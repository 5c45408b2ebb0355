package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// attackDecide remembers "always allow" for each of allowed, then judges cmd.
func attackDecide(t *testing.T, allowed []string, cmd string) Decision {
	t.Helper()
	cwd := t.TempDir()
	m := NewMemory()
	for _, a := range allowed {
		m.Remember(Call{Tool: "bash", Class: tools.ClassExecute, Command: a, Cwd: cwd}, true)
	}
	d, _ := m.Decide(ModeDefault, Call{Tool: "bash", Class: tools.ClassExecute, Command: cmd, Cwd: cwd})
	return d
}

// `>& word` with a non-numeric word is bash's "stdout and stderr to file":
// DplOut is waved through without looking at the target.
func TestAttackDupRedirectToOutsideFile(t *testing.T) {
	if d := attackDecide(t, []string{"echo"}, "echo pwned >& /etc/x"); d != Ask {
		t.Fatalf("`echo pwned >& /etc/x` (writes /etc/x): got %v, want Ask", d)
	}
}

// `~` in a redirection target is expanded by bash to $HOME, but the
// policy resolves it as a relative path inside cwd.
func TestAttackTildeRedirectTarget(t *testing.T) {
	if d := attackDecide(t, []string{"echo"}, "echo pwned >> ~/.bashrc"); d != Ask {
		t.Fatalf("`echo pwned >> ~/.bashrc`: got %v, want Ask", d)
	}
}

// Redirections are judged against the session cwd even after a cd in the
// same command line.
func TestAttackCdThenRelativeRedirect(t *testing.T) {
	if d := attackDecide(t, []string{"cd /tmp", "echo"}, "cd / && echo pwned > etc/x"); d != Ask {
		t.Fatalf("`cd / && echo pwned > etc/x`: got %v, want Ask", d)
	}
}

// Code hidden in a single-quoted string runs through bash's own
// re-evaluation (prompt expansion ${x@P}, arithmetic array subscripts):
// "commands with $(...) always ask" does not hold.
func TestAttackHiddenCommandSubstitution(t *testing.T) {
	for _, cmd := range []string{
		`x='$(touch pwned)'; echo ${x@P}`,
		`x='a[$(touch pwned)]'; echo $((x))`,
		`declare 'a[$(touch pwned)]=1'; echo`,
	} {
		if d := attackDecide(t, []string{"echo"}, cmd); d != Ask {
			t.Errorf("%q: got %v, want Ask", cmd, d)
		}
	}
}

// Environment assignments before an allowed command are ignored: git
// status with core.fsmonitor injected runs any command.
func TestAttackEnvAssignmentPrefix(t *testing.T) {
	cmd := `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch pwned' git status`
	if d := attackDecide(t, []string{"git status"}, cmd); d != Ask {
		t.Fatalf("%q: got %v, want Ask", cmd, d)
	}
}

// "Always allow" on a call outside the project remembers only the path;
// afterwards any tool and any command on that path runs without asking:
// always-allowing `ls` in workdir /x lets `rm -rf ~` run there, and
// always-allowing a read of a file lets it be overwritten.
func TestAttackOutsidePathMemoryCoversEveryCommand(t *testing.T) {
	cwd, other := t.TempDir(), t.TempDir()
	m := NewMemory()
	m.Remember(Call{Tool: "bash", Class: tools.ClassExecute, Command: "ls", Paths: []string{other}, Cwd: cwd}, true)
	if d, _ := m.Decide(ModeDefault, Call{Tool: "bash", Class: tools.ClassExecute, Command: "rm -rf ~", Paths: []string{other}, Cwd: cwd}); d != Ask {
		t.Errorf("`rm -rf ~` in an always-allowed outside workdir: got %v, want Ask", d)
	}
	f := other + "/notes.txt"
	m.Remember(Call{Tool: "read", Class: tools.ClassReadOnly, Paths: []string{f}, Cwd: cwd}, true)
	if d, _ := m.Decide(ModeDefault, Call{Tool: "write", Class: tools.ClassEdit, Paths: []string{f}, Cwd: cwd}); d != Ask {
		t.Errorf("write to an outside file whose read was always-allowed: got %v, want Ask", d)
	}
}

// `..` after a symlink: the policy cleans `link/..` away lexically, the
// kernel follows the link first. With link -> /outside/dir,
// `> link/../x` writes /outside/x.
func TestAttackSymlinkDotDotRedirect(t *testing.T) {
	cwd, out := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(out, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "dir"), filepath.Join(cwd, "link")); err != nil {
		t.Fatal(err)
	}
	m := NewMemory()
	m.Remember(Call{Tool: "bash", Class: tools.ClassExecute, Command: "echo", Cwd: cwd}, true)
	if d, _ := m.Decide(ModeDefault, Call{Tool: "bash", Class: tools.ClassExecute, Command: "echo pwned > link/../x", Cwd: cwd}); d != Ask {
		t.Fatalf("`echo pwned > link/../x` (writes %s/x): got %v, want Ask", out, d)
	}
}
