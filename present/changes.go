package present

import (
	"strconv"
	"strings"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// The card of a turn's changes: one tool call of kind edit, titled
// "Changed N files (+A −D)", whose content is a list of the files
// (created, deleted and binary ones marked, files left out counted) and
// then each file's hunks against the checkpoint, with a location per
// file; pending, then completed at once, as every card. Its id is derived
// from the turn, so live and replay agree. An undo (/undo) is a card of
// the same shape: the permission request shows the change it would make,
// its card what it restored and skipped.

// ChangesCallID is the tool call id of turn's changes card.
func ChangesCallID(turn int) string { return "turn" + strconv.Itoa(turn) + "-changes" }

// UndoCallID is the tool call id of the card of the /undo run as turn.
func UndoCallID(turn int) string { return "turn" + strconv.Itoa(turn) + "-undo" }

// changesTitle is "Changed 1 file (+3 −1)", "Changed 4 files (+0 −0)".
func changesTitle(verb string, d session.TurnChanges) string {
	n := len(d.Files) + d.More
	noun := "files"
	if n == 1 {
		noun = "file"
	}
	return verb + " " + strconv.Itoa(n) + " " + noun + " (+" + strconv.Itoa(d.Added) + " −" + strconv.Itoa(d.Removed) + ")"
}

// changesParts is the content and locations of d's card.
func (r *paths) changesParts(d session.TurnChanges) ([]acp.ToolCallContent, []acp.ToolCallLocation) {
	var list strings.Builder
	var diffs []tools.FileDiff
	locs := make([]tools.FileLocation, 0, len(d.Files))
	for _, f := range d.Files {
		list.WriteString("- " + tools.MarkdownInline(r.shown(f.Path)) + " (" + fileSummary(f) + ")\n")
		diffs = append(diffs, f.Diffs...)
		locs = append(locs, tools.FileLocation{Path: f.Path, Line: f.Line})
	}
	if d.More > 0 {
		list.WriteString("- and " + strconv.Itoa(d.More) + " more not shown\n")
	}
	content := []acp.ToolCallContent{acp.TextContent(strings.TrimRight(list.String(), "\n"))}
	content = append(content, r.diffItems(new(card), diffs)...)
	return content, r.locations(new(card), locs)
}

// turnChanges is the changes card of d.
func (p *Presenter) turnChanges(d session.TurnChanges) []acp.Update {
	content, locs := p.changesParts(d)
	id := ChangesCallID(d.Turn)
	return []acp.Update{acp.ToolCall{ToolCallID: id, Title: changesTitle("Changed", d), Kind: acp.ToolKind(tools.KindEdit),
		Status: acp.StatusPending, Content: content, Locations: locs},
		acp.ToolCallUpdate{ToolCallID: id, Status: acp.StatusCompleted}}
}

// fileSummary is a file's line in the list: its status, its counts, and
// its note ("created, +3 −0", "binary, modified", "modified, +1 −1").
func fileSummary(f session.ChangedFile) string {
	parts := []string{f.Status}
	if f.Binary {
		parts = []string{"binary, " + f.Status}
	}
	if f.Added > 0 || f.Removed > 0 {
		parts = append(parts, "+"+strconv.Itoa(f.Added)+" −"+strconv.Itoa(f.Removed))
	}
	if f.Note != "" {
		parts = append(parts, f.Note)
	}
	return strings.Join(parts, ", ")
}

// UndoPermissionCard is the toolCall of the permission request of the
// /undo run as turn by in a session described by v: the change the undo
// would make (d, nil when it would change nothing) to put turn's files
// back, and the files it would leave as they are ("path: reason").
func UndoPermissionCard(v View, by, turn int, d *session.TurnChanges, skipped []string) acp.ToolCallUpdate {
	r := paths{view: v}
	title := "Undo turn " + strconv.Itoa(turn)
	var content []acp.ToolCallContent
	var locs []acp.ToolCallLocation
	if d != nil {
		title = changesTitle("Undo turn "+strconv.Itoa(turn)+": restore", *d)
		content, locs = r.changesParts(*d)
	}
	if len(skipped) > 0 {
		content = append(content, acp.TextContent(r.skippedList(skipped)))
	}
	return acp.ToolCallUpdate{ToolCallID: UndoCallID(by), Title: &title, Kind: acp.ToolKind(tools.KindEdit), Status: acp.StatusPending,
		Content: content, Locations: locs}
}

// skippedList is the lines of the files an undo leaves as they are.
func (r *paths) skippedList(skipped []string) string {
	var b strings.Builder
	for _, s := range skipped {
		path, why, _ := strings.Cut(s, ": ")
		b.WriteString("- left as it is: " + tools.MarkdownInline(r.shown(path)) + " (" + why + ")\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// turnUndone is the card of an /undo: what was restored and what was
// left as it was, with why, or its note when it undid nothing.
func (p *Presenter) turnUndone(d session.TurnUndone) []acp.Update {
	var lines []string
	for _, r := range d.Restored {
		lines = append(lines, "- restored "+tools.MarkdownInline(p.shown(r)))
	}
	if len(d.Skipped) > 0 {
		lines = append(lines, p.skippedList(d.Skipped))
	}
	if d.Note != "" {
		lines = append(lines, d.Note)
	}
	title := "Undid turn " + strconv.Itoa(d.Turn)
	status := acp.StatusCompleted
	if d.Turn == 0 {
		title, status = "Nothing undone", acp.StatusFailed
	}
	id := UndoCallID(d.By)
	return []acp.Update{acp.ToolCall{ToolCallID: id, Title: title, Kind: acp.ToolKind(tools.KindEdit),
		Status: acp.StatusPending, Content: []acp.ToolCallContent{acp.TextContent(strings.Join(lines, "\n"))}},
		acp.ToolCallUpdate{ToolCallID: id, Status: status}}
}
