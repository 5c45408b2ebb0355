package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/checkpoint"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// This file holds the rest of a session's life beside new and load
// (bridge.go, load.go): resume, delete and fork, the one function that
// restores a session's state over its log (restore), additional
// directories, and user notices.

// ResumeSession implements acp.SessionResumer: session/load without the
// replay. The session comes back as load brings it back (see reopen:
// mode, remembered answers, tool state, additional directories), and a
// logged session's events are decoded only when its next turn needs
// them, so the answer does not wait for the whole log.
func (b *Bridge) ResumeSession(_ context.Context, p acp.ResumeSessionRequest) (acp.Deferred[acp.ResumeSessionResponse], error) {
	return reopenDeferred(b, reopenParams{p.SessionID, p.Cwd, p.AdditionalDirectories, p.McpServers, p.SystemPrompt}, false,
		func(modes *acp.SessionModeState, opts []acp.SessionConfigOption) acp.ResumeSessionResponse {
			return acp.ResumeSessionResponse{Modes: modes, ConfigOptions: opts}
		})
}

// carry says what a session restored over a log takes of the live
// session it takes over.
type carry int

const (
	carryNone  carry = iota // the log was read from disk: nothing live
	carryShare              // the editor reattaches: share the tool state
	carryCopy               // a fork of the whole conversation: copy it
	carryMode               // a fork cut at a message: the mode only
)

// restoredTypes are the event types restore reads: a resume decodes only
// these before it answers (session.ReadLogLazy), so a restore step that
// reads another type must add it here.
var restoredTypes = map[string]bool{
	session.Title{}.EventType():          true,
	session.ModeChange{}.EventType():     true,
	session.Directories{}.EventType():    true,
	session.PermissionRule{}.EventType(): true,
	session.ConfigChange{}.EventType():   true,
	session.SystemPrompt{}.EventType():   true,
}

func restoredType(t string) bool { return restoredTypes[t] }

// restore gives s, a session just built over a conversation's log,
// everything session/load restores besides the history itself; load,
// resume and fork all go through it. From the session it takes over
// (from, when that one is live here): the mode and, as how says, the
// model and thinking level, the remembered permission answers and the
// tool state (the files observed, shared or copied; background commands
// only when shared). Else from the logged events (only the restoredTypes
// among them are read): the last logged mode, model and thinking level
// (restoredConfig) and the logged "always" answers (a fork cut at a
// message gets those logged before the cut).
func (b *Bridge) restore(s *liveSession, events []session.Event, from *liveSession, how carry) {
	if from != nil && how != carryNone {
		switch how {
		case carryShare:
			s.perm.mem = from.perm.mem
			tools.Inherit(s.agent.Tools, from.agent.Tools)
		case carryCopy:
			s.perm.mem = from.perm.mem.Clone()
			tools.Fork(s.agent.Tools, from.agent.Tools)
		case carryMode, carryNone:
			// The mode only (carryNone never gets here).
		}
	}
	if how != carryShare && how != carryCopy {
		restoreRules(s.perm.mem, events)
	}
	// The model, thinking level and mode: the logged ones (restoredConfig),
	// except what is taken from the live session.
	v := restoredConfig(events, b.defaultConfig())
	if from != nil && how != carryNone {
		live := from.configOf()
		v.Mode = live.Mode
		if how == carryShare || how == carryCopy {
			v.Model, v.Thinking, v.System = live.Model, live.Thinking, live.System
		}
	}
	b.applyConfig(s, v)
}

