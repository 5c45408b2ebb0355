package bridge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/agent"
	"github.com/dsh-acp/dsh-acp/present"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/toolsub"
)

// DefaultSubagentParallel is how many children of one session run at
// once when Config.SubagentParallel is 0.
const DefaultSubagentParallel = 4

// DefaultSubagentDepth is how deep children may nest when
// Config.SubagentDepth is 0: children of the session, no grandchildren.
const DefaultSubagentDepth = 1

// subagentState is the children this bridge has run, by child session
// id, kept until their parent session closes (an id the editor sends for
// a child is then answered as a child's).
type subagentState struct {
	mu       sync.Mutex
	children map[string]*childRun
}

func (st *subagentState) add(c *childRun) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.children == nil {
		st.children = map[string]*childRun{}
	}
	st.children[c.id] = c
}

func (st *subagentState) get(id string) *childRun {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.children[id]
}

// forget drops the children of the parent session id.
func (st *subagentState) forget(parent string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for id, c := range st.children {
		if c.parent.id == parent {
			delete(st.children, id)
		}
	}
}

// subRunner runs the children of one live session (toolsub.Runner); the
// children's own calls reach it too (their tool sessions pass every
// value through to the parent's), so a grandchild is bounded by the
// depth the same way. sem bounds the children running at once.
type subRunner struct {
	b   *Bridge
	s   *liveSession
	sem chan struct{}
}

func (b *Bridge) newSubRunner(s *liveSession) *subRunner {
	n := b.cfg.SubagentParallel
	if n <= 0 {
		n = DefaultSubagentParallel
	}
	return &subRunner{b: b, s: s, sem: make(chan struct{}, n)}
}

func (b *Bridge) subagentDepth() int {
	if b.cfg.SubagentDepth > 0 {
		return b.cfg.SubagentDepth
	}
	return DefaultSubagentDepth
}

// Run implements toolsub.Runner: one child turn for the call ex.
func (r *subRunner) Run(ctx context.Context, ex *tools.Exec, req toolsub.Request) (toolsub.Outcome, error) {
	depth, caller, callerTools := 0, r.s.agent, tools.Session(r.s.agent.Tools)
	if ct, ok := ex.Session.(*childTools); ok {
		depth, caller, callerTools = ct.depth, ct.run.agent, ct
	}
	if max := r.b.subagentDepth(); depth >= max {
		return toolsub.Outcome{}, fmt.Errorf("a subagent cannot start subagents of its own (the depth limit is %d)", max)
	}
	if depth == 0 {
		// Only the session's own children count against the bound: a
		// child waiting for its children must not hold a slot they need.
		select {
		case r.sem <- struct{}{}:
			defer func() { <-r.sem }()
		case <-ctx.Done():
			return toolsub.Outcome{StopReason: session.EndCancelled}, nil
		}
	}
	c := r.b.newChild(r.s, caller, callerTools, depth+1, ex, req)
	return c.run(ctx, req), nil
}

// childRun is one child session: its tools, its agent session (in
// memory), and how its updates reach the editor.
type childRun struct {
	b      *Bridge
	id     string
	parent *liveSession   // the top session: its connection, view, permissions
	caller *agent.Session // the session whose call started the child (it pays)
	agent  *agent.Session
	ex     *tools.Exec // the call that started it (its card on the caller)
	title  string
	// announcedOn is the session an ended or replayed child was
	// announced on.
	announcedOn string
	// shown: the editor advertised `subagents`, so the child is announced
	// and its updates go on its own session id; else its tool calls are
	// summed up, one line each, in the card of ex.
	shown bool
	pres  *present.Presenter

	mu     sync.Mutex
	cancel context.CancelFunc
	order  []string          // the child's call ids, in order
	lines  map[string]string // their titles and statuses
	titles map[string]string
}

