package present

import (
	"strconv"
	"strings"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// The card of a turn's changes: one completed tool call of kind edit,
// titled "Changed N files (+A −D)", whose content is a list of the files
// (created, deleted and binary ones marked, files left out counted) and
// then each file's hunks against the checkpoint, with a location per
// file. Its id is derived from the turn, so live and replay agree.

// ChangesCallID is the tool call id of turn's changes card.
func ChangesCallID(turn int) string { return "turn" + strconv.Itoa(turn) + "-changes" }

// changesTitle is "Changed 1 file (+3 −1)", "Changed 4 files (+0 −0)".
func changesTitle(d session.TurnChanges) string {
	n := len(d.Files) + d.More
	noun := "files"
	if n == 1 {
		noun = "file"
	}
	return "Changed " + strconv.Itoa(n) + " " + noun + " (+" + strconv.Itoa(d.Added) + " −" + strconv.Itoa(d.Removed) + ")"
}

// turnChanges is the changes card of d.
func (p *Presenter) turnChanges(d session.TurnChanges) []acp.Update {
	var list strings.Builder
	var diffs []tools.FileDiff
	locs := make([]tools.FileLocation, 0, len(d.Files))
	for _, f := range d.Files {
		list.WriteString("- " + tools.MarkdownInline(p.shown(f.Path)) + " (" + fileSummary(f) + ")\n")
		diffs = append(diffs, f.Diffs...)
		locs = append(locs, tools.FileLocation{Path: f.Path, Line: f.Line})
	}
	if d.More > 0 {
		list.WriteString("- and " + strconv.Itoa(d.More) + " more not shown\n")
	}
	w := new(card)
	content := []acp.ToolCallContent{acp.TextContent(strings.TrimRight(list.String(), "\n"))}
	content = append(content, p.diffItems(w, diffs)...)
	// Pending first, as every card starts, then completed at once.
	id := ChangesCallID(d.Turn)
	return []acp.Update{acp.ToolCall{ToolCallID: id, Title: changesTitle(d), Kind: acp.ToolKind(tools.KindEdit),
		Status: acp.StatusPending, Content: content, Locations: p.locations(new(card), locs)},
		acp.ToolCallUpdate{ToolCallID: id, Status: acp.StatusCompleted}}
}

// fileSummary is a file's line in the list: its status, its counts, and
// its note ("created, +3", "binary, modified", "modified, +1 −1").
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

// turnUndone is the card of an undone turn (/undo): what was restored and
// what was skipped, with why.
func (p *Presenter) turnUndone(d session.TurnUndone) []acp.Update {
	var b strings.Builder
	for _, r := range d.Restored {
		b.WriteString("- restored " + tools.MarkdownInline(p.shown(r)) + "\n")
	}
	for _, s := range d.Skipped {
		path, why, _ := strings.Cut(s, ": ")
		b.WriteString("- skipped " + tools.MarkdownInline(p.shown(path)) + ": " + why + "\n")
	}
	title := "Undid turn " + strconv.Itoa(d.Turn)
	status := acp.StatusCompleted
	if len(d.Restored) == 0 && len(d.Skipped) > 0 {
		status = acp.StatusFailed
	}
	id := "turn" + strconv.Itoa(d.Turn) + "-undo"
	return []acp.Update{acp.ToolCall{ToolCallID: id, Title: title, Kind: acp.ToolKind(tools.KindEdit),
		Status: acp.StatusPending, Content: []acp.ToolCallContent{acp.TextContent(strings.TrimRight(b.String(), "\n"))}},
		acp.ToolCallUpdate{ToolCallID: id, Status: status}}
}
