package agentcmd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/internal/unpriv"
	"github.com/dsh-acp/dsh-acp/sandbox"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// filterRepo makes a git repository in a fresh folder with a.txt
// committed, then what a sandboxed command could write inside it: a
// filter driver (clean and smudge, and a process one) for *.txt that
// runs a shell writing the environment to a file in outside, and a
// changed a.txt, so that git status and git diff must clean it.
func filterRepo(t *testing.T) (dir, outside string) {
	t.Helper()
	dir, outside = t.TempDir(), t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644)
	git("add", "a.txt")
	git("commit", "-q", "-m", "first")
	leak := "env > " + filepath.Join(outside, "leak-$$")
	git("config", "filter.x.clean", "sh -c '"+leak+"; cat'")
	git("config", "filter.x.smudge", "sh -c '"+leak+"; cat'")
	git("config", "filter.y.z.process", "sh -c '"+leak+"'")
	os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("a.txt filter=x\n*.md filter=y.z\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("two\n"), 0o644)
	return dir, outside
}

// TestGitFilterAttack: a filter driver in the repository's own
// configuration runs when a plain git status reads the changed file
// (the control), and not when the agent's git runs git status and git
// diff: the output still shows the change, and nothing was written
// outside the project.
//
// It runs with the sandbox on and off: off, only the neutralized filters
// keep the file outside from being written.
func TestGitFilterAttack(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("DSH_API_KEY", "sk-agent-secret")
	dir, outside := filterRepo(t)
	for _, mode := range []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.Off} {
		r := Runner{Sandbox: sandbox.Config{Mode: mode}}
		var out, errb bytes.Buffer
		for _, args := range [][]string{{"status"}, {"diff", "--no-ext-diff", "--no-textconv"}, {"diff", "--cached"}} {
			if err := r.Git(ctxT(t), dir, args, &out, &errb); err != nil {
				t.Fatalf("%s: git %v: %v\n%s", mode, args, err, errb.String())
			}
		}
		if !strings.Contains(out.String(), "modified:   a.txt") || !strings.Contains(out.String(), "-one\n+two") {
			t.Errorf("%s: the agent's git output:\n%s\nstderr:\n%s", mode, out.String(), errb.String())
		}
		if leaks, _ := filepath.Glob(filepath.Join(outside, "leak-*")); len(leaks) != 0 {
			t.Fatalf("%s: a filter ran under the agent's git: %v", mode, leaks)
		}
	}
	// The control: the same repository's filter runs under plain git.
	cmd := exec.Command("git", "diff")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("plain git diff: %v\n%s", err, b)
	}
	leaks, _ := filepath.Glob(filepath.Join(outside, "leak-*"))
	if len(leaks) == 0 {
		t.Fatal("the control did not run the filter: the test proves nothing")
	}
	if b, _ := os.ReadFile(leaks[0]); !strings.Contains(string(b), "sk-agent-secret") {
		t.Errorf("the control's filter saw no key (environment %q)", b)
	}
}

// TestEnv: the agent's commands get no secret-named variable and no
// GIT_* variable but the user's identity and global configuration; a
// private TMPDIR; the forced settings.
func TestEnv(t *testing.T) {
	t.Setenv("DSH_API_KEY", "sk-1")
	t.Setenv("MY_SECRET_THING", "s")
	t.Setenv("GH_TOKEN", "t")
	t.Setenv("GIT_DIR", "/elsewhere")
	t.Setenv("GIT_EXTERNAL_DIFF", "evil")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("PLAIN", "kept")
	var out bytes.Buffer
	if err := (Runner{}).Run(ctxT(t), Call{Path: "env", Dir: t.TempDir(), Stdout: &out, Env: []string{"EXTRA=1"}}); err != nil {
		t.Fatal(err)
	}
	env := "\n" + out.String()
	for _, gone := range []string{"sk-1", "MY_SECRET_THING=", "GH_TOKEN=", "GIT_DIR=", "GIT_EXTERNAL_DIFF="} {
		if strings.Contains(env, gone) {
			t.Errorf("the environment holds %q:\n%s", gone, env)
		}
	}
	for _, kept := range []string{"\nPLAIN=kept\n", "\nGIT_CONFIG_GLOBAL=/dev/null\n", "\nEXTRA=1\n", "\nGIT_CONFIG_NOSYSTEM=1\n", "\nTMPDIR=" + os.TempDir()} {
		if !strings.Contains(env, kept) {
			t.Errorf("the environment lacks %q:\n%s", kept, env)
		}
	}
}