// childTools is a child's tool session: its own id, everything else
// (cwd, file observations, permission state, MCP tools, the editor) the
// caller's.
type childTools struct {
	id     string
	parent tools.Session
	depth  int
	run    *childRun
}

func (c *childTools) ID() string  { return c.id }
func (c *childTools) Cwd() string { return c.parent.Cwd() }
func (c *childTools) Value(key any, init func() any) any {
	return c.parent.Value(key, init)
}

// childOf returns the child whose tool session s is, nil for another.
func childOf(s tools.Session) *childRun {
	if ct, ok := s.(*childTools); ok {
		return ct.run
	}
	return nil
}

// newChild builds the child of a call: a fresh store, or for a fork the
// caller's events before its current turn; the caller's settings (its
// model unless the subagent_model option names another).
func (b *Bridge) newChild(top *liveSession, caller *agent.Session, callerTools tools.Session, depth int, ex *tools.Exec, req toolsub.Request) *childRun {
	b.mu.Lock()
	caps := b.caps
	b.mu.Unlock()
	c := &childRun{b: b, id: newSessionID(), parent: top, caller: caller, ex: ex, title: toolsub.Title(req.Description),
		shown: caps.Subagents != nil, lines: map[string]string{}, titles: map[string]string{}}
	ct := &childTools{id: c.id, parent: callerTools, depth: depth, run: c}
	c.pres = present.NewPresenter(top.view, sessionLookup{b.cfg.Tools, ct})
	var store *session.Store
	if req.Fork {
		store = session.NewLoggedStore(beforeTurn(caller.Store.Events()), nil, c.event)
	} else {
		store = session.NewStore(c.event)
	}
	c.agent = agent.NewChildSession(store, ct)
	st := caller.Settings()
	if m := top.configOf().SubagentModel; m != "" {
		st.Model = m
	}
	c.agent.SetSettings(st)
	if depth >= b.subagentDepth() {
		c.agent.Hide(toolsub.Names...)
	}
	return c
}

// beforeTurn is a session's events before its current (last) turn.
func beforeTurn(evs []session.Event) []session.Event {
	for i := len(evs) - 1; i >= 0; i-- {
		if _, ok := evs[i].Data.(session.TurnStart); ok {
			return evs[:i]
		}
	}
	return evs
}

// run announces the child, runs its turn and reports how it ended: its
// final state after all its updates, its cost added to the caller's.
func (c *childRun) run(ctx context.Context, req toolsub.Request) toolsub.Outcome {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.mu.Lock()
	c.cancel = cancel
	c.mu.Unlock()
	c.b.subs.add(c)
	start := session.SubagentStart{Parent: c.parentID(), CallID: c.ex.CallID, Title: c.title,
		Description: Title([]tools.Content{tools.Text(req.Prompt)}), Cwd: c.parent.cwd}
	c.parent.agent.Store.Emit(session.Subagent{Child: c.id, Start: &start})
	if c.shown {
		c.b.sendTo(start.Parent, announcement(c.id, start))
		c.b.sendTo(start.Parent, childCard(c.id, start))
	}
	from := c.agent.Store.Len()
	out := c.b.cfg.Agent.RunTurn(ctx, c.agent, agent.Input{Prompt: []tools.Content{tools.Text(req.Prompt)}})
	c.caller.AddSpent(c.agent.Spent())
	text, usage := lastText(c.agent.Store, from), out.Usage
	res := toolsub.Outcome{SessionID: c.id, StopReason: out.StopReason, Err: out.Err, Text: text}
	if !c.shown {
		c.mu.Lock()
		res.Lines = c.compactLines()
		c.mu.Unlock()
	}
	end := session.SubagentEnd{StopReason: out.StopReason, Usage: usage}
	if out.Err != nil {
		end.StopReason = session.EndError
	}
	c.parent.agent.Store.Emit(session.Subagent{Child: c.id, End: &end})
	if c.shown {
		c.announce(acp.SubagentUpdate{SessionID: c.id, State: idleState(end)})
	}
	// The ended child stays known by its id only: its events (a fork's
	// copy of the parent's history among them) are not kept.
	c.b.subs.add(&childRun{b: c.b, id: c.id, parent: c.parent, announcedOn: start.Parent})
	return res
}

