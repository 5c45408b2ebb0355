package bridge

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

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

// Presenter turns one session's events into ACP session updates: the one
// function used live and on replay. It keeps per-call state (the
// arguments, the card shown, what terminal output was sent), so events
// of one session must go through one Presenter, in order. Not safe for
// concurrent use.
type Presenter struct {
	view  View
	tools ToolLookup
	calls map[string]*callState
	now   func() time.Time

	// WillAsk, when set, reports whether a call will wait for the user's
	// permission before it runs: a terminal card then starts `pending`
	// (and turns `in_progress` when execution starts) instead of
	// `in_progress`.
	WillAsk func(name string, args json.RawMessage) bool

	// absMemo remembers the last few paths resolved by abs (a call's
	// cards resolve the same paths again and again); absNext is the slot
	// replaced next.
	absMemo [4]struct{ in, out string }
	absNext int
}

// callState is what the presenter remembers of one tool call.
type callState struct {
	name      string
	args      json.RawMessage
	tool      tools.Tool // the tool named toolName, once found
	toolName  string     // "" until the tool was found
	announced bool       // a tool_call was sent
	terminal  bool       // shown as a terminal card
	desc      string
	content   []acp.ToolCallContent // the content list last sent
	sentLive  bool                  // live terminal output was sent
	pending   bool                  // a terminal card announced as pending
	rawPath   string                // the call card's first path, to relativize result titles
	tail      []byte                // no-capability: the output so far (tail)
	lastSnap  time.Time
}

// NewPresenter returns a presenter for a session described by v.
func NewPresenter(v View, t ToolLookup) *Presenter {
	return &Presenter{view: v, tools: t, calls: map[string]*callState{}, now: time.Now}
}

// snapshotEvery is the least time between two output snapshots of a
// terminal card shown to an editor without live terminals.
const snapshotEvery = time.Second

// snapshotTail is how much output such a snapshot shows, in bytes.
const snapshotTail = 8 << 10

// Updates returns the session updates for ev, in order (often none).
func (p *Presenter) Updates(ev session.Event) []acp.SessionUpdate {
	switch d := ev.Data.(type) {
	case session.AssistantChunk:
		kind := acp.UpdateAgentMessageChunk
		if d.Kind == session.ChunkReasoning {
			kind = acp.UpdateAgentThoughtChunk
		}
		if d.Text == "" {
			return nil
		}
		b := acp.TextBlock(d.Text)
		return []acp.SessionUpdate{{SessionUpdate: kind, Content: &b}}
	case session.AssistantMessage:
		if !p.view.Replay {
			return nil
		}
		var out []acp.SessionUpdate
		if d.Reasoning != "" {
			b := acp.TextBlock(d.Reasoning)
			out = append(out, acp.SessionUpdate{SessionUpdate: acp.UpdateAgentThoughtChunk, Content: &b})
		}
		if d.Text != "" {
			b := acp.TextBlock(d.Text)
			out = append(out, acp.SessionUpdate{SessionUpdate: acp.UpdateAgentMessageChunk, Content: &b})
		}
		return out
	case session.UserMessage:
		if !p.view.Replay {
			return nil
		}
		var out []acp.SessionUpdate
		for _, c := range d.Content {
			b := acp.TextBlock(c.Text)
			out = append(out, acp.SessionUpdate{SessionUpdate: acp.UpdateUserMessageChunk, Content: &b})
		}
		return out
	case session.ToolStart:
		return p.toolStart(d)
	case session.ToolCall:
		return p.toolCall(d)
	case session.ToolExec:
		c := p.calls[d.CallID]
		if c == nil || !c.announced || (c.terminal && !c.pending) {
			return nil
		}
		c.pending = false
		return []acp.SessionUpdate{{SessionUpdate: acp.UpdateToolCallUpdate, ToolCallID: d.CallID, Status: acp.StatusInProgress}}
	case session.ToolProgress:
		return p.progress(d)
	case session.Plan:
		entries := make([]acp.PlanEntry, 0, len(d.Entries))
		for _, e := range d.Entries {
			entries = append(entries, acp.PlanEntry{Content: e.Content, Priority: "medium", Status: e.Status})
		}
		return []acp.SessionUpdate{{SessionUpdate: acp.UpdatePlan, Entries: entries}}
	case session.ToolResult:
		return p.toolResult(d)
	case session.Title:
		t := d.Title
		return []acp.SessionUpdate{{SessionUpdate: acp.UpdateSessionInfo, InfoTitle: &t}}
	case session.ModeChange:
		return []acp.SessionUpdate{{SessionUpdate: acp.UpdateCurrentMode, CurrentModeID: d.ModeID}}
	}
	return nil
}

