package present

import (
	"encoding/json"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// PermissionCard is a tool call as the user should see it when asked for
// permission (the toolCall of `session/request_permission`) in a session
// described by v: title, kind, status pending, content, locations and
// rawInput, from the same call card mapping as the live card. preview,
// when non-nil, replaces the tool's call view (e.g. the hunks an edit
// would apply). A terminal tool's card keeps its terminal item, since the
// editor would otherwise replace the terminal it already shows. No
// presenter state is read or changed.
func PermissionCard(v View, t ToolLookup, callID, name string, args json.RawMessage, preview tools.ToolCallView) acp.ToolCallUpdate {
	tool, _ := t.Get(name)
	view := preview
	if view == nil {
		view = tool.CallView(args)
	}
	r := paths{view: v}
	w := new(card)
	parts := r.callCard(w, tool, callID, name, view)
	w.title = parts.title
	u := acp.ToolCallUpdate{ToolCallID: callID, Title: &w.title, Kind: parts.kind, Status: acp.StatusPending,
		Locations: parts.locations, RawInput: rawInput(args)}
	if len(parts.content) > 0 {
		u.Content = parts.content
	}
	return u
}
