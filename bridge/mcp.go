package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/toolmcp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// This file holds the MCP servers the editor gives a session:
// what initialize advertises, starting them for session/new and
// session/load (startMCP; resume and fork call it too), the bound on how
// long an answer waits for them, stopping them, logging what their
// calls' cards are built from, and showing those cards again on replay.

// DefaultMCPWait is how long session/new and session/load wait, at
// most, for the session's MCP servers to be ready before answering
// (Config.MCPWait). Servers not ready by then keep starting: their tools
// join the session when they are, and each model request offers the
// tools there are at that moment.
const DefaultMCPWait = 2 * time.Second

// sourceMCP is the session.ToolDefinition source of MCP tools.
const sourceMCP = "mcp"

// mcpKey is the tools.Session value key of the session's *toolmcp.Set.
type mcpKey struct{}

// mcpState is every MCP server set this bridge started and has not
// closed, so that Close stops them all. The zero value is ready to use.
type mcpState struct {
	mu   sync.Mutex
	sets map[*toolmcp.Set]bool
}

func (m *mcpState) add(set *toolmcp.Set) {
	m.mu.Lock()
	if m.sets == nil {
		m.sets = map[*toolmcp.Set]bool{}
	}
	m.sets[set] = true
	m.mu.Unlock()
}

// close closes set and forgets it.
func (m *mcpState) close(set *toolmcp.Set) {
	set.Close()
	m.mu.Lock()
	delete(m.sets, set)
	m.mu.Unlock()
}

// closeAll closes every set, in parallel, and returns when their
// servers are gone.
func (m *mcpState) closeAll() {
	m.mu.Lock()
	sets := make([]*toolmcp.Set, 0, len(m.sets))
	for set := range m.sets {
		sets = append(sets, set)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, set := range sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.close(set)
		}()
	}
	wg.Wait()
}

// mcpCapabilities is what initialize advertises: stdio always (ACP
// requires it), and the two HTTP transports toolmcp connects to and
// tests: streamable HTTP and the old HTTP+SSE transport, which the Go
// SDK's client still speaks.
func mcpCapabilities() *acp.McpCapabilities {
	return &acp.McpCapabilities{HTTP: toolmcp.SupportsHTTP, SSE: toolmcp.SupportsSSE}
}

// mcpServers converts the editor's server list (ACP McpServer) to
// toolmcp's. An unknown type is kept: toolmcp refuses it with a notice
// naming the server.
func mcpServers(in []acp.McpServer) []toolmcp.Server {
	out := make([]toolmcp.Server, 0, len(in))
	for _, s := range in {
		srv := toolmcp.Server{Name: s.Name, Command: s.Command, Args: s.Args, URL: s.URL}
		switch s.Type {
		case acp.McpStdio:
			srv.Type = toolmcp.TransportStdio
		case acp.McpHTTP:
			srv.Type = toolmcp.TransportHTTP
		case acp.McpSSE:
			srv.Type = toolmcp.TransportSSE
		default:
			srv.Type = s.Type
		}
		for _, e := range s.Env {
			srv.Env = append(srv.Env, toolmcp.EnvVariable{Name: e.Name, Value: e.Value})
		}
		for _, h := range s.Headers {
			srv.Headers = append(srv.Headers, toolmcp.HTTPHeader{Name: h.Name, Value: h.Value})
		}
		out = append(out, srv)
	}
	return out
}

// startMCP starts the MCP servers the editor gave session s (in
// session/new, load, resume or fork) and returns at once; nil when there
// are none. Their tools join s's own registry (tools.SessionTools) as
// each server is ready, for s alone. The servers run in s's cwd and stop
// when s closes (tools.CloseSession: session/close, session/delete, a
// reload replacing s) or the bridge does (Close). A server that fails
// never fails the session: toolmcp logs it at warn, naming the server,
// the session and the reason, and the user gets a notice (tools.Notify:
// a `notice` update, or a log line where the editor has no notices),
// held back until the answer that opens s is written (openedMCP).
func (b *Bridge) startMCP(s *liveSession, servers []acp.McpServer) *toolmcp.Set {
	if len(servers) == 0 {
		return nil
	}
	ts := s.agent.Tools
	q := ts.Value(mcpNoticesKey{}, func() any { return &mcpNotices{ts: ts} }).(*mcpNotices)
	list := mcpServers(servers)
	for i := range list {
		if slices.Contains(b.cfg.MCPTrusted, list[i].Name) {
			list[i].Trusted = true
			b.log.Info("MCP server trusted: its read-only hints count, plan mode runs its read-only tools", "session", s.id, "server", list[i].Name)
		}
	}
	set := toolmcp.Start(list, toolmcp.Options{
		Registry:      tools.SessionTools(ts),
		Cwd:           s.cwd,
		Notice:        func(name, reason string) { q.post(mcpNotice(name, reason)) },
		Log:           b.log.With("session", s.id),
		ClientName:    "dsh-acp",
		ClientVersion: b.cfg.Version,
	})
	b.mcp.add(set)
	ts.Value(mcpKey{}, func() any { return set })
	tools.OnClose(ts, func() { b.mcp.close(set) })
	return set
}

// mcpNoticesKey is the tools.Session value key of its *mcpNotices.
type mcpNoticesKey struct{}

// mcpNotices passes a session's MCP notices to tools.Notify once open;
// until then (the answer opening the session is not written yet, and
// the editor does not know the session) it keeps them, in order.
type mcpNotices struct {
	ts     tools.Session
	mu     sync.Mutex
	open   bool
	queued []tools.Notice
}