// toolStart announces a call whose arguments are still streaming, except
// for terminal tools (their first message must carry the terminal).
func (p *Presenter) toolStart(d session.ToolStart) []acp.SessionUpdate {
	c := p.call(d.CallID, d.Name)
	if t, ok := p.lookup(c, d.Name); ok && t.Terminal {
		return nil
	}
	c.announced = true
	title := oneLine(d.Name)
	return new(card).list(acp.SessionUpdate{SessionUpdate: acp.UpdateToolCall, ToolCallID: d.CallID,
		Kind: acp.ToolKind(tools.KindOther), Status: acp.StatusPending}, &title)
}

// card is the storage of one returned tool call update, in a single
// allocation: the update (as a one-element list), its title, and room for
// the common case of one location (with its line) and one content item.
type card struct {
	u     [1]acp.SessionUpdate
	title string
	loc   [1]acp.ToolCallLocation
	line  int
	item  [1]acp.ToolCallContent
}

// list stores u in w and returns it as the update list, titled with
// *title when title is non-nil (the title is copied into w).
func (w *card) list(u acp.SessionUpdate, title *string) []acp.SessionUpdate {
	w.u[0] = u
	if title != nil {
		w.title = *title
		w.u[0].Title = &w.title
	}
	return w.u[:]
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

// toolCall shows the call card once the arguments are complete.
func (p *Presenter) toolCall(d session.ToolCall) []acp.SessionUpdate {
	c := p.call(d.CallID, d.Name)
	c.args = json.RawMessage(d.Arguments)
	tool, _ := p.lookup(c, d.Name)
	view := tool.CallView(c.args)
	w := new(card)
	u := acp.SessionUpdate{ToolCallID: d.CallID, RawInput: rawInput(c.args)}
	if tv, ok := view.(tools.TerminalCall); ok && tool.Terminal {
		c.terminal, c.desc = true, tv.Description
		title := oneLine(tv.Title)
		u.SessionUpdate, u.Kind, u.Status = acp.UpdateToolCall, acp.ToolKind(tools.KindExecute), acp.StatusInProgress
		if p.WillAsk != nil && p.WillAsk(d.Name, c.args) {
			u.Status, c.pending = acp.StatusPending, true
		}
		if tv.Description != "" {
			c.content = append(c.content, acp.TextContent(tv.Description))
		}
		if p.view.TerminalOutput {
			c.content = append(c.content, acp.ToolCallContent{Type: "terminal", TerminalID: d.CallID})
			u.ToolCallExtra = &acp.ToolCallMeta{TerminalInfo: &acp.TerminalInfo{TerminalID: d.CallID, Cwd: p.abs(tv.Cwd)}}
		}
		if len(c.content) > 0 {
			u.ToolContent = c.content
		}
		c.announced = true
		return w.list(u, &title)
	}
	title, kind, content, locs := p.callCard(w, d.Name, view)
	c.rawPath = viewPath(view)
	u.Kind, u.Locations = kind, locs
	if len(content) > 0 {
		u.ToolContent = content
		c.content = content
	}
	if c.announced {
		u.SessionUpdate = acp.UpdateToolCallUpdate
	} else {
		u.SessionUpdate, u.Status = acp.UpdateToolCall, acp.StatusPending
		c.announced = true
	}
	return w.list(u, &title)
}

// PermissionCard is the tool call as the user should see it when asked
// for permission (the toolCall of `session/request_permission`): title,
// kind, status pending, content, locations and rawInput. preview, when
// non-nil, replaces the call card (e.g. the hunks an edit would apply).
// A terminal tool's card keeps its terminal item, since the editor would
// otherwise replace the terminal it already shows. It does not change
// the presenter's per-call state.
func (p *Presenter) PermissionCard(callID, name string, args json.RawMessage, preview tools.ToolCallView) acp.SessionUpdate {
	tool, _ := p.tools.Get(name)
	view := preview
	if view == nil {
		view = tool.CallView(args)
	}
	u := acp.SessionUpdate{ToolCallID: callID, Status: acp.StatusPending, RawInput: rawInput(args)}
	if tv, ok := view.(tools.TerminalCall); ok && tool.Terminal {
		title := oneLine(tv.Title)
		u.Title, u.Kind = &title, acp.ToolKind(tools.KindExecute)
		var content []acp.ToolCallContent
		if tv.Description != "" {
			content = append(content, acp.TextContent(tv.Description))
		}
		if p.view.TerminalOutput {
			content = append(content, acp.ToolCallContent{Type: "terminal", TerminalID: callID})
		}
		u.ToolContent = content
		return u
	}
	title, kind, content, locs := p.callCard(new(card), name, view)
	u.Title, u.Kind, u.Locations = &title, kind, locs
	if len(content) > 0 {
		u.ToolContent = content
	}
	return u
}

// callCard maps a generic or diff call view (or nil, the fallback) to its
// title, kind, content and locations (stored in w when they fit).
func (p *Presenter) callCard(w *card, name string, view tools.ToolCallView) (string, acp.ToolKind, []acp.ToolCallContent, []acp.ToolCallLocation) {
	switch v := view.(type) {
	case tools.GenericCall:
		kind := v.Kind
		if kind == "" {
			kind = tools.KindOther
		}
		return p.title(v.Title, firstLocPath(v.Locations), ""), acp.ToolKind(kind), textItems(v.Content), p.locations(w, v.Locations)
	case tools.DiffCall:
		return p.title(v.Title, firstLocPath(v.Locations), firstDiffPath(v.Diffs)), acp.ToolKind(tools.KindEdit), p.diffItems(w, v.Diffs), p.locations(w, v.Locations)
	case tools.TerminalCall:
		// A terminal card from a tool that did not declare itself
		// terminal-capable: show it as a plain execute card.
		var content []acp.ToolCallContent
		if v.Description != "" {
			content = textItems([]tools.Content{tools.Text(v.Description)})
		}
		return oneLine(v.Title), acp.ToolKind(tools.KindExecute), content, nil
	}
	return oneLine(name), acp.ToolKind(tools.KindOther), nil, nil
}

// progress forwards live terminal output.
func (p *Presenter) progress(d session.ToolProgress) []acp.SessionUpdate {
	c := p.calls[d.CallID]
	if c == nil || !c.terminal || d.Progress.Output == "" {
		return nil
	}
	if p.view.TerminalOutput {
		c.sentLive = true
		return []acp.SessionUpdate{{SessionUpdate: acp.UpdateToolCallUpdate, ToolCallID: d.CallID,
			ToolCallExtra: &acp.ToolCallMeta{TerminalOutput: &acp.TerminalOutput{TerminalID: d.CallID, Data: d.Progress.Output}}}}
	}
	c.tail = appendTail(c.tail, d.Progress.Output, snapshotTail)
	now := p.now()
	if now.Sub(c.lastSnap) < snapshotEvery {
		return nil
	}
	c.lastSnap = now
	content := p.terminalContent(c, string(c.tail))
	return []acp.SessionUpdate{{SessionUpdate: acp.UpdateToolCallUpdate, ToolCallID: d.CallID, ToolContent: content}}
}

// toolResult closes a call with exactly one final update.
func (p *Presenter) toolResult(d session.ToolResult) []acp.SessionUpdate {
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
	u := acp.SessionUpdate{SessionUpdate: acp.UpdateToolCallUpdate, ToolCallID: d.CallID, Status: status, RawOutput: acp.JSONString(text)}
	tool, _ := p.lookup(c, c.name)
	in := tools.ResultInput{Content: d.Content, IsError: d.IsError, Meta: d.Meta}
	if c.terminal {
		output, exit, signal := text, (*int)(nil), (*string)(nil)
		if tv, ok := tool.ResultView(c.args, in).(tools.TerminalResult); ok && !d.Cancelled {
			output, exit = tv.Output, tv.ExitCode
			if tv.Signal != "" {
				s := tv.Signal
				signal, exit = &s, nil
			}
		}
		if d.Cancelled {
			s := "SIGTERM"
			signal = &s
			u.RawOutput = acp.JSONString("Cancelled by the user.\n" + text)
		}
		if p.view.TerminalOutput {
			data := ""
			if !c.sentLive {
				data = output
			}
			if d.Cancelled {
				if data != "" && !strings.HasSuffix(data, "\n") {
					data += "\n"
				}
				data += "[cancelled by the user]\n"
			}
			u.ToolCallExtra = &acp.ToolCallMeta{
				TerminalOutput: &acp.TerminalOutput{TerminalID: d.CallID, Data: data},
				TerminalExit:   &acp.TerminalExit{TerminalID: d.CallID, ExitCode: exit, Signal: signal},
			}
			return []acp.SessionUpdate{u}
		}
		if d.Cancelled {
			if output = strings.TrimRight(output, "\n"); output != "" {
				output += "\n"
			}
			output += "[cancelled by the user]"
		}
		u.ToolContent = p.terminalContent(c, output)
		return []acp.SessionUpdate{u}
	}
	if d.Cancelled {
		u.ToolContent = append(append([]acp.ToolCallContent{}, c.content...), acp.TextContent("Cancelled by the user."))
		return []acp.SessionUpdate{u}
	}
	// raw is the tool's own text, the fallback content.
	raw := func() []acp.ToolCallContent {
		if items := textItems(d.Content); items != nil {
			return items
		}
		return []acp.ToolCallContent{}
	}
	var title *string
	w := new(card)
	switch v := tool.ResultView(c.args, in).(type) {
	case tools.GenericResult:
		u.ToolContent = textItems(v.Content)
		if len(u.ToolContent) == 0 {
			u.ToolContent = raw()
		}
		if v.Title != "" {
			t := p.title(v.Title, firstLocPath(v.Locations), c.rawPath)
			title = &t
		}
		u.Locations = p.locations(w, v.Locations)
	case tools.DiffResult:
		u.ToolContent = p.diffItems(w, v.Diffs)
		if v.Note != "" {
			u.ToolContent = append(u.ToolContent, acp.TextContent(v.Note))
		}
		if len(u.ToolContent) == 0 {
			u.ToolContent = raw()
		}
		if v.Title != "" {
			fallback := firstDiffPath(v.Diffs)
			if fallback == "" {
				fallback = c.rawPath
			}
			t := p.title(v.Title, firstLocPath(v.Locations), fallback)
			title = &t
		}
		u.Locations = p.locations(w, v.Locations)
	default:
		// nil (generic fallback), or a terminal result for a call that
		// was not shown as a terminal: the raw tool text.
		u.ToolContent = raw()
	}
	return w.list(u, title)
}

// terminalContent is a no-capability terminal card: the description and
// the output in a console fence longer than any backtick run inside.
func (p *Presenter) terminalContent(c *callState, output string) []acp.ToolCallContent {
	var items []acp.ToolCallContent
	if c.desc != "" {
		items = append(items, acp.TextContent(c.desc))
	}
	return append(items, acp.TextContent(tools.ConsoleFence(strings.TrimRight(output, "\n"))))
}

// appendTail appends s to tail and keeps at most limit bytes, cut at a
// UTF-8 character boundary.
func appendTail(tail []byte, s string, limit int) []byte {
	tail = append(tail, s...)
	if len(tail) <= limit {
		return tail
	}
	cut := len(tail) - limit
	for cut < len(tail) && tail[cut]&0xC0 == 0x80 {
		cut++
	}
	return append(tail[:0], tail[cut:]...)
}

// abs resolves a path against the session cwd (absolute paths are kept;
// "" gives the cwd).
func (p *Presenter) abs(path string) string {
	if path == "" {
		return p.view.Cwd
	}
	for _, m := range p.absMemo {
		if m.in == path {
			return m.out
		}
	}
	var out string
	if filepath.IsAbs(path) || p.view.Cwd == "" {
		out = filepath.Clean(path)
	} else {
		out = filepath.Join(p.view.Cwd, path)
	}
	p.absMemo[p.absNext].in, p.absMemo[p.absNext].out = path, out
	p.absNext = (p.absNext + 1) % len(p.absMemo)
	return out
}

// title makes a card title one line and shows rawPath (when absolute and
// inside the cwd, by path segment) relative to the cwd.
func (p *Presenter) title(title, rawPath, fallbackPath string) string {
	if rawPath == "" {
		rawPath = fallbackPath
	}
	title = oneLine(title)
	if rawPath == "" || p.view.Cwd == "" || !filepath.IsAbs(rawPath) {
		return title
	}
	rel, err := filepath.Rel(p.view.Cwd, rawPath)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return title
	}
	return strings.ReplaceAll(title, rawPath, rel)
}

