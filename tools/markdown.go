package tools

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// MarkdownInline returns s ready to be placed inside a line of Markdown
// (a card title, not at the start of a line) so that it renders as
// exactly s. Plain text — letters, digits, spaces and the punctuation
// `/ . , : ; - + = @ % ' " ?` plus any non-ASCII character that is not a
// control character — comes back unchanged ('?' means something only
// inside an autolink, which needs '<'; a question stays plain text).
// Anything else (a character Markdown gives a meaning: ` \ * _ [ ] ( )
// < > # ! ~ | & $ ^ { }, a control character, leading or trailing
// spaces) makes it a code span:
// the text between backtick runs longer than any run inside it, padded
// with a space where it starts or ends with a backtick or a space
// (CommonMark strips one such space on each side). Line breaks, tabs and
// other control characters are shown as Go escapes (\n, \t, \x01) inside
// the span, so the result is always one line. An empty s gives "“" with
// a space inside (an empty code span).
func MarkdownInline(s string) string {
	if plainInline(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == utf8.RuneError {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	body := b.String()
	longest, run := 0, 0
	for i := 0; i < len(body); i++ {
		if body[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if body == "" {
		return fence + " " + fence
	}
	if body[0] == '`' || body[0] == ' ' || body[len(body)-1] == '`' || body[len(body)-1] == ' ' {
		body = " " + body + " "
	}
	return fence + body + fence
}

// plainInline reports whether s renders as itself inside a Markdown line.
func plainInline(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune(" /.,:;-+=@%'\"?", r):
		case r >= 0xa0 && r != utf8.RuneError:
		default:
			return false
		}
	}
	return true
}