// announcement is the first subagent_update of a child: its title,
// description, cwd, cancel capability and the running state.
func announcement(child string, st session.SubagentStart) acp.SubagentUpdate {
	u := acp.SubagentUpdate{SessionID: child, Title: &st.Title, Capabilities: &acp.SubagentSessionCapabilities{Cancel: &acp.Empty{}},
		State: &acp.SubagentState{State: acp.SubagentRunning}, Cwd: st.Cwd}
	if st.Description != "" {
		u.Description = &st.Description
	}
	return u
}

// childCard names the child on the card of the call that started it
// (its _meta, in the shape Zed reads), once the child is announced.
func childCard(child string, st session.SubagentStart) acp.ToolCallUpdate {
	return acp.ToolCallUpdate{ToolCallID: st.CallID, Meta: &acp.ToolCallMeta{SubagentSessionInfo: &acp.SubagentSessionInfo{SessionID: child}}}
}

// idleState is a child's final state: idle with its stop reason and
// usage (counted as a prompt answer's is).
func idleState(end session.SubagentEnd) *acp.SubagentState {
	return &acp.SubagentState{State: acp.SubagentIdle, StopReason: acp.StopReason(end.StopReason), Usage: promptUsage(end.Usage)}
}

// lastText is the text of the last message of the child's turn, the
// events from Seq from on ("" when it gave none).
func lastText(st *session.Store, from int) string {
	text := ""
	st.Backward(func(ev session.Event) bool {
		if ev.Seq < int64(from) {
			return false
		}
		if m, ok := ev.Data.(session.AssistantMessage); ok {
			text = m.Text
			return false
		}
		return true
	})
	return text
}

// announce sends a subagent_update about c on its parent's session.
func (c *childRun) announce(u acp.SubagentUpdate) {
	c.b.sendTo(c.parentID(), u)
}

// parentID is the session the child's announcements go on: its caller's
// (the top session, or the child that started it).
func (c *childRun) parentID() string {
	if p := childOf(c.ex.Session); p != nil {
		return p.id
	}
	return c.parent.id
}

// sendTo writes one update on session id.
func (b *Bridge) sendTo(id string, u acp.Update) {
	if err := b.client.SessionUpdate(context.Background(), acp.SessionNotification{SessionID: id, Update: u}); err != nil {
		b.log.Debug("could not send a session update", "err", err)
	}
}

// event passes one event of the child on: its updates on the child's id
// when the editor shows children, else into the compact view.
func (c *childRun) event(ev session.Event) {
	if ev.Seq >= 0 {
		c.parent.agent.Store.Emit(session.Subagent{Child: c.id, Event: &ev})
	}
	ups := c.pres.Updates(ev)
	if c.shown {
		for _, u := range ups {
			c.b.sendTo(c.id, u)
		}
		return
	}
	c.mu.Lock()
	changed := c.compact(ups)
	view := ""
	if changed {
		view = strings.Join(c.compactLines(), "\n")
	}
	c.mu.Unlock()
	if changed {
		c.ex.Report(tools.Progress{Card: view})
	}
}

// compact folds the child's tool cards into one line per call (c.mu
// held); it reports whether a line changed.
func (c *childRun) compact(ups []acp.Update) bool {
	changed := false
	set := func(id, status string) {
		line := "- " + c.titles[id] + " (" + status + ")"
		if _, seen := c.lines[id]; !seen {
			c.order = append(c.order, id)
		}
		if c.lines[id] != line {
			c.lines[id], changed = line, true
		}
	}
	for _, u := range ups {
		switch v := u.(type) {
		case acp.ToolCall:
			c.titles[v.ToolCallID] = v.Title
			set(v.ToolCallID, string(v.Status))
		case acp.ToolCallUpdate:
			if v.Title != nil {
				c.titles[v.ToolCallID] = *v.Title
			}
			if v.Status != "" || v.Title != nil {
				status := string(v.Status)
				if status == "" {
					status = statusOf(c.lines[v.ToolCallID])
				}
				set(v.ToolCallID, status)
			}
		default:
			// Only the tool cards make lines; the child's answer comes
			// with the result.
		}
	}
	return changed
}