// DeleteSession implements acp.SessionDeleter: the session is closed
// first if it is open here (its turn cancelled, its background commands
// stopped, its log closed, so that nothing still pending, a turn's last
// events or a late title, can write the log again), then its log and
// the log's backups are removed; it is gone from session/list, and
// session/load or session/resume of it is -32002. An id that is neither
// open nor logged is -32002; one being loaded, resumed or forked is
// -32602; one another process has open (its log's lock) is -32603
// LOG_LOCKED, and nothing is removed.
func (b *Bridge) DeleteSession(ctx context.Context, p acp.DeleteSessionRequest) (acp.DeleteSessionResponse, error) {
	if p.SessionID == "" {
		return acp.DeleteSessionResponse{}, acp.InvalidParams("Invalid params: sessionId is required")
	}
	if !b.loads.claim(p.SessionID) {
		return acp.DeleteSessionResponse{}, acp.InvalidParams("Invalid params: session %s is being opened or forked; delete it after that", p.SessionID)
	}
	defer b.loads.release(p.SessionID)
	s := b.detach(p.SessionID)
	if s != nil {
		if err := s.agent.Store.Close(); err != nil {
			b.log.Warn("could not close the log of a session being deleted", "session", s.id, "err", err)
		}
		// The session's checkpoints go with it.
		if err := s.ckpt.Remove(ctx); err != nil {
			b.log.Debug("could not remove the checkpoints of a deleted session", "session", s.id, "err", err)
		}
	}
	if b.cfg.StateDir == "" {
		if s == nil {
			return acp.DeleteSessionResponse{}, b.unknownSession(p.SessionID)
		}
		return acp.DeleteSessionResponse{}, nil
	}
	path, err := session.Find(b.cfg.StateDir, p.SessionID)
	switch {
	case errors.Is(err, session.ErrNotFound):
		if s == nil {
			return acp.DeleteSessionResponse{}, b.unknownSession(p.SessionID)
		}
		return acp.DeleteSessionResponse{}, nil // never logged: nothing on disk
	case err != nil:
		return acp.DeleteSessionResponse{}, deleteError(p.SessionID, err)
	}
	cwd := ""
	if s == nil {
		if l, err := session.ReadLogLazy(path, func(string) bool { return false }); err == nil {
			cwd = l.Header.Cwd
		}
	}
	if err := session.Delete(path); err != nil && !errors.Is(err, session.ErrNotFound) {
		if le := lockedError(p.SessionID, err); le != nil {
			return acp.DeleteSessionResponse{}, le
		}
		return acp.DeleteSessionResponse{}, deleteError(p.SessionID, err)
	}
	if cwd != "" {
		// A session not open here: its checkpoints go with it too.
		if err := checkpoint.New(cwd, p.SessionID, b.cfg.StateDir, b.cfg.AgentCmd).Remove(ctx); err != nil {
			b.log.Debug("could not remove the checkpoints of a deleted session", "session", p.SessionID, "err", err)
		}
	}
	b.log.Info("deleted a session", "session", p.SessionID, "path", path)
	return acp.DeleteSessionResponse{}, nil
}

func deleteError(id string, err error) error {
	return &acp.Error{Code: acp.CodeInternalError,
		Message: fmt.Sprintf("Internal error: session %s could not be deleted: %v", id, err),
		Data:    map[string]any{"reason": "DELETE_FAILED"}}
}

// ForkMessageKey is the `_meta` key of a session/fork request that names
// the message to fork at: a messageId of the source's chunks
// (session.UserMessageID or session.AssistantMessageID, e.g.
// "turn2-step1"). Without it the fork copies the whole conversation.
const ForkMessageKey = "messageId"

