package present

import (
	"encoding/json"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// resultParts is what a result card shows, from the tool's result view.
// Empty content means the tool's own text (toolResult's fallback).
type resultParts struct {
	title     *string
	content   []acp.ToolCallContent
	locations []acp.ToolCallLocation
	// rawOutput replaces the result's text as the card's rawOutput when
	// set (GenericResult.RawOutput: an MCP CallToolResult).
	rawOutput json.RawMessage
	// terminal is a terminal result's view (terminal.go uses it for
	// calls shown as terminals; other calls show the tool's text).
	terminal *tools.TerminalResult
}

// resultCard maps a result view of call c to its card parts (stored in w
// when they fit): the one switch over the result views. A nil view is
// the fallback card: the tool's own text. A title without paths of its
// own is relativized with the call card's path.
func (r *paths) resultCard(w *card, c *callState, view tools.ToolResultView) resultParts {
	var parts resultParts
	title := func(t string, locs []tools.FileLocation, diffPath string) {
		if t == "" {
			return
		}
		w.title = r.title(c.kind, t, firstLocPath(locs), diffPath, c.path)
		parts.title = &w.title
	}
	switch v := view.(type) {
	case tools.GenericResult:
		parts.content = contentItems(v.Content)
		title(v.Title, v.Locations, "")
		parts.locations = r.locations(w, v.Locations)
		if len(v.RawOutput) > 0 && json.Valid(v.RawOutput) {
			parts.rawOutput = v.RawOutput
		}
	case tools.DiffResult:
		parts.content = r.diffItems(w, v.Diffs)
		if v.Note != "" {
			parts.content = append(parts.content, acp.TextContent(v.Note))
		}
		title(v.Title, v.Locations, firstDiffPath(v.Diffs))
		parts.locations = r.locations(w, v.Locations)
	case tools.TerminalResult:
		parts.terminal = &v
	}
	return parts
}
