package tools

import (
	"strings"
	"unicode/utf8"
)

// Progress is a partial update from a running tool. Output is a chunk of live
// terminal output, the program's own bytes (valid UTF-8; a tool splits its
// byte stream on rune boundaries). Note is one line (no newline) the tool
// adds about that output, which the program did not print, e.g. that part
// of it was left out: a live terminal shows it on a line of its own after
// the output so far, and the card's text content repeats it. Plan, when
// non-nil, is a snapshot of the whole todo list. Progress is shown live and
// is not logged; only the final Result is.
type Progress struct {
	Output string
	Note   string
	Plan   []PlanEntry
	// Card, when set, is the whole text of a card that is not a
	// terminal so far (a subagent's calls, one line each): it replaces
	// the card's content.
	Card string
}

// PlanEntry is one todo item. Status is "pending", "in_progress" or
// "completed".
type PlanEntry struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// Report sends p to ex.Progress when it is set and does nothing otherwise.
// Invalid UTF-8 in p.Output and p.Note is replaced by U+FFFD as a safety
// net. The sink must not block for long; a tool calls Report from its own
// goroutine.
func (ex *Exec) Report(p Progress) {
	if ex == nil || ex.Progress == nil {
		return
	}
	if !utf8.ValidString(p.Output) {
		p.Output = strings.ToValidUTF8(p.Output, "\uFFFD")
	}
	if !utf8.ValidString(p.Note) {
		p.Note = strings.ToValidUTF8(p.Note, "\uFFFD")
	}
	ex.Progress(p)
}