// TestReadOnly: where the sandbox confines, a command of the agent's
// cannot write the project unless the call names it writable; run as
// an unprivileged user too (as root file modes would not bind, and the
// sandbox's namespaces are set up differently).
func TestReadOnly(t *testing.T) {
	if sandbox.Probe().LandlockABI == 0 {
		t.Skip("no Landlock here: " + sandbox.Probe().LandlockReason)
	}
	check := func(t *testing.T) {
		dir := t.TempDir()
		write := Call{Path: "sh", Args: []string{"-c", "echo x > f"}, Dir: dir}
		if err := (Runner{}).Run(ctxT(t), write); ExitCode(err) <= 0 {
			t.Errorf("a read-only call wrote the project: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "f")); err == nil {
			t.Error("f was written")
		}
		write.Writable = []string{dir}
		if err := (Runner{}).Run(ctxT(t), write); err != nil {
			t.Errorf("a call with the project writable: %v", err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != "x\n" {
			t.Errorf("f = %q", b)
		}
	}
	if unpriv.InChild(t) {
		check(t)
		return
	}
	check(t)
	unpriv.Run(t)
}

// TestCancel: the end of the context kills the command and is the error.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := (Runner{}).Run(ctx, Call{Path: "sh", Args: []string{"-c", "sleep 60 & sleep 60"}, Dir: t.TempDir()})
	if err != context.DeadlineExceeded {
		t.Errorf("err = %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %s", d)
	}
}

// TestMissingProgram: a missing program is exec.ErrNotFound.
func TestMissingProgram(t *testing.T) {
	err := (Runner{}).Run(ctxT(t), Call{Path: "no-such-program-dsh", Dir: t.TempDir()})
	if !strings.Contains(err.Error(), exec.ErrNotFound.Error()) {
		t.Errorf("err = %v", err)
	}
}

// TestGitFilterNameWithEquals: a filter driver whose name holds "=" (a
// -c option splits at the first "=", so "-c filter.a=b.clean=" sets
// another key) is not run by the agent's git: the call fails instead.
func TestGitFilterNameWithEquals(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	dir, outside := filterRepo(t)
	leak := "sh -c 'env > " + filepath.Join(outside, "leak-$$") + "; cat'"
	for _, args := range [][]string{{"config", "filter.a=b.clean", leak}, {"config", "filter.a=b.smudge", leak}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("a.txt filter=a=b\n"), 0o644)
	for _, mode := range []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.Off} {
		r := Runner{Sandbox: sandbox.Config{Mode: mode}}
		var out, errb bytes.Buffer
		err := r.Git(ctxT(t), dir, []string{"status"}, &out, &errb)
		if leaks, _ := filepath.Glob(filepath.Join(outside, "leak-*")); len(leaks) != 0 {
			t.Fatalf("%s: the filter a=b ran under the agent's git: %v", mode, leaks)
		}
		if err == nil || !strings.Contains(err.Error(), `"a=b"`) {
			t.Errorf("%s: git status: %v", mode, err)
		}
	}
}

// subRepo makes a repository in a fresh folder with a submodule "sub"
// whose own configuration (as a sandboxed command could write it)
// defines a filter driver for its a.txt, changed since, that writes a
// file in outside; it returns the superproject's folder.
func subRepo(t *testing.T) (dir, outside string) {
	t.Helper()
	root, outside := t.TempDir(), t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "protocol.file.allow=always"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	sub, dir := filepath.Join(root, "sub"), filepath.Join(root, "top")
	git(root, "init", "-q", "sub")
	os.WriteFile(filepath.Join(sub, "a.txt"), []byte("one\n"), 0o644)
	os.WriteFile(filepath.Join(sub, ".gitattributes"), []byte("a.txt filter=x\n"), 0o644)
	git(sub, "add", ".")
	git(sub, "commit", "-q", "-m", "s")
	git(root, "init", "-q", "top")
	git(dir, "submodule", "add", "-q", "../sub", "sub")
	git(dir, "commit", "-q", "-m", "t")
	git(filepath.Join(dir, "sub"), "config", "filter.x.clean", "sh -c 'touch "+filepath.Join(outside, "leak-$$")+"; cat'")
	os.WriteFile(filepath.Join(dir, "sub", "a.txt"), []byte("two\n"), 0o644)
	return dir, outside
}

// TestGitSubmoduleFilter: git status and git diff look into a changed
// submodule with a git of the submodule's own configuration, whose
// filter drivers the agent's git has not turned off: the agent's git
// does not look into submodules.
func TestGitSubmoduleFilter(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	dir, outside := subRepo(t)
	r := Runner{Sandbox: sandbox.Config{Mode: sandbox.Off}}
	for _, args := range [][]string{{"status"}, {"diff", "--no-ext-diff", "--no-textconv"}} {
		var out, errb bytes.Buffer
		if err := r.Git(ctxT(t), dir, args, &out, &errb); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, errb.String())
		}
		if leaks, _ := filepath.Glob(filepath.Join(outside, "leak-*")); len(leaks) != 0 {
			t.Fatalf("git %v: the submodule's filter ran under the agent's git: %v", args, leaks)
		}
	}
}
