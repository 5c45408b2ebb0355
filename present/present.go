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
	// Compaction: the editor advertised `session.compaction`: a
	// compaction is shown as compaction_update and
	// compaction_summary_chunk, else as a short agent message
	// (compaction.go).
	Compaction bool
	// Resolve, when set, resolves a path against a cwd the way the
	// tools open it (permission.Resolve: symlinks followed where they
	// stand, then ".."); cards use it for paths with a ".." segment
	// (paths.abs). Nil: the text is cleaned.
	Resolve func(cwd, path string) string
}

// Presenter turns one session's events into ACP session updates. It
// keeps per-call state (the arguments, the card shown, what terminal
// output was sent), so events of one session must go through one
// Presenter, in order. Not safe for concurrent use.
//
// A tool call's card is announced with exactly one tool_call, as early
// as it can say something real; everything after it is a
// tool_call_update. A tool with PresentStart (read, write, edit) is
// announced once the members its card needs have streamed (the path),
// with its real kind, title and absolute locations, long before a large
// content has; a terminal tool once its arguments are complete (its
// first message carries the terminal and the real cwd); any other tool
// at once, with its name. Cards appear in the order the model called the
// tools: a call that starts announces the calls before it that are still
// waiting (with what is known of them), except a terminal call whose
// arguments are still incomplete, which only arises when the model
// interleaves its calls' arguments. Every card starts pending and turns
// in_progress when its call runs.
type Presenter struct {
	paths
	tools ToolLookup
	calls map[string]*callState
	// order holds the current step's calls in the order the model
	// called them.
	order []string
}

// callState is what the presenter remembers of one tool call.
type callState struct {
	name      string
	args      json.RawMessage // the arguments the card shows (while streaming, the complete members)
	complete  bool            // args are the call's final arguments
	tool      tools.Tool      // the tool named toolName, once found
	toolName  string          // "" until the tool was found
	resolved  *tools.Call     // the call resolved with args, once they are complete
	announced bool            // a tool_call was sent
	started   bool            // in_progress was sent (the call runs)
	terminal  bool            // shown as a terminal card
	term      termState       // a terminal card's output so far (terminal.go)
	kind      acp.ToolKind    // the card's kind; result titles follow its title rule
	// content and locations are the call card's, from the arguments
	// (content: the list last sent); previewed says a preview replaced
	// them on the wire, so the final update sets them again when the
	// result has none of its own (replay has no preview).
	content   []acp.ToolCallContent
	locations []acp.ToolCallLocation
	previewed bool
	// startLocated says the start card (announceStart, from the members
	// streamed so far) showed locations.
	startLocated bool
	path         string // the call card's first path, to relativize result titles
}

// NewPresenter returns a presenter for a session described by v.
func NewPresenter(v View, t ToolLookup) *Presenter {
	return &Presenter{paths: paths{view: v}, tools: t, calls: map[string]*callState{}}
}

