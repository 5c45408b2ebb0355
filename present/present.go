// Package present turns a session's events into ACP session updates: the
// cards an editor shows for messages, plans, titles, modes and tool
// calls. One function ([Presenter.Updates]) serves live sessions and
// replays, which is why replayed cards equal live ones.
//
// A tool's call view and result view (tools.ToolCallView,
// tools.ToolResultView) are mapped to card parts in one switch each
// (call.go, result.go); paths, titles and the line base are resolved in
// paths.go; the rules of terminal cards (live terminals, output
// snapshots, exits, cancels) are in terminal.go; [PermissionCard] is the
// call card as a permission request shows it.
package present

import (
	"bytes"
	"encoding/json"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// ToolLookup finds a registered tool by name (a *tools.Registry).
type ToolLookup interface {
	Get(name string) (tools.Tool, bool)
}

// View is what a presenter needs of its session: fixed when the session is
// created or loaded (the capability snapshot).
type View struct {
	// Cwd is the session's absolute working directory.
	Cwd string
	// TerminalOutput: the editor advertised `_meta.terminal_output`.
	TerminalOutput bool
	// LineBase is the base of `locations[].line` on the wire: 1 (the
	// spec) or 0 (Zed's rows).
	LineBase int
	// Replay: the events come from a log being replayed (user messages
	// are shown; live-only updates never arrive).
	Replay bool
}

// Presenter turns one session's events into ACP session updates. It
// keeps per-call state (the arguments, the card shown, what terminal
// output was sent), so events of one session must go through one
// Presenter, in order. Not safe for concurrent use.
type Presenter struct {
	paths
	tools ToolLookup
	calls map[string]*callState

	// WillAsk, when set, reports whether a call will wait for the user's
	// permission before it runs: a terminal card then starts `pending`
	// (and turns `in_progress` when execution starts) instead of
	// `in_progress`.
	WillAsk func(name string, args json.RawMessage) bool
}

// callState is what the presenter remembers of one tool call.
type callState struct {
	name      string
	args      json.RawMessage
	tool      tools.Tool            // the tool named toolName, once found
	toolName  string                // "" until the tool was found
	announced bool                  // a tool_call was sent
	terminal  bool                  // shown as a terminal card
	term      termState             // a terminal card's output so far (terminal.go)
	content   []acp.ToolCallContent // the content list last sent
	pending   bool                  // a terminal card announced as pending
	path      string                // the call card's first path, to relativize result titles
}

// NewPresenter returns a presenter for a session described by v.
func NewPresenter(v View, t ToolLookup) *Presenter {
	return &Presenter{paths: paths{view: v}, tools: t, calls: map[string]*callState{}}
}

// Updates returns the session updates for ev, in order (often none).
func (p *Presenter) Updates(ev session.Event) []acp.Update {
	switch d := ev.Data.(type) {
	case session.AssistantChunk:
		if d.Text == "" {
			return nil
		}
		id := session.AssistantMessageID(d.Turn, d.Step)
		if d.Kind == session.ChunkReasoning {
			return []acp.Update{acp.AgentThoughtChunk{Content: acp.TextBlock(d.Text), MessageID: id}}
		}
		return []acp.Update{acp.AgentMessageChunk{Content: acp.TextBlock(d.Text), MessageID: id}}
	case session.AssistantMessage:
		if !p.view.Replay {
			return nil
		}
		var out []acp.Update
		id := session.AssistantMessageID(d.Turn, d.Step)
		if d.Reasoning != "" {
			out = append(out, acp.AgentThoughtChunk{Content: acp.TextBlock(d.Reasoning), MessageID: id})
		}
		if d.Text != "" {
			out = append(out, acp.AgentMessageChunk{Content: acp.TextBlock(d.Text), MessageID: id})
		}
		return out
	case session.UserMessage:
		if !p.view.Replay {
			return nil
		}
		var out []acp.Update
		id := session.UserMessageID(d.Turn)
		for _, c := range d.Content {
			block := acp.TextBlock(c.Text)
			if c.Type == tools.ContentImage {
				block = acp.ContentBlock{Type: acp.BlockImage, Data: c.Data, MimeType: c.MimeType}
			}
			out = append(out, acp.UserMessageChunk{Content: block, MessageID: id})
		}
		return out
	case session.Notice:
		return []acp.Update{acp.Notice{Severity: d.Severity, Title: d.Title, Description: d.Description}}
	case session.ToolStart:
		return p.toolStart(d)
	case session.ToolCall:
		return p.toolCall(d)
	case session.ToolExec:
		c := p.calls[d.CallID]
		if c == nil || !c.announced || (c.terminal && !c.pending) {
			// A terminal card is in_progress from the start unless it
			// waited for permission.
			return nil
		}
		c.pending = false
		return []acp.Update{acp.ToolCallUpdate{ToolCallID: d.CallID, Status: acp.StatusInProgress}}
	case session.ToolProgress:
		return p.progress(d)
	case session.Plan:
		entries := make([]acp.PlanEntry, 0, len(d.Entries))
		for _, e := range d.Entries {
			entries = append(entries, acp.PlanEntry{Content: e.Content, Priority: "medium", Status: e.Status})
		}
		return []acp.Update{acp.Plan{Entries: entries}}
	case session.ToolResult:
		return p.toolResult(d)
	case session.Title:
		t := d.Title
		return []acp.Update{acp.SessionInfoUpdate{Title: &t}}
	case session.ModeChange:
		// Live, the bridge announces a mode change itself, on the surface
		// the editor did not use (after the request's answer); a replay
		// says which mode was chosen when.
		if !p.view.Replay {
			return nil
		}
		return []acp.Update{acp.CurrentModeUpdate{CurrentModeID: d.ModeID}}
	case session.ContextUsage:
		u := acp.UsageUpdate{Used: uint64(max(d.Used, 0)), Size: uint64(max(d.Size, 0))}
		if d.Cost != nil {
			u.Cost = &acp.Cost{Amount: d.Cost.Amount, Currency: d.Cost.Currency}
		}
		return []acp.Update{u}
	case session.TurnStart, session.TurnEnd, session.StepStart, session.StepEnd, session.ContextMessage, session.PermissionRule, session.Directories,
		session.ConfigChange, session.ToolDefinition:
		// Turn and step bounds show nothing (the prompt response ends a
		// turn); context messages are for the model only; a remembered
		// permission answer and the additional directories are restored
		// by session/load, not shown. A config change has no update of
		// its own: the option list it changes is the bridge's (the
		// answer to set_config_option, the load answer). A tool
		// definition is what the bridge's replay builds an MCP call's
		// cards from (the ToolCall and ToolResult show them).
		return nil
	}
	return nil
}

// toolStart announces a call whose arguments are still streaming, except
// for terminal tools (their first message must carry the terminal).
//
// Every tool_call carries the tool's name (schema 1.22). A
// tool_call_update may carry one too, but an omitted name means
// "unchanged" and a call never changes its tool, so updates leave it out
// (Zed, as read, takes a tool's name from `_meta.tool_name` of its own
// agents and ignores `name` on updates).
func (p *Presenter) toolStart(d session.ToolStart) []acp.Update {
	c := p.call(d.CallID, d.Name)
	if t, ok := p.lookup(c, d.Name); ok && t.Terminal {
		return nil
	}
	c.announced = true
	return new(card).one(acp.ToolCall{ToolCallID: d.CallID, Title: oneLine(d.Name), Name: d.Name,
		Kind: acp.ToolKind(tools.KindOther), Status: acp.StatusPending})
}

// toolCall shows the call card once the arguments are complete: a
// tool_call, or a tool_call_update completing the card toolStart
// announced.
func (p *Presenter) toolCall(d session.ToolCall) []acp.Update {
	c := p.call(d.CallID, d.Name)
	c.args = json.RawMessage(d.Arguments)
	tool, _ := p.lookup(c, d.Name)
	w := new(card)
	parts := p.callCard(w, tool, d.CallID, d.Name, tool.CallView(c.args))
	c.path = parts.path
	content := parts.content
	if len(content) == 0 {
		content = nil
	} else {
		c.content = content
	}
	status, meta := acp.StatusPending, (*acp.ToolCallMeta)(nil)
	if parts.terminal {
		c.terminal, c.term.head = true, parts.head
		status, meta = p.terminalStart(c, d.CallID, d.Name, parts.cwd)
	}
	if parts.terminal || !c.announced {
		c.announced = true
		return w.one(acp.ToolCall{ToolCallID: d.CallID, Title: parts.title, Name: d.Name, Kind: parts.kind, Status: status,
			Locations: parts.locations, RawInput: rawInput(c.args), Meta: meta, Content: content})
	}
	w.title = parts.title
	return w.one(acp.ToolCallUpdate{ToolCallID: d.CallID, Title: &w.title, Kind: parts.kind,
		Locations: parts.locations, RawInput: rawInput(c.args), Content: content})
}

// toolResult closes a call with exactly one final update.
func (p *Presenter) toolResult(d session.ToolResult) []acp.Update {
	c := p.calls[d.CallID]
	delete(p.calls, d.CallID)
	if c == nil || !c.announced {
		// Never shown (e.g. a terminal call cut off before its
		// arguments were complete): nothing to close.
		return nil
	}
	status := acp.StatusCompleted
	if d.IsError || d.Cancelled {
		status = acp.StatusFailed
	}
	text := tools.JoinText(d.Content)
	u := acp.ToolCallUpdate{ToolCallID: d.CallID, Status: status, RawOutput: acp.JSONString(text)}
	w := new(card)
	var parts resultParts
	if !d.Cancelled || c.terminal {
		// A cancelled terminal card may still show what its result
		// says the command printed (terminal.go).
		tool, _ := p.lookup(c, c.name)
		parts = p.resultCard(w, c, tool.ResultView(c.args, tools.ResultInput{Content: d.Content, IsError: d.IsError, Error: d.Error, Meta: d.Meta}))
	}
	if c.terminal {
		return w.one(p.terminalResult(c, u, parts.terminal, text, d.Cancelled))
	}
	if d.Cancelled {
		u.Content = append(append([]acp.ToolCallContent{}, c.content...), acp.TextContent("Cancelled by the user."))
		return w.one(u)
	}
	u.Title, u.Locations, u.Content = parts.title, parts.locations, parts.content
	if parts.rawOutput != nil {
		u.RawOutput = parts.rawOutput
	}
	if len(u.Content) == 0 {
		// The tool's own text is the fallback content.
		if u.Content = textItems(d.Content); u.Content == nil {
			u.Content = []acp.ToolCallContent{}
		}
	}
	return w.one(u)
}

// lookup finds the tool called name, once per call: a found tool is
// remembered in c (an unknown one is looked up again next time).
func (p *Presenter) lookup(c *callState, name string) (tools.Tool, bool) {
	if c.toolName != "" && c.toolName == name {
		return c.tool, true
	}
	t, ok := p.tools.Get(name)
	if ok && name != "" {
		c.tool, c.toolName = t, name
	}
	return t, ok
}

func (p *Presenter) call(id, name string) *callState {
	c := p.calls[id]
	if c == nil {
		c = &callState{name: name}
		p.calls[id] = c
	}
	return c
}

// card is the storage of one returned tool call update, in a single
// allocation: the list it is returned in, its title, and room for the
// common case of one location (with its line) and one content item.
type card struct {
	list  [1]acp.Update
	title string
	loc   [1]acp.ToolCallLocation
	line  int
	item  [1]acp.ToolCallContent
}

// one returns u as the update list stored in w.
func (w *card) one(u acp.Update) []acp.Update {
	w.list[0] = u
	return w.list[:]
}

// textItems makes a text item of each text content (other content is
// left out); nil when there is none.
func textItems(cs []tools.Content) []acp.ToolCallContent {
	var out []acp.ToolCallContent
	for _, c := range cs {
		if c.Type != "" && c.Type != "text" {
			continue
		}
		out = append(out, acp.TextContent(c.Text))
	}
	return out
}

// rawInput is the arguments as JSON: the object when the text is valid
// JSON (args itself), else the text as a JSON string; "" is {}.
func rawInput(args json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(args) {
		return args
	}
	return acp.JSONString(string(args))
}
