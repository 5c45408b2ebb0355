// This file makes and finds the bridge's live sessions: session/new, the
// session table, closing, and the errors for ids that are not here.

package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/agent"
	"github.com/dsh-acp/dsh-acp/checkpoint"
	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/present"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/toolsub"
)

// NewSession implements acp.Agent: a session in cwd (an existing
// absolute directory) with its additional directories (existing
// absolute directories, kept in the log's header), in the configured
// mode, model and thinking level, answered with its modes and config
// options (after waiting up to ModelsWait for the endpoint's model list).
func (b *Bridge) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	if p.Cwd == "" || !filepath.IsAbs(p.Cwd) {
		return acp.NewSessionResponse{}, acp.InvalidParams("Invalid params: cwd must be an absolute path: %q", p.Cwd)
	}
	if st, err := os.Stat(p.Cwd); err != nil || !st.IsDir() {
		return acp.NewSessionResponse{}, acp.InvalidParams("Invalid params: cwd is not a directory: %q", p.Cwd)
	}
	dirs, err := checkDirectories(p.AdditionalDirectories)
	if err != nil {
		return acp.NewSessionResponse{}, err
	}
	sys, given, err := clientPrompt(p.SystemPrompt)
	if err != nil {
		return acp.NewSessionResponse{}, err
	}
	began := time.Now()
	id := newSessionID()
	cwd := filepath.Clean(p.Cwd)
	s := b.buildSession(id, cwd, dirs, b.newStore(id, cwd, dirs))
	b.register(s)
	// The log exists before the answer: another process of the same
	// client may load or list the session next (acpx does).
	if l := s.agent.Store.Log(); l != nil {
		if err := l.Create(); err != nil {
			b.log.Warn("the session log could not be written; the session goes on in memory", "session", id, "err", err)
		}
	}
	if given {
		b.setSystemPrompt(s, sys)
	}
	// The servers start while the model list is awaited; MCPWait counts
	// from the request's start, so the two waits overlap.
	set := b.startMCP(s, p.McpServers)
	b.cfg.Models.Wait(ctx, b.cfg.ModelsWait)
	b.waitMCP(ctx, set, began)
	b.opened(ctx, s)
	return acp.NewSessionResponse{SessionID: s.id, Modes: modeState(s.perm.currentMode()), ConfigOptions: b.optionsAnswered(ctx, s)}, nil
}

// openSession registers a live session without additional directories
// with the current capability snapshot; a nil store is a new one (logged
// under StateDir).
func (b *Bridge) openSession(id, cwd string, store *session.Store) *liveSession {
	if store == nil {
		store = b.newStore(id, cwd, nil)
	}
	s := b.buildSession(id, cwd, nil, store)
	b.register(s)
	return s
}

// register makes s the live session of its id: its store's events go to
// the editor through s's presenter.
func (b *Bridge) register(s *liveSession) {
	s.agent.Store.SetSink(func(ev session.Event) { b.send(s, ev) })
	b.mu.Lock()
	b.sessions[s.id] = s
	b.mu.Unlock()
}

// buildSession makes a session over store with the current capability
// snapshot and the additional directories dirs, not yet registered.
func (b *Bridge) buildSession(id, cwd string, dirs []string, store *session.Store) *liveSession {
	b.mu.Lock()
	caps, info := b.caps, b.clientInfo
	b.mu.Unlock()
	view := present.View{Cwd: cwd, TerminalOutput: caps.TerminalOutput(), LineBase: b.lineBase(info),
		Compaction: caps.Session != nil && caps.Session.Compaction != nil, Resolve: permission.Resolve}
	s := &liveSession{id: id, cwd: cwd, dirs: dirs, view: view,
		notices: caps.Session != nil && caps.Session.Notices != nil}
	ts := tools.NewSession(id, cwd)
	s.pres = present.NewPresenter(view, sessionLookup{b.cfg.Tools, ts})
	tools.SetAdditionalDirectories(ts, dirs)
	tools.SetNotifier(ts, func(n tools.Notice) { b.notify(s, n) })
	s.perm = &permState{b: b, s: s, mem: permission.NewMemory(), mode: b.cfg.Mode, asks: &permAsks{}}
	ts.Value(permKey{}, func() any { return s.perm })
	tools.SetAsker(ts, &asker{b: b, s: s, elicit: caps.Elicitation != nil && caps.Elicitation.Form != nil})
	if caps.FS != nil && (caps.FS.ReadTextFile || caps.FS.WriteTextFile) {
		tools.SetEditor(ts, &editor{client: b.client, sessionID: id, caps: *caps.FS})
	}
	s.agent = agent.NewSession(store, ts)
	toolsub.SetRunner(ts, b.newSubRunner(s))
	s.ckpt = checkpoint.New(cwd, id, b.cfg.StateDir, b.cfg.AgentCmd)
	s.agent.Checkpoints = s.ckpt
	b.applyConfig(s, b.defaultConfig())
	return s
}

