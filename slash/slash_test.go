package slash

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/internal/agentcmd"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestParse: "/name rest" at a prompt's start, blanks before it allowed;
// anything else is not a command.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		in, name, args string
		ok             bool
	}{
		{"/review", "review", "", true},
		{"  /compact keep the API notes  ", "compact", "keep the API notes", true},
		{"/fix\tthe parser\nand more", "fix", "the parser\nand more", true},
		{"/git:log 3", "git:log", "3", true},
		{"/", "", "", false},
		{"/ review", "", "", false},
		{"please /review", "", "", false},
		{"/usr/bin/env is a path", "", "", false},
		{"/héllo", "", "", false},
		{"", "", "", false},
	} {
		name, args, ok := Parse(c.in)
		if name != c.name || args != c.args || ok != c.ok {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q, %q, %v", c.in, name, args, ok, c.name, c.args, c.ok)
		}
	}
}

// TestLoad: built-ins first, then the user's commands by name; the
// project's file wins over the user's of the same name; a file named
// like a built-in, a bad name, an empty body or a file that is not
// UTF-8 is left out with a reason; descriptions come from the front
// matter, else the body's first line; $ARGUMENTS gives an input hint.
func TestLoad(t *testing.T) {
	project, user := t.TempDir(), t.TempDir()
	write(t, filepath.Join(project, "deploy.md"), "---\nname: ignored\ndescription: 'Deploy to staging'\n---\nDeploy $ARGUMENTS to staging.\n")
	write(t, filepath.Join(user, "deploy.md"), "The user's deploy.\n")
	write(t, filepath.Join(user, "standup.md"), "\n\n## Write my standup\nFrom the git log of today.\n")
	write(t, filepath.Join(user, "init.md"), "Not the built-in.\n")
	write(t, filepath.Join(user, "bad name.md"), "x\n")
	write(t, filepath.Join(user, "empty.md"), "---\ndescription: nothing\n---\n\n")
	write(t, filepath.Join(user, "binary.md"), "\xff\xfe")
	write(t, filepath.Join(user, "notes.txt"), "not a command\n")
	write(t, filepath.Join(user, "sub", "nested.md"), "not read\n")
	write(t, filepath.Join(user, "long.md"), strings.Repeat("word ", 60)+"\n")
	set, problems := Load(Dirs{Project: project, User: user})
	var names []string
	for _, c := range set.Commands() {
		names = append(names, c.Name)
	}
	if !reflect.DeepEqual(names, []string{"compact", "init", "review", "undo", "deploy", "long", "standup"}) {
		t.Errorf("commands %q", names)
	}
	d, _ := set.Lookup("deploy")
	if d.Description != "Deploy to staging" || d.Hint != "arguments" || d.Body != "Deploy $ARGUMENTS to staging.\n" || d.Path != filepath.Join(project, "deploy.md") || d.Builtin {
		t.Errorf("deploy %+v", d)
	}
	s, _ := set.Lookup("standup")
	if s.Description != "Write my standup" || s.Hint != "" || !strings.Contains(s.Expand(""), "## Write my standup") {
		t.Errorf("standup %+v", s)
	}
	l, _ := set.Lookup("long")
	if n := len([]rune(l.Description)); n != maxDescriptionRunes || !strings.HasSuffix(l.Description, "…") {
		t.Errorf("long description %d runes: %q", n, l.Description)
	}
	if in, _ := set.Lookup("init"); !in.Builtin {
		t.Error("the user's init.md replaced the built-in")
	}
	joined := strings.Join(problems, "\n")
	for _, want := range []string{"init.md left out: /init is a built-in command", "bad name.md left out", "empty.md left out: it has no prompt", "binary.md left out: it is not UTF-8"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems lack %q:\n%s", want, joined)
		}
	}
	if len(problems) != 4 {
		t.Errorf("%d problems, want 4:\n%s", len(problems), joined)
	}
	// Missing folders are no problem.
	if set, problems := Load(Dirs{Project: filepath.Join(project, "none"), User: ""}); len(set.Commands()) != 4 || len(problems) != 0 {
		t.Errorf("missing folders: %d commands, problems %q", len(set.Commands()), problems)
	}
}

