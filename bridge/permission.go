package bridge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/present"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// The permission options offered to the user (ACP PermissionOption).
var permissionOptions = []acp.PermissionOption{
	{OptionID: "allow-once", Name: "Allow", Kind: acp.AllowOnce},
	{OptionID: "allow-always", Name: "Always allow", Kind: acp.AllowAlways},
	{OptionID: "reject-once", Name: "Reject", Kind: acp.RejectOnce},
	{OptionID: "reject-always", Name: "Always reject", Kind: acp.RejectAlways},
}

// optionsFor are the options of c's request: permissionOptions, with the
// allow-always option of a command naming the prefixes it remembers
// ("Always allow `go test`, `make test`"), or that it remembers none.
func optionsFor(c permission.Call) []acp.PermissionOption {
	if c.Class != tools.ClassExecute {
		return permissionOptions
	}
	opts := slices.Clone(permissionOptions)
	name := "Always allow (remembers no command)"
	if r := permission.RememberedPrefixes(c); len(r) > 0 {
		name = "Always allow `" + strings.Join(r, "`, `") + "`"
	}
	for i := range opts {
		if opts[i].OptionID == "allow-always" {
			opts[i].Name = name
		}
	}
	return opts
}

// permState is a session's permission state: its mode, the answers to
// remember, and the lock that keeps one request to the user at a time.
type permState struct {
	b    *Bridge
	s    *liveSession
	mem  *permission.Memory
	mu   sync.Mutex // guards mode and rules
	mode string
	// rules, when set, is the mode whose rules the running turn follows
	// instead of mode's (a /review turn runs under plan's); the editor
	// still shows mode.
	rules string
	ask   sync.Mutex // one permission request at a time
	// asks are the requests waiting for the editor in this session and
	// the sessions sharing its asks (permwait.go).
	asks *permAsks
}

// permKey is the key of a session's permState in its tool session
// (set by buildSession; a child's tool session hands the parent's
// over). The state travels with the tool session rather than being
// looked up in the bridge's session table by id: a call still running
// for a session that was closed, or replaced by a load of the same id,
// keeps the rules it started under, where a lookup by id would find
// the other session's, or none and let the call through unasked.
type permKey struct{}

func (p *permState) currentMode() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

func (p *permState) setMode(m string) {
	p.mu.Lock()
	p.mode = m
	p.mu.Unlock()
}

// rulesMode is the mode whose rules decide the calls now: the turn's
// (runUnder), else the session's.
func (p *permState) rulesMode() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rules != "" {
		return p.rules
	}
	return p.mode
}

// runUnder makes the calls follow mode's rules ("" for the session's
// own) until the returned function is called (at the turn's end).
func (p *permState) runUnder(mode string) (restore func()) {
	p.mu.Lock()
	p.rules = mode
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.rules = ""
		p.mu.Unlock()
	}
}

// call turns a tool call into what the policy judges: the class the tool
// declares, the paths it touches and, for a command tool, the command, as
// the tool itself reads them from its arguments (tools.Call.Access, the
// arguments Execute gets). A tool that declares no access, or arguments it
// would refuse, touch nothing here: such calls are judged by their class
// alone (and refused arguments never run).
func (p *permState) call(tc *tools.Call) permission.Call {
	c := permission.Call{Tool: tc.Name, Cwd: p.s.cwd, Dirs: p.s.dirs}
	if !tc.Found {
		return c
	}
	c.Class = tc.Tool.Class
	if acc, ok := tc.Access(); ok {
		for _, path := range acc.Paths {
			if path != "" {
				c.Paths = append(c.Paths, path)
			}
		}
		c.Command, c.Dir = acc.Command, acc.Dir
		c.Unsandboxed = acc.Unsandboxed
		c.Host = acc.Host
	}
	return c
}

// PermissionError is the error a refused tool call returns (the model
// sees its message).
const PermissionError = "PermissionError"