// statusOf reads the status back from a compact line.
func statusOf(line string) string {
	i := strings.LastIndex(line, " (")
	if i < 0 {
		return ""
	}
	return strings.TrimSuffix(line[i+2:], ")")
}

// compactLines are the lines in call order (c.mu held).
func (c *childRun) compactLines() []string {
	out := make([]string, 0, len(c.order))
	for _, id := range c.order {
		out = append(out, c.lines[id])
	}
	return out
}

// cancelRun cancels the child's turn (session/cancel on its id).
func (c *childRun) cancelRun() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
}

// permTarget is where a permission request of the child goes: its own
// session when the editor shows children, else the parent's with the
// card's title naming the child; wait announces that the child waits for
// the user until the returned function is called.
func (c *childRun) permTarget(card *acp.ToolCallUpdate) (sessionID string, wait func() func()) {
	if !c.shown {
		t := c.title + ": "
		if card.Title != nil {
			t += *card.Title
		}
		card.Title = &t
		return c.parent.id, func() func() { return func() {} }
	}
	return c.id, func() func() {
		c.announce(acp.SubagentUpdate{SessionID: c.id, State: &acp.SubagentState{State: acp.SubagentRequiresAction}})
		return func() {
			c.announce(acp.SubagentUpdate{SessionID: c.id, State: &acp.SubagentState{State: acp.SubagentRunning}})
		}
	}
}

// childError is the answer to a session method given a child's id: the
// child is not a session of its own.
func childError(c *childRun) error {
	return &acp.Error{Code: acp.CodeInvalidParams, Data: map[string]string{"sessionId": c.id, "parentSessionId": c.parent.id},
		Message: fmt.Sprintf("Invalid params: session %s is a subagent of session %s; use the parent session", c.id, c.parent.id)}
}

// subagentChoices are the subagent_model option's models: those of the
// model option (with the children's current model when missing).
func (b *Bridge) subagentChoices(v configState) []acp.SessionConfigSelectOption {
	models, _ := b.modelChoices(v.Model)
	if v.SubagentModel != "" && !slices.ContainsFunc(models, func(o acp.SessionConfigSelectOption) bool { return o.Value == v.SubagentModel }) {
		models = append(models, acp.SessionConfigSelectOption{Value: v.SubagentModel, Name: v.SubagentModel})
	}
	return models
}

// subagentModelOption is the subagent_model option: "same" (the
// session's model), then models.
func subagentModelOption(v configState, models []acp.SessionConfigSelectOption) acp.SessionConfigOption {
	cur := v.SubagentModel
	if cur == "" {
		cur = SubagentModelSame
	}
	opts := append([]acp.SessionConfigSelectOption{{Value: SubagentModelSame, Name: "Same as the session",
		Description: "Subagents use the session's model"}}, models...)
	return acp.SessionConfigOption{ID: ConfigSubagentModel, Name: "Subagent model",
		Description: "The model of the subagents the session starts", Select: &acp.SessionConfigSelect{CurrentValue: cur, Options: opts}}
}

// unknownSession is the error for a session id that is not a session
// here: -32602 naming the parent for a child the bridge knows (a child
// is no session of its own: it cannot be prompted, loaded, resumed,
// forked, closed or configured), else -32002.
func (b *Bridge) unknownSession(id string) error {
	if c := b.subs.get(id); c != nil {
		return childError(c)
	}
	return unknownSession(id)
}