// locations makes paths absolute and converts lines to the wire base (the
// one place where that happens). A single location is stored in w.
func (p *Presenter) locations(w *card, locs []tools.FileLocation) []acp.ToolCallLocation {
	if len(locs) == 0 {
		return nil
	}
	if len(locs) == 1 {
		l := locs[0]
		w.loc[0] = acp.ToolCallLocation{Path: p.abs(l.Path)}
		if l.Line > 0 {
			w.line = l.Line - 1 + p.view.LineBase
			w.loc[0].Line = &w.line
		}
		return w.loc[:]
	}
	out := make([]acp.ToolCallLocation, 0, len(locs))
	for _, l := range locs {
		loc := acp.ToolCallLocation{Path: p.abs(l.Path)}
		if l.Line > 0 {
			n := l.Line - 1 + p.view.LineBase
			loc.Line = &n
		}
		out = append(out, loc)
	}
	return out
}

// diffItems makes one diff item per change; a single one is stored in w.
func (p *Presenter) diffItems(w *card, diffs []tools.FileDiff) []acp.ToolCallContent {
	if len(diffs) == 0 {
		return nil
	}
	out := w.item[:0]
	if len(diffs) > 1 {
		out = make([]acp.ToolCallContent, 0, len(diffs))
	}
	for _, d := range diffs {
		out = append(out, acp.ToolCallContent{Type: "diff", Path: p.abs(d.Path), OldText: d.OldText, NewText: d.NewText})
	}
	return out
}

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

func firstLocPath(l []tools.FileLocation) string {
	if len(l) == 0 {
		return ""
	}
	return l[0].Path
}

func firstDiffPath(d []tools.FileDiff) string {
	if len(d) == 0 {
		return ""
	}
	return d[0].Path
}

// viewPath is the first path a call card names (its first location,
// else its first diff), "" for other cards.
func viewPath(view tools.ToolCallView) string {
	switch v := view.(type) {
	case tools.GenericCall:
		return firstLocPath(v.Locations)
	case tools.DiffCall:
		if p := firstLocPath(v.Locations); p != "" {
			return p
		}
		return firstDiffPath(v.Diffs)
	}
	return ""
}

// oneLine cuts s at its first line break, marking the cut with "…".
func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return strings.TrimRight(s[:i], " \t") + "…"
	}
	return s
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