// Permission is the permission step of the tools execute chain (a
// tools.Middleware; the wiring installs it with
// cfg.Tools.Use(b.Permission)): it lets a call run, refuses it (plan
// mode, a remembered reject) or asks the user with
// `session/request_permission`, showing the card the user would see (the
// tool's Preview when it has one). The preview of a call that runs or
// asks also goes to ex.OnPreview before it runs or the user is asked, so
// the card shows the real change from the start (a refused call is not
// previewed: nothing of it runs, not even the read of its file). Calls
// without a session of this bridge pass through.
func (b *Bridge) Permission(ctx context.Context, ex *tools.Exec, next tools.Next) tools.Result {
	if ex.Session == nil {
		return next(ctx, ex)
	}
	p, _ := ex.Session.Value(permKey{}, nil).(*permState)
	if p != nil {
		p.recordDefinition(ex)
	}
	call := b.cfg.Tools.CallOf(ex)
	if p == nil || !call.Found {
		// Nothing to ask about: an unknown tool fails in the registry
		// without running anything.
		return next(ctx, ex)
	}
	c := p.call(call)
	if r, done := p.decided(ctx, call, ex, next, c); done {
		return r
	}
	p.ask.Lock()
	defer p.ask.Unlock()
	// The answer to an earlier request may cover this call now.
	if r, done := p.decided(ctx, call, ex, next, c); done {
		return r
	}
	var preview tools.ToolCallView
	if call.HasPreview() {
		v, err := call.Preview(ctx, ex)
		if err != nil {
			// The call cannot succeed (e.g. old_string not found, a file
			// never read): say so now instead of asking the user to
			// approve a change that will not happen. Nothing runs.
			return tools.ErrorResult(ex.CallID, err)
		}
		preview = v
		if v != nil && ex.OnPreview != nil {
			ex.OnPreview(v)
		}
	}
	card := present.PermissionCard(p.s.view, call, preview)
	explain(&card, p.rulesMode(), c, p.mem.CommandNotes(c))
	return b.ask(ctx, p, ex, next, c, card)
}

// decided runs or refuses a call the session's rules decide without
// asking (done true), or reports that the user must be asked.
func (p *permState) decided(ctx context.Context, call *tools.Call, ex *tools.Exec, next tools.Next, c permission.Call) (tools.Result, bool) {
	d, why := p.mem.Decide(p.rulesMode(), c)
	switch d {
	case permission.Allow:
		return runPreviewed(ctx, call, ex, next), true
	case permission.Refuse:
		return tools.ErrorResult(ex.CallID, &tools.Error{Name: PermissionError, Code: "PERMISSION_REFUSED", Message: "not allowed: " + why}), true
	case permission.Ask:
	}
	return tools.Result{}, false
}

// ask puts card to the user (on the child's session for a subagent's
// call, or naming the child on the parent's) and acts on the answer: run,
// reject, remember, or end the turn when the request was cancelled. An
// "always" answer also decides the other waiting requests it covers.
func (b *Bridge) ask(ctx context.Context, p *permState, ex *tools.Exec, next tools.Next, c permission.Call, card acp.ToolCallUpdate) tools.Result {
	// A cancel of a child's request ends that child only.
	sid, cancelTurn, answered := p.s.id, p.s.cancelTurn, func() {}
	if child := childOf(ex.Session); child != nil {
		var wait func() func()
		sid, wait = child.permTarget(&card)
		cancelTurn, answered = child.cancelRun, wait()
	}
	out := p.asks.request(ctx, p, c, acp.RequestPermissionRequest{SessionID: sid, ToolCall: card, Options: optionsFor(c)})
	answered()
	if out.covered {
		// Another request's "always" answer covered this call and
		// withdrew it from the editor.
		if out.decision == permission.Allow {
			return next(ctx, ex)
		}
		return rejected(ex)
	}
	res, err := out.res, out.err
	if err != nil || res.Outcome.Outcome != acp.OutcomeSelected {
		// Cancelled (or the request failed because the turn was
		// cancelled): nothing runs and the turn ends cancelled.
		if err != nil && ctx.Err() == nil {
			b.log.Warn("permission request failed; treating it as cancelled", "err", err)
		}
		cancelTurn()
		return tools.ErrorResult(ex.CallID, errors.New("cancelled by the user"))
	}
	switch res.Outcome.OptionID {
	case "allow-always":
		p.remember(c, true)
		p.asks.cover(p.mem)
		return next(ctx, ex)
	case "allow-once":
		return next(ctx, ex)
	case "reject-always":
		p.remember(c, false)
		p.asks.cover(p.mem)
	case "reject-once":
	default:
		b.log.Warn("unknown permission option; treating it as a reject", "optionId", res.Outcome.OptionID)
	}
	return rejected(ex)
}

