package permission

import (
	"fmt"
	"strings"
	"unicode"
)

// hiddenChars lists, as "U+XXXX", the characters of s that a card shows
// as nothing or that reorder the text around them: Unicode format
// characters (bidi controls and isolates, zero-width ones, the byte
// order mark) and control characters other than tab and newline. Each
// is named once, in order of first appearance; none gives "".
func hiddenChars(s string) string {
	var names []string
	seen := map[rune]bool{}
	for _, r := range s {
		if r == '\t' || r == '\n' || seen[r] {
			continue
		}
		if unicode.Is(unicode.Cf, r) || unicode.IsControl(r) {
			seen[r] = true
			names = append(names, fmt.Sprintf("U+%04X", r))
		}
	}
	return strings.Join(names, ", ")
}

// hiddenNotes are the notes of c's command and paths that hold hidden
// characters (hiddenChars): the card would read as something other
// than what runs or is written.
func hiddenNotes(c Call) []Note {
	var out []Note
	if h := hiddenChars(c.Command); h != "" {
		out = append(out, Note{Text: "The command holds characters that do not show or that reorder the text around them (" + h + "): what runs may differ from what this card reads."})
	}
	for _, p := range c.Paths {
		if h := hiddenChars(p); h != "" {
			out = append(out, Note{Text: fmt.Sprintf("The path %q holds characters that do not show or that reorder the text around them (%s).", p, h)})
		}
	}
	return out
}
