package permission

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// decideIn judges cmd in mode with "always allow" given for each of
// allowed, the command starting in dir ("" for cwd).
func decideIn(t *testing.T, cwd, mode string, allowed []string, cmd, dir string) Decision {
	t.Helper()
	m := NewMemory()
	for _, a := range allowed {
		m.Remember(Call{Tool: "bash", Class: tools.ClassExecute, Command: a, Cwd: cwd}, true)
	}
	c := Call{Tool: "bash", Class: tools.ClassExecute, Command: cmd, Cwd: cwd, Dir: dir}
	if dir != "" {
		c.Paths = []string{dir}
	}
	d, _ := m.Decide(mode, c)
	return d
}

// Issue 12, hidden evaluation: a subscript hidden in a variable's value
// is evaluated as arithmetic by [[ -eq ]], [[ -v ]], for ((...)) and an
// array literal's index, running the command substitution in it. Each
// form is first shown to run its command in real bash, then judged.
func TestAttackHiddenEvaluationForms(t *testing.T) {
	for _, cmd := range []string{
		`y='a[$(touch pwned)]'; [[ $y -eq 0 ]]; echo hi`,
		`[[ -v 'a[$(touch pwned)]' ]]; echo hi`,
		`y='a[$(touch pwned)]'; for ((i=y; i<1; i++)); do echo hi; done`,
		`y='$(touch pwned)'; a=([$y]=1); echo hi`,
		`y='a[$(touch pwned)]'; test -v "$y"; echo hi`,
		`printf -v 'a[$(touch pwned)]' x; echo hi`,
		`read 'a[$(touch pwned)]' <<< x; echo hi`,
	} {
		cwd := t.TempDir()
		run := exec.Command("bash", "-c", cmd)
		run.Dir = cwd
		_ = run.Run()
		if _, err := os.Stat(filepath.Join(cwd, "pwned")); err != nil {
			t.Errorf("%q does not run its hidden command in bash (the test is wrong): %v", cmd, err)
		}
		for _, mode := range []string{ModeDefault, ModeAcceptEdits} {
			if d := decideIn(t, cwd, mode, []string{"echo", "printf", "read", "test"}, cmd, ""); d != Ask {
				t.Errorf("%q in %s under remembered prefixes: got %v, want Ask", cmd, mode, d)
			}
		}
	}
}

// Issue 12, redirections: targets are judged after quote removal and
// escapes, and a target with an expansion asks; in every mode
// (bypassPermissions included, with no prefix remembered there).
func TestAttackEscapedQuotedVariableRedirects(t *testing.T) {
	root := t.TempDir()
	cwd := filepath.Join(root, "proj")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	esc := strings.ReplaceAll(root, "/", `\/`) // \/tmp\/...: /tmp/... to bash
	for _, cmd := range []string{
		`echo x > .\./x`,
		`echo x > ` + esc + `\/x`,
		`echo x > "../x"`,
		`echo x > '` + root + `/x'`,
		`echo x > $PWD/../x`,
		`echo x > "$HOME/x"`,
		`echo x >> ~/x`,
		`echo x > $(echo ../x)`,
		`echo x &> ../x`,
		`echo x >& ../x`,
		`cat < '../secret'`,
		`echo x > ..\/x`,
		`echo x > ".."/x`,
	} {
		for _, mode := range []string{ModeDefault, ModeAcceptEdits, ModeBypass} {
			allowed := []string{"echo", "cat"}
			if mode == ModeBypass {
				allowed = nil
			}
			if d := decideIn(t, cwd, mode, allowed, cmd, ""); d != Ask {
				t.Errorf("%q in %s: got %v, want Ask", cmd, mode, d)
			}
		}
		if d := decideIn(t, cwd, ModePlan, nil, cmd, ""); d != Refuse {
			t.Errorf("%q in plan: got %v, want Refuse", cmd, d)
		}
	}
	// Quoting that stays inside is fine, and judged by its value.
	for _, cmd := range []string{`echo x > "out.txt"`, `echo x > 'sub dir/out.txt'`, `echo x > .\/out`, `echo x 2>&1 >/dev/null`, `echo x >&2`, `echo x 3>&1-`} {
		if d := decideIn(t, cwd, ModeDefault, []string{"echo"}, cmd, ""); d != Allow {
			t.Errorf("%q under echo: got %v, want Allow", cmd, d)
		}
		if d := decideIn(t, cwd, ModeBypass, nil, cmd, ""); d != Allow {
			t.Errorf("%q in bypass: got %v, want Allow", cmd, d)
		}
	}
}