// TestExpand: $ARGUMENTS is replaced everywhere; without it, the typed
// text follows the body on a paragraph of its own.
func TestExpand(t *testing.T) {
	c := Command{Body: "Fix $ARGUMENTS; test $ARGUMENTS.\n"}
	if got := c.Expand("the parser"); got != "Fix the parser; test the parser.\n" {
		t.Errorf("with placeholder: %q", got)
	}
	if got := c.Expand(""); got != "Fix ; test .\n" {
		t.Errorf("empty args: %q", got)
	}
	plain := Command{Body: "Write the changelog.\n"}
	if got := plain.Expand("for 1.2"); got != "Write the changelog.\n\nfor 1.2" {
		t.Errorf("without placeholder: %q", got)
	}
	if got := plain.Expand(""); got != "Write the changelog.\n" {
		t.Errorf("without placeholder or args: %q", got)
	}
}

// TestFrontMatter: only a first line "---" with a closing "---" is front
// matter; CRLF files and a BOM are read too.
func TestFrontMatter(t *testing.T) {
	for _, c := range []struct{ in, desc, body string }{
		{"---\ndescription: D\n---\nBody\n", "D", "Body\n"},
		{"\ufeff---\r\ndescription: \"Q\"\r\n---\r\nBody\r\n", "Q", "Body\n"},
		{"---\ndescription: never closed\nBody\n", "", "---\ndescription: never closed\nBody\n"},
		{"Body only\n---\n", "", "Body only\n---\n"},
		{"---\n---\nJust body", "", "Just body"},
	} {
		desc, body := parseFile(c.in)
		if desc != c.desc || body != c.body {
			t.Errorf("parseFile(%q) = %q, %q; want %q, %q", c.in, desc, body, c.desc, c.body)
		}
	}
}

// TestFingerprint: it changes when a command file is added, edited or
// removed, and not otherwise.
func TestFingerprint(t *testing.T) {
	dir := t.TempDir()
	d := Dirs{Project: dir}
	a := Fingerprint(d)
	if Fingerprint(d) != a {
		t.Fatal("unstable fingerprint")
	}
	write(t, filepath.Join(dir, "x.md"), "one\n")
	b := Fingerprint(d)
	if b == a {
		t.Error("adding a file kept the fingerprint")
	}
	write(t, filepath.Join(dir, "other.txt"), "x")
	if Fingerprint(d) != b {
		t.Error("a file that is no command changed the fingerprint")
	}
	write(t, filepath.Join(dir, "x.md"), "one, edited\n")
	c := Fingerprint(d)
	if c == b {
		t.Error("editing a file kept the fingerprint")
	}
	os.Remove(filepath.Join(dir, "x.md"))
	if Fingerprint(d) == c {
		t.Error("removing a file kept the fingerprint")
	}
}

// TestReviewPrompt: in a git repository the prompt holds the three
// commands and their output; outside one it says each failed; the
// repository's own configuration cannot make git run a program
// (core.fsmonitor, diff.external, a textconv filter).
func TestReviewPrompt(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("LC_ALL", "C")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	write(t, filepath.Join(dir, "a.txt"), "one\n")
	run("add", "a.txt")
	run("commit", "-q", "-m", "first")
	write(t, filepath.Join(dir, "a.txt"), "two ```\n")
	marker := filepath.Join(dir, "ran-a-program")
	run("config", "core.fsmonitor", "touch "+marker)
	run("config", "diff.external", "touch "+marker)
	write(t, filepath.Join(dir, ".gitattributes"), "*.txt diff=conv\n")
	run("config", "diff.conv.textconv", "touch "+marker+";cat")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := ReviewPrompt(ctx, agentcmd.Runner{}.Git, dir, "the text")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"$ git status\n", "modified:   a.txt", "-one\n+two ```", "````diff\n", "$ git diff --cached --no-ext-diff --no-textconv\n(no output)\n", "The user asks you to look at: the text"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the repository's configuration ran a program during the review")
	}
	out, err := ReviewPrompt(ctx, agentcmd.Runner{}.Git, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "(failed: exit status") != 3 || !strings.Contains(out, "not a git repository") {
		t.Errorf("outside a repository:\n%s", out)
	}
}

// TestCutLines: output over the limit is cut on a line boundary and
// says so.
func TestCutLines(t *testing.T) {
	b, cut := cutLines([]byte("aaaa\nbbbb\ncccc\n"), 12)
	if string(b) != "aaaa\nbbbb\n" || !cut {
		t.Errorf("cutLines = %q, %v", b, cut)
	}
	b, cut = cutLines([]byte("short\n"), 12)
	if string(b) != "short\n" || cut {
		t.Errorf("cutLines short = %q, %v", b, cut)
	}
	var lb limitedBuffer
	lb.limit = 4
	n, err := lb.Write([]byte("abcdef"))
	if n != 6 || err != nil || lb.buf.String() != "abcd" || !lb.cut {
		t.Errorf("limitedBuffer: %d %v %q %v", n, err, lb.buf.String(), lb.cut)
	}
}