// rejected is the result of a call the user rejected.
func rejected(ex *tools.Exec) tools.Result {
	return tools.ErrorResult(ex.CallID, &tools.Error{Name: PermissionError, Code: "PERMISSION_REJECTED",
		Message: fmt.Sprintf("the user rejected this %s call; do not retry it unchanged, ask the user how to proceed", ex.Name)})
}

// runPreviewed runs an allowed call, first giving its preview to
// ex.OnPreview (when both are there). A preview error means the call
// will fail on its own: it runs and says why.
func runPreviewed(ctx context.Context, call *tools.Call, ex *tools.Exec, next tools.Next) tools.Result {
	if call.HasPreview() && ex.OnPreview != nil {
		if v, err := call.Preview(ctx, ex); err == nil && v != nil {
			ex.OnPreview(v)
		}
	}
	return next(ctx, ex)
}

// remember stores an "always" answer in the session's memory and logs
// what was stored (session.PermissionRule), so session/load restores it.
func (p *permState) remember(c permission.Call, allow bool) {
	r := p.mem.Remember(c, allow)
	p.s.agent.Store.Emit(session.PermissionRule{Tool: r.Tool, Allow: r.Allow, Paths: r.Paths, Prefixes: r.Prefixes, Hosts: r.Hosts, Whole: r.Whole})
	if err := p.s.agent.Store.Flush(); err != nil {
		p.b.log.Warn("could not flush the session log", "session", p.s.id, "err", err)
	}
}

// explain adds to a permission card why the call asks on its own: the
// real absolute paths it touches outside the project (also as the
// card's locations, replacing the ones its arguments gave, which may
// read "..") and the files it changes that run code; then the command's
// notes (permission.Memory.CommandNotes: what in it runs other code, so
// that no remembered prefix covers it).
func explain(u *acp.ToolCallUpdate, mode string, c permission.Call, commandNotes []string) {
	notes := permission.Explain(mode, c)
	if len(notes) == 0 && len(commandNotes) == 0 {
		return
	}
	var locs []acp.ToolCallLocation
	var lines []string
	for _, n := range notes {
		lines = append(lines, n.Text)
		if n.Outside {
			locs = append(locs, acp.ToolCallLocation{Path: n.Path})
		}
	}
	if len(locs) > 0 {
		u.Locations = locs
	}
	lines = append(lines, commandNotes...)
	u.Content = append(u.Content, acp.TextContent(strings.Join(lines, "\n")))
}

// modeState is what session/new and session/load answer about modes.
func modeState(current string) *acp.SessionModeState {
	st := &acp.SessionModeState{CurrentModeID: current}
	for _, m := range permission.Modes {
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{ID: m.ID, Name: m.Name, Description: m.Description})
	}
	return st
}

// SetSessionMode implements acp.ModeSetter: the session's permission
// mode. The change is logged (session/load restores it) and, after the
// answer, announced on the other surface: a config_option_update with
// the whole option list (Zed reads the mode from the options).
func (b *Bridge) SetSessionMode(ctx context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	s := b.session(p.SessionID)
	if s == nil {
		return acp.SetSessionModeResponse{}, b.unknownSession(p.SessionID)
	}
	if !permission.ValidMode(p.ModeID) {
		return acp.SetSessionModeResponse{}, acp.InvalidParams("Invalid params: unknown mode %q", p.ModeID)
	}
	if b.changeMode(s, p.ModeID) {
		announce := func() { b.announceOptions(s) }
		if !acp.Then(ctx, announce) {
			announce()
		}
	}
	return acp.SetSessionModeResponse{}, nil
}
