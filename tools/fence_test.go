package tools

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCommandTitle(t *testing.T) {
	long := strings.Repeat("é", 250)
	cases := []struct {
		cmd, title string
		whole      bool
	}{
		{"ls -la", "ls -la", true},
		{"  ls\n", "ls", true},
		{"git status\nrm -f x.txt", "git status…", false},
		{"\n\ngit status  \r\nrm x", "git status…", false},
		{long, strings.Repeat("é", CommandTitleRunes-1) + "…", false},
		{strings.Repeat("a", CommandTitleRunes), strings.Repeat("a", CommandTitleRunes), true},
	}
	for _, c := range cases {
		title, whole := CommandTitle(c.cmd)
		if title != c.title || whole != c.whole {
			t.Errorf("CommandTitle(%.30q) = (%.40q, %v), want (%.40q, %v)", c.cmd, title, whole, c.title, c.whole)
		}
		if n := utf8.RuneCountInString(title); n > CommandTitleRunes || strings.ContainsAny(title, "\r\n") {
			t.Errorf("title of %d runes or with a line break: %.40q", n, title)
		}
	}
}

func TestCodeFence(t *testing.T) {
	if got := ShellFence("git status\nrm -f x.txt\n"); got != "```sh\ngit status\nrm -f x.txt\n```" {
		t.Errorf("ShellFence = %q", got)
	}
	if got := CodeFence("sh", "echo ```` done"); got != "`````sh\necho ```` done\n`````" {
		t.Errorf("fence not longer than the backtick run: %q", got)
	}
}