// Issue 12, arguments: "always allow" for a prefix does not cover later
// arguments that name a path outside the project.
func TestAttackOutsideArgumentsUnderPrefix(t *testing.T) {
	root := t.TempDir()
	cwd := filepath.Join(root, "proj")
	out := filepath.Join(root, "out")
	for _, d := range []string{cwd, out, filepath.Join(cwd, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(out, filepath.Join(cwd, "escape")); err != nil {
		t.Fatal(err)
	}
	allowed := []string{"cp x y", "git diff", "cat x", "ls", "tar x", "cd sub", "dd", "gcc x"}
	for _, cmd := range []string{
		"cp x " + out + "/y",
		"git diff --output=" + out + "/patch",
		"git diff --output " + out + "/patch",
		"cat ../out/secret",
		"cat sub/../../out/secret",
		"cat escape/secret",
		"cp x ~/y",
		"cp x ~",
		"cat $HOME/.ssh/id_rsa",
		`cat "$f"`,
		"dd if=x of=" + out + "/y",
		"gcc -o" + out + "/a.out x.c",
		"ls ../*",
		"ls esc*/",
		"ls *",
		// After a cd a relative path is judged against both places (the
		// text does not show whether the cd ran): ../x asks.
		"cd sub && cat ../x",
		"cd sub && cat ../../out/x",
		"cd && rm -rf x",
		"cd - && ls x",
		"cd " + out,
	} {
		if d := decideIn(t, cwd, ModeDefault, allowed, cmd, ""); d != Ask {
			t.Errorf("%q under remembered prefixes: got %v, want Ask", cmd, d)
		}
	}
	for _, cmd := range []string{
		"cp a b",
		"cp a sub/b",
		"git diff --stat",
		"git diff --output=sub/patch",
		"cat sub/../x",
		"ls -la",
		"cd sub && cat x",
		"cd sub && ls > list.txt",
		"cp a /dev/null",
		"ls s*",
	} {
		if d := decideIn(t, cwd, ModeDefault, allowed, cmd, ""); d != Allow {
			t.Errorf("%q under remembered prefixes: got %v, want Allow", cmd, d)
		}
	}
	// A workdir moves the base of relative paths.
	if d := decideIn(t, cwd, ModeDefault, allowed, "cat ../x", "sub"); d != Allow {
		t.Errorf("`cat ../x` in workdir sub: got %v, want Allow", d)
	}
	if d := decideIn(t, cwd, ModeDefault, allowed, "cat ../../out/x", "sub"); d != Ask {
		t.Errorf("`cat ../../out/x` in workdir sub: got %v, want Ask", d)
	}
}

// Issue 12, files that run code: writing or editing .git/ or .envrc
// asks in default (even after "always allow" for the tool) and
// acceptEdits, runs in bypassPermissions; reading them does not ask.
func TestAttackFilesThatRunCode(t *testing.T) {
	cwd := t.TempDir()
	for _, p := range []string{".git/config", ".git/hooks/pre-commit", "sub/.git/config", ".envrc", "sub/.envrc", ".GIT/config", ".git"} {
		for mode, want := range map[string]Decision{ModeDefault: Ask, ModeAcceptEdits: Ask, ModeBypass: Allow, ModePlan: Refuse} {
			m := NewMemory()
			m.Remember(Call{Tool: "edit", Class: tools.ClassEdit, Paths: []string{"a.txt"}, Cwd: cwd}, true)
			if d, _ := m.Decide(mode, Call{Tool: "edit", Class: tools.ClassEdit, Paths: []string{p}, Cwd: cwd}); d != want {
				t.Errorf("edit %s in %s: got %v, want %v", p, mode, d, want)
			}
		}
		if d, _ := NewMemory().Decide(ModeDefault, Call{Tool: "read", Class: tools.ClassReadOnly, Paths: []string{p}, Cwd: cwd}); d != Allow {
			t.Errorf("read %s: got %v, want Allow", p, d)
		}
	}
	// "Always allow" on the prompt covers that file for that tool only.
	m := NewMemory()
	c := Call{Tool: "edit", Class: tools.ClassEdit, Paths: []string{".git/config"}, Cwd: cwd}
	if r := m.Remember(c, true); r.Whole || len(r.Paths) != 1 || r.Paths[0] != filepath.Join(Resolve(cwd, cwd), ".git/config") {
		t.Errorf("remembered %+v, want the one path", r)
	}
	if d, _ := m.Decide(ModeAcceptEdits, c); d != Allow {
		t.Errorf("remembered .git/config: got %v", d)
	}
	if d, _ := m.Decide(ModeAcceptEdits, Call{Tool: "edit", Class: tools.ClassEdit, Paths: []string{".git/hooks/post-checkout"}, Cwd: cwd}); d != Ask {
		t.Errorf("another .git file after one was remembered: got %v, want Ask", d)
	}
	// Commands naming them, in a redirection or an argument, ask too.
	for _, cmd := range []string{"echo x >> .git/config", "cp evil .git/hooks/pre-commit", "echo 'use flake' > .envrc", "cp x sub/.envrc"} {
		if d := decideIn(t, cwd, ModeDefault, []string{"echo", "cp x y"}, cmd, ""); d != Ask {
			t.Errorf("%q: got %v, want Ask", cmd, d)
		}
		if d := decideIn(t, cwd, ModeBypass, nil, cmd, ""); d != Allow {
			t.Errorf("%q in bypass: got %v, want Allow", cmd, d)
		}
	}
	if d := decideIn(t, cwd, ModeDefault, []string{"ls"}, "ls", ".git/hooks"); d != Ask {
		t.Errorf("workdir .git/hooks: got %v, want Ask", d)
	}
}

// Issue 12, one resolution: `..` after a symlink is resolved the way the
// kernel does, for judged paths and workdirs alike.
func TestAttackSymlinkThenDotDot(t *testing.T) {
	root := t.TempDir()
	cwd := filepath.Join(root, "proj")
	if err := os.MkdirAll(filepath.Join(cwd, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a/b", filepath.Join(cwd, "deep")); err != nil {
		t.Fatal(err)
	}
	// deep/../../X is cwd/X to the kernel (a/b/../..), not root/X.
	if got, want := Resolve(cwd, "deep/../../X"), filepath.Join(cwd, "X"); got != want {
		t.Errorf("Resolve(deep/../../X) = %s, want %s", got, want)
	}
	// deep/../../../X is root/X: outside, asked in every mode.
	for _, mode := range []string{ModeDefault, ModeAcceptEdits, ModeBypass, ModePlan} {
		if d, _ := NewMemory().Decide(mode, Call{Tool: "read", Class: tools.ClassReadOnly, Paths: []string{"deep/../../../X"}, Cwd: cwd}); d != Ask {
			t.Errorf("read deep/../../../X in %s: got %v, want Ask", mode, d)
		}
	}
	if d := decideIn(t, cwd, ModeBypass, nil, "ls", "deep/../../.."); d != Ask {
		t.Errorf("workdir deep/../../.. in bypass: got %v, want Ask", d)
	}
	// A loop never resolves: asked.
	if err := os.Symlink("loop", filepath.Join(cwd, "loop")); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolvePath(cwd, "loop/x"); err == nil {
		t.Error("a symlink loop resolved")
	}
	if d, _ := NewMemory().Decide(ModeDefault, Call{Tool: "read", Class: tools.ClassReadOnly, Paths: []string{"loop/../x"}, Cwd: cwd}); d != Ask {
		t.Errorf("read through a loop: got %v, want Ask", d)
	}
}

// Programs a remembered prefix may start with that an option (or, for
// sed, its script) makes run a command: "Always allow `sed`", given for
// a plain substitution, covered a script that runs one.
func TestAttackOtherProgramsRunCode(t *testing.T) {
	allowed := []string{"sed -i s/a/b/ f", "tar xf a.tar", "sort f", "rg foo", "fd foo", "rsync -a a b", "scp a b", "zip -r a.zip .", "man ls", "ssh host ls"}
	for _, cmd := range []string{
		"sed -i 's/x/id/e' f", "sed -n '1e touch pwned' f", "sed 'w ../out' f",
		"tar xf a.tar --to-command=sh", "tar xf a.tar --to-comm=sh", "tar cf x.tar --checkpoint-action=exec=sh .",
		"tar -I sh -xf a.tar", "tar -xf a.tar --use-compress-program sh", "tar -F sh -cf x.tar .",
		"tar xIf sh a.tar", "tar cFf sh x.tar .",
		"sort --compress-program=sh f", "sort --compress-prog=sh f",
		"rg --pre sh foo", "rg --pre=sh foo",
		"fd foo -x sh", "fd foo --exec sh", "fd foo -X sh",
		"rsync -e sh a b", "rsync --rsh=sh a b", "rsync --rsync-path=sh a host:b",
		"scp -S sh a b", "scp -o ProxyCommand=sh a host:b",
		"zip -T -TT sh a.zip f", "zip --unzip-command=sh -T a.zip f",
		"man -P sh ls", "man --pager=sh ls",
		"ssh host 'touch pwned'", "ssh -o ProxyCommand=sh x",
	} {
		if d := attackDecide(t, allowed, cmd); d != Ask {
			t.Errorf("%q: got %v, want Ask", cmd, d)
		}
	}
	// What stays covered.
	for _, cmd := range []string{"tar xf b.tar", "tar -tzf a.tgz", "sort -u f", "rg -n bar", "fd -e go", "rsync -av a b", "zip -q a.zip f", "man git"} {
		if d := attackDecide(t, allowed, cmd); d != Allow {
			t.Errorf("%q: got %v, want Allow", cmd, d)
		}
	}
}

// git subcommands that run a program an option names, and git config,
// which writes the configuration (core.fsmonitor, core.pager, aliases)
// that names the programs every later git runs, the user's own outside
// the sandbox included: "Always allow `git config`", given for
// `git config user.name x`, covered `git config core.fsmonitor CMD`.
func TestAttackGitSubcommandsRunCode(t *testing.T) {
	allowed := []string{"git grep foo", "git send-email x", "git filter-branch --prune-empty", "git config user.name x"}
	for _, cmd := range []string{
		"git grep -Osh foo", "git grep -O foo", "git grep --open-files-in-pager=sh foo", "git grep --open-files=sh foo",
		"git send-email --sendmail-cmd=sh x",
		"git filter-branch --tree-filter sh", "git filter-branch --msg-filter=sh", "git filter-branch --env-filter sh",
		"git filter-branch --index-filter sh", "git filter-branch --commit-filter sh", "git filter-branch --parent-filter sh",
		"git filter-branch --tag-name-filter sh",
		"git config core.fsmonitor 'touch pwned'", "git config user.name y",
	} {
		if d := attackDecide(t, allowed, cmd); d != Ask {
			t.Errorf("%q: got %v, want Ask", cmd, d)
		}
	}
	for _, cmd := range []string{"git grep -n bar", "git send-email --dry-run x"} {
		if d := attackDecide(t, allowed, cmd); d != Allow {
			t.Errorf("%q: got %v, want Allow", cmd, d)
		}
	}
}