func (q *mcpNotices) post(n tools.Notice) {
	q.mu.Lock()
	if !q.open {
		q.queued = append(q.queued, n)
		q.mu.Unlock()
		return
	}
	q.mu.Unlock()
	tools.Notify(q.ts, n)
}

// release sends the kept notices and lets later ones through.
func (q *mcpNotices) release() {
	q.mu.Lock()
	q.open = true
	ns := q.queued
	q.queued = nil
	q.mu.Unlock()
	for _, n := range ns {
		tools.Notify(q.ts, n)
	}
}

// mcpNotice is the notice for toolmcp's reason about server name ("did
// not start: the server process ended (exit status 3)"): the title
// names the server and what happened, the description says why.
func mcpNotice(name, reason string) tools.Notice {
	head, why, _ := strings.Cut(reason, ": ")
	return tools.Notice{Severity: tools.NoticeWarning, Title: fmt.Sprintf("MCP server %q %s", name, head), Description: why}
}

// openedMCP releases s's MCP notices once the answer to ctx's request
// (the one that opened s) is written; at once when ctx is not a
// request's.
func (b *Bridge) openedMCP(ctx context.Context, s *liveSession) {
	q, ok := s.agent.Tools.Value(mcpNoticesKey{}, nil).(*mcpNotices)
	if !ok {
		return
	}
	if !acp.Then(ctx, q.release) {
		q.release()
	}
}

// waitMCP waits for set's servers to finish starting, until
// Config.MCPWait (DefaultMCPWait when 0; negative: no wait) has passed
// since began, or ctx ends. Servers still starting then are logged and
// go on starting.
func (b *Bridge) waitMCP(ctx context.Context, set *toolmcp.Set, began time.Time) {
	if set == nil {
		return
	}
	bound := b.cfg.MCPWait
	if bound == 0 {
		bound = DefaultMCPWait
	}
	if bound > 0 {
		wctx, cancel := context.WithDeadline(ctx, began.Add(bound))
		err := set.Wait(wctx)
		cancel()
		if err == nil {
			return
		}
	}
	var starting []string
	for _, st := range set.Status() {
		if st.State == toolmcp.StateStarting {
			starting = append(starting, st.Name)
		}
	}
	if len(starting) > 0 {
		b.log.Info("MCP servers still starting; their tools join the session when ready", "servers", starting, "waitedMs", time.Since(began).Milliseconds())
	}
}

// stopMCP stops the MCP servers of tool state ts, if it has any (a
// session replaced by a reload: the reload starts the servers its own
// request names).
func (b *Bridge) stopMCP(ts tools.Session) {
	if set, ok := ts.Value(mcpKey{}, nil).(*toolmcp.Set); ok {
		b.mcp.close(set)
	}
}

// recordDefinition logs, beside a call of one of the session's MCP
// tools, what its cards are built from (session.ToolDefinition), so that
// session/load shows the same cards without the server. The permission
// step calls it first, so refused calls are covered too.
func (p *permState) recordDefinition(ex *tools.Exec) {
	set, ok := ex.Session.Value(mcpKey{}, nil).(*toolmcp.Set)
	if !ok {
		return
	}
	if c := ex.Call; c != nil && c.Matches(ex.Name, ex.Args) {
		if !c.SessionTool {
			return // a shared tool of that name is the one called
		}
	} else if _, shared := p.b.cfg.Tools.Get(ex.Name); shared {
		return
	}
	def, ok := set.Definition(ex.Name)
	if !ok {
		return
	}
	p.s.agent.Store.Emit(session.ToolDefinition{CallID: ex.CallID, Name: ex.Name, Source: sourceMCP, Definition: def})
}

// sessionLookup finds the tools a call of one session sees: the shared
// registry's, then the session's own (its MCP servers'); the live
// presenter and the permission card look tools up through it.
type sessionLookup struct {
	reg *tools.Registry
	s   tools.Session
}

func (l sessionLookup) Get(name string) (tools.Tool, bool) { return l.reg.Lookup(l.s, name) }

// replayLookup finds the tools of a replayed call: the shared registry's,
// else a tool rebuilt from the call's logged ToolDefinition (never the
// session's live tools: replay neither waits for nor asks the servers,
// and shows the cards of the tool as it was when the call ran). A call
// of a session tool with no definition logged (one that never reached
// the execute chain) shows the fallback card. Set call to the call id of
// each ToolCall before presenting it.
type replayLookup struct {
	reg  *tools.Registry
	defs map[string]session.ToolDefinition // by call id
	call string
}

// newReplayLookup collects the definitions logged in events.
func newReplayLookup(reg *tools.Registry, events []session.Event) *replayLookup {
	l := &replayLookup{reg: reg, defs: map[string]session.ToolDefinition{}}
	for _, ev := range events {
		if d, ok := ev.Data.(session.ToolDefinition); ok {
			l.defs[d.CallID] = d
		}
	}
	return l
}

// next is called with each replayed event before it is presented.
func (l *replayLookup) next(ev session.Event) {
	if c, ok := ev.Data.(session.ToolCall); ok {
		l.call = c.CallID
	}
}

func (l *replayLookup) Get(name string) (tools.Tool, bool) {
	if t, ok := l.reg.Get(name); ok {
		return t, true
	}
	d, ok := l.defs[l.call]
	if !ok || d.Name != name {
		return tools.Tool{}, false
	}
	switch d.Source {
	case sourceMCP:
		if t, err := toolmcp.ReplayTool(name, json.RawMessage(d.Definition)); err == nil {
			return t, true
		}
	}
	return tools.Tool{}, false
}
