package tools

import (
	"strings"
	"unicode/utf8"
)

// CodeFence wraps s, without its trailing newlines, in a Markdown fenced
// code block with the info string info ("console", "sh"), whose fence of
// backticks is longer than any run of backticks in s (at least three), so
// the text can never close the block early.
func CodeFence(info, s string) string {
	s = strings.TrimRight(s, "\n")
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + info + "\n" + s + "\n" + f
}

// ShellFence is a command shown whole in a card's content: CodeFence with
// the info string "sh".
func ShellFence(command string) string { return CodeFence("sh", command) }

// CommandTitleRunes is the longest one-line title of a shell command, in
// runes (Unicode code points), the closing "…" included.
const CommandTitleRunes = 200

// CommandTitle returns a shell command as a one-line card title: its first
// line that is not blank, without the blanks around it, cut to at most
// CommandTitleRunes runes. A title that leaves something out (the rest of
// a long line, or further lines) ends with "…". whole reports whether the
// title holds the whole command (apart from blanks around it); when it does
// not, a card shows the command whole elsewhere (ShellFence).
func CommandTitle(command string) (title string, whole bool) {
	trimmed := strings.TrimSpace(command)
	line := trimmed
	if i := strings.IndexAny(line, "\r\n"); i >= 0 {
		line = strings.TrimRight(line[:i], " \t")
	}
	if utf8.RuneCountInString(line) > CommandTitleRunes {
		n, i := 0, 0
		for i = range line {
			if n == CommandTitleRunes-1 {
				break
			}
			n++
		}
		return strings.TrimRight(line[:i], " \t") + "…", false
	}
	if line != trimmed {
		return line + "…", false
	}
	return line, true
}