// ForkSession implements acp.SessionForker (unstable schema): a new
// session, with a new id, whose log starts as a copy of the source's
// events: all of them (a turn still running is left out), or up to and
// including the message `_meta.messageId` names (see
// session.ForkEvents). It has the source's cwd (the request's must be
// the same) and mode, the request's additional directories, and, when
// the whole conversation is copied from a session open here, a copy of
// its remembered answers and of the files it observed. The source is
// not changed. An unknown source is -32002; a cwd that is not the
// source's, or a message id the source does not have, is -32602.
func (b *Bridge) ForkSession(ctx context.Context, p acp.ForkSessionRequest) (acp.ForkSessionResponse, error) {
	if p.SessionID == "" {
		return acp.ForkSessionResponse{}, acp.InvalidParams("Invalid params: sessionId is required")
	}
	if p.Cwd == "" || !filepath.IsAbs(p.Cwd) {
		return acp.ForkSessionResponse{}, acp.InvalidParams("Invalid params: cwd must be an absolute path: %q", p.Cwd)
	}
	dirs, err := checkDirectories(p.AdditionalDirectories)
	if err != nil {
		return acp.ForkSessionResponse{}, err
	}
	messageID, err := forkMessageID(p.Meta)
	if err != nil {
		return acp.ForkSessionResponse{}, err
	}
	sys, given, err := clientPrompt(p.SystemPrompt)
	if err != nil {
		return acp.ForkSessionResponse{}, err
	}
	began := time.Now()
	if !b.loads.claim(p.SessionID) {
		return acp.ForkSessionResponse{}, acp.InvalidParams("Invalid params: session %s is being opened or deleted; fork it after that", p.SessionID)
	}
	defer b.loads.release(p.SessionID)
	cwd := filepath.Clean(p.Cwd)
	src := b.session(p.SessionID)
	var events []session.Event
	if src != nil {
		if src.cwd != cwd {
			return acp.ForkSessionResponse{}, cwdMismatch(cwd, src.cwd)
		}
		if err := src.agent.Store.Ready(); err != nil {
			return acp.ForkSessionResponse{}, logError(src.id, "LOG_CORRUPT", err)
		}
		events = src.agent.Store.Events()
	} else if events, err = b.readLogged(p.SessionID, cwd); err != nil {
		return acp.ForkSessionResponse{}, err
	}
	if !given {
		// The fork inherits the source's system prompt, also one set
		// after the message it is cut at.
		sys = restoredConfig(events, configState{}).System
		if src != nil {
			sys = src.configOf().System
		}
	}
	events, ok := session.ForkEvents(events, messageID)
	if !ok {
		return acp.ForkSessionResponse{}, acp.InvalidParams("Invalid params: session %s has no message %q to fork at", p.SessionID, messageID)
	}
	id := newSessionID()
	store, err := b.forkStore(id, p.SessionID, cwd, dirs, events)
	if err != nil {
		return acp.ForkSessionResponse{}, err
	}
	s := b.buildSession(id, cwd, dirs, store)
	how := carryCopy
	if messageID != "" {
		// What the source observed or was told later is not this
		// conversation's: only the mode comes along.
		how = carryMode
	}
	b.restore(s, events, src, how)
	b.register(s)
	b.setSystemPrompt(s, sys)
	// The fork's header holds dirs; a copied Directories event may say
	// otherwise.
	b.noteDirectories(s, lastDirectories(session.Header{AdditionalDirectories: dirs}, events))
	b.waitMCP(ctx, b.startMCP(s, p.McpServers), began)
	b.opened(ctx, s)
	b.log.Info("forked a session", "session", p.SessionID, "fork", id, "events", len(events), "messageId", messageID)
	b.cfg.Models.Wait(ctx, b.cfg.ModelsWait)
	return acp.ForkSessionResponse{SessionID: id, Modes: modeState(s.perm.currentMode()), ConfigOptions: b.optionsAnswered(ctx, s)}, nil
}

// forkMessageID reads the fork point from a request's `_meta` ("" when
// none); a messageId that is not a string is -32602.
func forkMessageID(meta acp.Meta) (string, error) {
	if len(meta) == 0 {
		return "", nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil || m[ForkMessageKey] == nil || string(m[ForkMessageKey]) == "null" {
		return "", nil
	}
	var id string
	if err := json.Unmarshal(m[ForkMessageKey], &id); err != nil || id == "" {
		return "", acp.InvalidParams("Invalid params: _meta.%s must be a message id (a non-empty string)", ForkMessageKey)
	}
	return id, nil
}

// readLogged reads session id's whole log to copy it (the file is not
// changed: a log a crash left open is closed in the copy only).
func (b *Bridge) readLogged(id, cwd string) ([]session.Event, error) {
	if b.cfg.StateDir == "" {
		return nil, b.unknownSession(id)
	}
	path, err := session.Find(b.cfg.StateDir, id)
	if errors.Is(err, session.ErrNotFound) {
		return nil, b.unknownSession(id)
	}
	if err != nil {
		return nil, logError(id, "LOG_UNREADABLE", err)
	}
	ld, err := session.ReadLog(path)
	if err != nil {
		var ce *session.CorruptError
		if errors.As(err, &ce) {
			return nil, logError(id, "LOG_CORRUPT", err)
		}
		return nil, logError(id, "LOG_UNREADABLE", err)
	}
	if ld.Header.Cwd != cwd {
		return nil, cwdMismatch(cwd, ld.Header.Cwd)
	}
	return ld.Events, nil
}

// forkStore writes the log of fork id (forked from source) holding
// events, durably, and returns the store that continues it (in memory
// only without a state directory).
func (b *Bridge) forkStore(id, source, cwd string, dirs []string, events []session.Event) (*session.Store, error) {
	if b.cfg.StateDir == "" {
		return session.NewLoggedStore(events, nil, nil), nil
	}
	h := session.NewHeader(id, cwd, time.Now().UnixMilli())
	h.AdditionalDirectories, h.ForkedFrom = dirs, source
	log := session.NewLog(session.LogPath(b.cfg.StateDir, cwd, id), h)
	err := log.AppendAll(events)
	if err == nil {
		err = log.Sync()
	}
	if err != nil {
		_ = log.Close()
		_ = os.Remove(log.Path())
		return nil, &acp.Error{Code: acp.CodeInternalError, Message: "Internal error: the fork's log could not be written: " + err.Error(),
			Data: map[string]any{"reason": "LOG_WRITE_FAILED"}}
	}
	return session.NewLoggedStore(events, log, nil), nil
}

// checkDirectories validates the additionalDirectories of a session
// request: each must be an absolute path naming an existing directory
// (else -32602). It returns them cleaned, without repeats, in order
// (nil for none).
func checkDirectories(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			return nil, acp.InvalidParams("Invalid params: additionalDirectories must be absolute paths: %q", d)
		}
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return nil, acp.InvalidParams("Invalid params: additional directory %q is not an existing directory", d)
		}
		if d = filepath.Clean(d); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// lastDirectories is the additional directories in force after events:
// those of the last Directories event, else the header's.
func lastDirectories(h session.Header, events []session.Event) []string {
	for i := len(events) - 1; i >= 0; i-- {
		if d, ok := events[i].Data.(session.Directories); ok {
			return d.Dirs
		}
	}
	return h.AdditionalDirectories
}

// noteDirectories logs s's additional directories when they differ from
// before, the list in force until now (the log keeps the session's roots).
func (b *Bridge) noteDirectories(s *liveSession, before []string) {
	if slices.Equal(s.dirs, before) {
		return
	}
	s.agent.Store.Emit(session.Directories{Dirs: append([]string{}, s.dirs...)})
	b.flushLog(s)
}

// opened runs what follows the answer to the request (ctx's) that opened
// s (session/new, load, resume, fork), once that answer is written, so
// that the editor knows the session first: the slash commands
// (available_commands_update; commands.go), the MCP servers' notices so
// far (mcp.go) and the sandbox notice.
func (b *Bridge) opened(ctx context.Context, s *liveSession) {
	acp.Then(ctx, func() { b.sendCommands(s, b.loadCommands(s)) })
	b.openedMCP(ctx, s)
	if b.cfg.SandboxWarning == nil {
		return
	}
	if w := b.cfg.SandboxWarning(); w != "" {
		acp.Then(ctx, func() {
			tools.Notify(s.agent.Tools, tools.Notice{Severity: tools.NoticeWarning, Title: noSandboxTitle, Description: w})
		})
	}
}

// notify is the notice path of s's tools (tools.Notify): a `notice`
// update when the editor advertised `session.notices` and s is still
// the session open for its conversation, else a log line at the
// notice's severity and, for a failure of a session still open (an MCP
// server's, the sandbox's), a failed card (failureCards). Never text in the conversation; never logged in
// the session (notices are not history, so a load does not replay
// them).
func (b *Bridge) notify(s *liveSession, n tools.Notice) {
	cur := b.session(s.id)
	if cur != nil && cur.agent.Store == s.agent.Store && cur.notices {
		b.log.Debug("notice", "session", s.id, "severity", n.Severity, "title", n.Title, "description", n.Description)
		cur.agent.Store.Emit(session.Notice{Severity: n.Severity, Title: n.Title, Description: n.Description})
		return
	}
	level := slog.LevelInfo
	switch n.Severity {
	case tools.NoticeWarning:
		level = slog.LevelWarn
	case tools.NoticeError:
		level = slog.LevelError
	}
	b.log.Log(context.Background(), level, "notice: "+n.Title, "session", s.id, "severity", n.Severity, "description", n.Description)
	// An editor without notices gets a session's failure as a failed
	// card, inside a turn (failureCards).
	if cur == s && sessionFailure(n) && s.fails.add(n) {
		b.failureCard(s, n)
	}
}