// lineBase chooses the base of locations[].line for a client.
func (b *Bridge) lineBase(info *acp.Implementation) int {
	switch b.cfg.LocationLineBase {
	case 0, 1:
		return b.cfg.LocationLineBase
	}
	if info != nil && strings.EqualFold(info.Name, "zed") {
		return 0
	}
	return 1
}

// send writes the updates for one event of s.
func (b *Bridge) send(s *liveSession, ev session.Event) {
	for _, u := range s.pres.Updates(ev) {
		if err := b.client.SessionUpdate(context.Background(), acp.SessionNotification{SessionID: s.id, Update: u}); err != nil {
			b.log.Debug("could not send a session update", "err", err)
		}
	}
}

func (b *Bridge) session(id string) *liveSession {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sessions[id]
}

// CloseSession implements acp.SessionCloser: the session's turn is
// cancelled, its tool state (background commands) closed and its log
// released; it can be loaded or resumed again.
func (b *Bridge) CloseSession(_ context.Context, p acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	s := b.detach(p.SessionID)
	if s == nil {
		return acp.CloseSessionResponse{}, b.unknownSession(p.SessionID)
	}
	b.releaseIfIdle(s)
	return acp.CloseSessionResponse{}, nil
}

// liveSessions is a snapshot of the sessions open here, in no order.
func (b *Bridge) liveSessions() []*liveSession {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*liveSession, 0, len(b.sessions))
	for _, s := range b.sessions {
		out = append(out, s)
	}
	return out
}

// detach takes session id out of the table and stops its work: the
// running turn (and the prompts waiting behind it) cancelled, a title
// request cancelled, its children forgotten, its tools closed (background
// commands and MCP servers stopped). It returns the session, nil when it
// is not open here. Close, archive and delete share it.
func (b *Bridge) detach(id string) *liveSession {
	b.mu.Lock()
	s := b.sessions[id]
	delete(b.sessions, id)
	b.mu.Unlock()
	if s != nil {
		s.cancelTurn()
		s.cancelTitle()
		b.subs.forget(s.id)
		tools.CloseSession(s.agent.Tools)
	}
	return s
}

// notHere is the error for a session id this process does not have open:
// lockedError when another process holds its log (it is open there),
// else unknownSession.
func (b *Bridge) notHere(id string) error {
	if c := b.subs.get(id); c != nil {
		return childError(c)
	}
	if b.cfg.StateDir != "" {
		if path, err := session.Find(b.cfg.StateDir, id); err == nil {
			if pid, held := session.Holder(path); held {
				return lockedError(id, &session.LockedError{Path: path, PID: pid})
			}
		}
	}
	return unknownSession(id)
}

func unknownSession(id string) error {
	return &acp.Error{Code: acp.CodeResourceNotFound, Message: "Resource not found: unknown session " + id, Data: map[string]string{"sessionId": id}}
}

// cancelTurn cancels the session's running turn, if any, and the
// prompts waiting behind it.
func (s *liveSession) cancelTurn() {
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel()
	}
	s.cancelWaiting()
	s.mu.Unlock()
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "sess_" + hex.EncodeToString(b[:])
}