// Updates returns the session updates for ev, in order (often none).
func (p *Presenter) Updates(ev session.Event) []acp.Update {
	switch d := ev.Data.(type) {
	case session.AssistantChunk:
		return chunkUpdates(d)
	case session.AssistantMessage:
		return p.messageUpdates(d)
	case session.UserMessage:
		return p.userUpdates(d)
	case session.Notice:
		return []acp.Update{acp.Notice{Severity: d.Severity, Title: d.Title, Description: d.Description}}
	case session.StepStart:
		p.order = p.order[:0]
		return nil
	case session.ToolStart:
		return p.toolStart(d)
	case session.ToolInput:
		return p.toolInput(d)
	case session.ToolCall:
		return p.toolCall(d)
	case session.ToolPreview:
		return p.toolPreview(d)
	case session.ToolExec:
		c := p.calls[d.CallID]
		if c == nil || !c.announced || c.started {
			return nil
		}
		c.started = true
		return []acp.Update{acp.ToolCallUpdate{ToolCallID: d.CallID, Status: acp.StatusInProgress}}
	case session.ToolProgress:
		return p.progress(d)
	case session.Subagent:
		// A child's events go on the child's own session id (the bridge
		// presents them with a presenter of the child's), never here.
		return nil
	case session.Plan:
		return planUpdates(d)
	case session.ToolResult:
		return p.toolResult(d)
	case session.Title:
		t := d.Title
		return []acp.Update{acp.SessionInfoUpdate{Title: &t}}
	case session.CompactionStart:
		return p.compactionStart(d)
	case session.CompactionChunk:
		return p.compactionChunk(d)
	case session.Compaction:
		return p.compaction(d)
	case session.ModeChange:
		// Live, the bridge announces a mode change itself, on the surface
		// the editor did not use (after the request's answer); a replay
		// says which mode was chosen when.
		if !p.view.Replay {
			return nil
		}
		return []acp.Update{acp.CurrentModeUpdate{CurrentModeID: d.ModeID}}
	case session.ContextUsage:
		return usageUpdates(d)
	case session.TurnChanges:
		return p.turnChanges(d)
	case session.TurnUndone:
		return p.turnUndone(d)
	case session.TurnStart, session.TurnEnd, session.StepEnd, session.ContextMessage, session.PermissionRule, session.Directories,
		session.ConfigChange, session.SystemPrompt, session.ToolDefinition:
		// Turn bounds and a step's end show nothing (the prompt response
		// ends a turn); context messages are for the model only; a remembered
		// permission answer and the additional directories are restored
		// by session/load, not shown. A config change has no update of
		// its own: the option list it changes is the bridge's (the
		// answer to set_config_option, the load answer); nor has the
		// editor's system prompt, which the editor gave. A tool
		// definition is what the bridge's replay builds an MCP call's
		// cards from (the ToolCall and ToolResult show them).
		return nil
	}
	return nil
}

// Every tool_call carries the tool's name (schema 1.22). A
// tool_call_update may carry one too, but an omitted name means
// "unchanged" and a call never changes its tool, so updates leave it out
// (Zed, as read, takes a tool's name from `_meta.tool_name` of its own
// agents and ignores `name` on updates).

// toolCall shows the final arguments of a call (logged: the card replay
// rebuilds), unless the card already shows them.
func (p *Presenter) toolCall(d session.ToolCall) []acp.Update {
	c := p.call(d.CallID, d.Name)
	if c.name == "" {
		c.name = d.Name
	}
	if c.complete && string(c.args) == d.Arguments {
		return nil
	}
	return p.showCall(c, d.CallID, json.RawMessage(d.Arguments), d.Call)
}

// showCall shows the card of args, the complete arguments (or, for a call
// the model did not finish, what had streamed: then its start card from
// the members complete in it): a tool_call, or a tool_call_update of the
// card already announced. A terminal card is a terminal only when this is
// its first message. given is the call's resolution when the event
// carried one (live), else the call is resolved here (replay).
func (p *Presenter) showCall(c *callState, id string, args json.RawMessage, given *tools.Call) []acp.Update {
	c.args, c.complete = args, true
	call := p.resolve(c, id, args, given)
	tool := call.Tool
	view := call.CallView()
	if view == nil && !json.Valid(args) {
		view = tool.StartView(tools.PartialArgs(string(args)))
	}
	w := new(card)
	parts := p.callCard(w, tool, id, c.name, view)
	if parts.terminal && c.announced && !c.terminal {
		// Announced before its card was known: no terminal now (the
		// editor has none to show), the command as text.
		parts.terminal, parts.content = false, parts.head
	}
	c.path, c.kind = parts.path, parts.kind
	content := parts.content
	if len(content) == 0 {
		content = nil
	}
	c.content, c.locations = content, parts.locations
	if !c.announced {
		c.announced = true
		var meta *acp.ToolCallMeta
		if parts.terminal {
			c.terminal, c.term.head = true, parts.head
			meta = p.terminalMeta(id, parts.cwd)
		}
		return w.one(acp.ToolCall{ToolCallID: id, Title: parts.title, Name: c.name, Kind: parts.kind, Status: acp.StatusPending,
			Locations: parts.locations, RawInput: rawInput(args), Meta: meta, Content: content})
	}
	w.title = parts.title
	locations := parts.locations
	if locations == nil && c.startLocated {
		// The start card named a file that the whole arguments do not
		// (for example arguments the tool refuses, such as a file_path
		// given twice, where the first value streamed is not the one
		// decoding takes): clear it, so the card never keeps pointing at
		// a file the call does not touch.
		locations = []acp.ToolCallLocation{}
	}
	return w.one(acp.ToolCallUpdate{ToolCallID: id, Title: &w.title, Kind: parts.kind,
		Locations: locations, RawInput: rawInput(args), Content: content})
}

