package present

import (
	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// callParts is what a call card shows, from the tool's call view.
type callParts struct {
	title     string
	kind      acp.ToolKind
	content   []acp.ToolCallContent
	locations []acp.ToolCallLocation
	// path is the first path the card names (its first location, else
	// its first diff): a result title without paths of its own is
	// relativized with it.
	path string
	// terminal: the card is a live terminal (terminal.go), with head,
	// its content items other than the terminal (the description, the
	// command when the title does not hold it), and its working
	// directory as the tool gave it.
	terminal bool
	head     []acp.ToolCallContent
	cwd      string
}

// callCard maps a call view to its card parts (stored in w when they
// fit): the one switch over the call views. A nil view, or one the
// presenter does not know, is the fallback card: the tool's name.
func (r *paths) callCard(w *card, tool tools.Tool, callID, name string, view tools.ToolCallView) callParts {
	switch v := view.(type) {
	case tools.GenericCall:
		kind := v.Kind
		if kind == "" {
			kind = tools.KindOther
		}
		path := firstLocPath(v.Locations)
		return callParts{title: r.title(acp.ToolKind(kind), v.Title, path), kind: acp.ToolKind(kind), content: contentItems(v.Content),
			locations: r.locations(w, v.Locations), path: path}
	case tools.DiffCall:
		path, diffPath := firstLocPath(v.Locations), firstDiffPath(v.Diffs)
		parts := callParts{title: r.title(acp.ToolKind(tools.KindEdit), v.Title, path, diffPath), kind: acp.ToolKind(tools.KindEdit),
			content: r.diffItems(w, v.Diffs), locations: r.locations(w, v.Locations), path: path}
		if parts.path == "" {
			parts.path = diffPath
		}
		return parts
	case tools.TerminalCall:
		return r.terminalCall(tool, callID, v)
	}
	return callParts{title: nameTitle(name), kind: acp.ToolKind(tools.KindOther)}
}
