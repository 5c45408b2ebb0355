// This file announces a call while its arguments stream: the tool_call
// from the name alone, then the real kind, title and location as soon as
// the arguments' path member is complete, and the calls of one response in
// the model's order.

package present

import (
	"encoding/json"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// toolStart begins a call whose arguments are about to stream: the calls
// before it are announced first, then this one at once with its name
// unless its tool waits for its arguments (PresentStart, Terminal).
func (p *Presenter) toolStart(d session.ToolStart) []acp.Update {
	c := p.call(d.CallID, d.Name)
	if pc := d.Pending; pc != nil && pc.Found && pc.Name == d.Name && d.Name != "" {
		// The agent looked the tool up when the model named it.
		c.tool, c.toolName = pc.Tool, d.Name
	}
	out := p.announceEarlier()
	p.order = append(p.order, d.CallID)
	if t, ok := p.lookup(c, d.Name); ok && (t.Terminal || t.PresentStart != nil) {
		return out
	}
	return append(out, p.announceName(c, d.CallID))
}

// announceEarlier announces the calls of the step that still wait for
// their arguments (a call is starting after them): with their start card
// when the members so far give one, else with the name. A terminal call
// keeps waiting (its first message must carry the terminal).
func (p *Presenter) announceEarlier() []acp.Update {
	var out []acp.Update
	for _, id := range p.order {
		c := p.calls[id]
		if c == nil || c.announced {
			continue
		}
		t, ok := p.lookup(c, c.name)
		if ok && t.Terminal {
			continue
		}
		if v := t.StartView(c.args); ok && c.args != nil && v != nil {
			out = append(out, p.announceStart(c, id, t, v)...)
			continue
		}
		out = append(out, p.announceName(c, id))
	}
	return out
}

// announceName is the tool_call of a card that only knows the tool's
// name.
func (p *Presenter) announceName(c *callState, id string) acp.Update {
	c.announced, c.kind = true, acp.ToolKind(tools.KindOther)
	return acp.ToolCall{ToolCallID: id, Title: nameTitle(c.name), Name: c.name, Kind: c.kind, Status: acp.StatusPending}
}

// toolInput follows a call's streaming arguments: the start card once
// the members so far give one, the full card once they are complete.
func (p *Presenter) toolInput(d session.ToolInput) []acp.Update {
	c := p.call(d.CallID, "")
	if d.Complete {
		return p.showCall(c, d.CallID, json.RawMessage(d.Arguments), d.Call)
	}
	if c.announced || c.complete {
		return nil
	}
	c.args = json.RawMessage(d.Arguments)
	t, ok := p.lookup(c, c.name)
	if !ok || t.Terminal {
		return nil
	}
	v := t.StartView(c.args)
	if v == nil {
		return nil
	}
	return p.announceStart(c, d.CallID, t, v)
}

// announceStart is the tool_call of a call whose arguments are still
// streaming, from its start card: title, kind, locations (and content,
// if the card has some); no rawInput until the arguments are complete.
func (p *Presenter) announceStart(c *callState, id string, t tools.Tool, v tools.ToolCallView) []acp.Update {
	w := new(card)
	parts := p.callCard(w, t, id, c.name, v)
	if parts.terminal {
		return nil
	}
	c.announced, c.kind, c.path = true, parts.kind, parts.path
	c.startLocated = len(parts.locations) > 0
	content := parts.content
	if len(content) == 0 {
		content = nil
	}
	return w.one(acp.ToolCall{ToolCallID: id, Title: parts.title, Name: c.name, Kind: parts.kind, Status: acp.StatusPending,
		Locations: parts.locations, Content: content})
}
