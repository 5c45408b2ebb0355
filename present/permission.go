package present

import (
	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// PermissionCard is a tool call as the user should see it when asked for
// permission (the toolCall of `session/request_permission`) in a session
// described by v: title, kind, status pending, content, locations and
// rawInput, from the same call card mapping as the live card, for the
// resolved call c (its tool is not looked up again). preview,
// when non-nil, replaces the tool's call view (e.g. the hunks an edit
// would apply). A terminal tool's card keeps its terminal item, since the
// editor would otherwise replace the terminal it already shows. No
// presenter state is read or changed.
func PermissionCard(v View, c *tools.Call, preview tools.ToolCallView) acp.ToolCallUpdate {
	view := preview
	if view == nil {
		view = c.CallView()
	}
	r := paths{view: v}
	w := new(card)
	parts := r.callCard(w, c.Tool, c.ID, c.Name, view)
	w.title = parts.title
	u := acp.ToolCallUpdate{ToolCallID: c.ID, Title: &w.title, Kind: parts.kind, Status: acp.StatusPending,
		Locations: parts.locations, RawInput: rawInput(c.Args)}
	if len(parts.content) > 0 {
		u.Content = parts.content
	}
	return u
}