// toolPreview shows what a call is about to change (its preview hunks:
// a write's real old text, or none for a file that does not exist) in
// place of the call card's content and locations.
func (p *Presenter) toolPreview(d session.ToolPreview) []acp.Update {
	c := p.calls[d.CallID]
	if c == nil || !c.announced || c.terminal {
		return nil
	}
	tool, _ := p.lookup(c, c.name)
	w := new(card)
	parts := p.callCard(w, tool, d.CallID, c.name, d.Preview)
	if len(parts.content) == 0 && len(parts.locations) == 0 {
		return nil
	}
	c.previewed = true
	return w.one(acp.ToolCallUpdate{ToolCallID: d.CallID, Content: parts.content, Locations: parts.locations})
}

// toolResult closes a call with exactly one final update (after its
// tool_call, when nothing announced it yet).
func (p *Presenter) toolResult(d session.ToolResult) []acp.Update {
	c := p.calls[d.CallID]
	delete(p.calls, d.CallID)
	if c == nil {
		// Never seen (an older log's call that never ran): nothing to
		// close.
		return nil
	}
	var first []acp.Update
	if !c.announced {
		first = append(first, p.announceName(c, d.CallID))
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
		view := d.View
		if view == nil {
			call := p.resolve(c, d.CallID, c.args, nil)
			view = call.ResultView(tools.ResultInput{Content: d.Content, IsError: d.IsError, Error: d.Error, Meta: d.Meta})
		}
		parts = p.resultCard(w, c, view)
	}
	switch {
	case c.terminal:
		u = p.terminalResult(c, u, parts.terminal, text, d.Cancelled, d.NotRun)
	case d.Cancelled:
		// The call card from the arguments, not a preview: a replay
		// rebuilds the same card.
		// rawOutput says so too, without the tool's internal error text.
		u.RawOutput = acp.JSONString(cancelledText)
		u.Content = append(append([]acp.ToolCallContent{}, c.content...), acp.TextContent(cancelledText))
		if c.previewed {
			u.Locations = c.locations
		}
	default:
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
		if c.previewed && u.Locations == nil {
			u.Locations = c.locations
		}
	}
	if c.previewed && u.Locations == nil {
		u.Locations = []acp.ToolCallLocation{}
	}
	if first != nil {
		return append(first, u)
	}
	return w.one(u)
}

// cancelledText is the line a cancelled card (other than a terminal) ends
// with, and its rawOutput.
const cancelledText = "Cancelled by the user."

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

// resolve is call c (id) with arguments args resolved once: given when
// it is that call (the agent's resolution, live), else c's earlier
// resolution when the arguments are the same, else a new one from the
// tool looked up (replay, where the log has no resolution).
func (p *Presenter) resolve(c *callState, id string, args json.RawMessage, given *tools.Call) *tools.Call {
	switch {
	case given.Matches(c.name, args):
		c.resolved = given
	case c.resolved.Matches(c.name, args):
	default:
		tool, _ := p.lookup(c, c.name)
		c.resolved = tool.Resolve(id, c.name, args)
	}
	if c.resolved.Found && c.name != "" {
		c.tool, c.toolName = c.resolved.Tool, c.name
	}
	return c.resolved
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
