package bridge

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/present"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// loadState is the set of session ids being loaded, so that a second
// load, or a prompt, cannot interleave with a replay. The zero value is
// ready to use.
type loadState struct {
	mu  sync.Mutex
	ids map[string]bool
}

// claim marks id as loading; it reports false when it already was.
func (l *loadState) claim(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ids[id] {
		return false
	}
	if l.ids == nil {
		l.ids = map[string]bool{}
	}
	l.ids[id] = true
	return true
}

func (l *loadState) release(id string) {
	l.mu.Lock()
	delete(l.ids, id)
	l.mu.Unlock()
}

// busy reports whether id is being loaded.
func (l *loadState) busy(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ids[id]
}

// newStore returns the event store of a new session: logged to
// StateDir/…/<id>.jsonl (created with the first event), or in memory only
// when the bridge has no state directory.
func (b *Bridge) newStore(id, cwd string) *session.Store {
	if b.cfg.StateDir == "" {
		return session.NewStore(nil)
	}
	h := session.NewHeader(id, cwd, time.Now().UnixMilli())
	return session.NewLoggedStore(nil, session.NewLog(session.LogPath(b.cfg.StateDir, cwd, id), h), nil)
}

// LoadSession implements acp.SessionLoader. On the read goroutine it
// validates `session/load` and claims the session id (a prompt or
// another load of it is refused until the load has answered); the load
// itself runs in the returned function.
func (b *Bridge) LoadSession(_ context.Context, p acp.LoadSessionRequest) (acp.Deferred[acp.LoadSessionResponse], error) {
	if p.SessionID == "" {
		return nil, acp.InvalidParams("Invalid params: sessionId is required")
	}
	if p.Cwd == "" || !filepath.IsAbs(p.Cwd) {
		return nil, acp.InvalidParams("Invalid params: cwd must be an absolute path: %q", p.Cwd)
	}
	if len(p.McpServers) > 0 || len(p.AdditionalDirectories) > 0 {
		b.log.Info("MCP servers and additional directories are not supported yet; ignoring them",
			"mcpServers", len(p.McpServers), "additionalDirectories", len(p.AdditionalDirectories))
	}
	live := b.session(p.SessionID)
	if live != nil {
		live.mu.Lock()
		running := live.cancel != nil
		live.mu.Unlock()
		if running {
			return nil, acp.InvalidParams("Invalid params: session %s has a prompt running; it cannot be loaded until that prompt ends", p.SessionID)
		}
	}
	if !b.loads.claim(p.SessionID) {
		return nil, acp.InvalidParams("Invalid params: session %s is already being loaded", p.SessionID)
	}
	cwd := filepath.Clean(p.Cwd)
	return func(ctx context.Context) (acp.LoadSessionResponse, error) {
		defer b.loads.release(p.SessionID)
		return b.load(ctx, p.SessionID, cwd, live)
	}, nil
}

// load opens session id: the live one (the editor reconnecting; its mode
// is kept) or the one logged under the state directory (repaired if a
// crash left it open; its last logged mode, if any, is restored),
// replays its whole history to the editor, then registers it with a
// fresh capability snapshot, presenter and tool state, and answers.
func (b *Bridge) load(ctx context.Context, id, cwd string, live *liveSession) (acp.LoadSessionResponse, error) {
	var store *session.Store
	mode := ""
	if live != nil && b.session(id) == live {
		if live.cwd != cwd {
			return acp.LoadSessionResponse{}, cwdMismatch(cwd, live.cwd)
		}
		store, mode = live.agent.Store, live.perm.currentMode()
	} else {
		var err error
		if store, err = b.openLogged(id, cwd); err != nil {
			return acp.LoadSessionResponse{}, err
		}
	}
	events := store.Events()
	s := b.buildSession(id, cwd, store)
	if live != nil && b.session(id) == live {
		// The old tool state's background commands and notices carry
		// over to the reconnected session.
		tools.Inherit(s.agent.Tools, live.agent.Tools)
	}
	if err := b.replay(ctx, s, events); err != nil {
		if live == nil {
			_ = store.Close()
		}
		return acp.LoadSessionResponse{}, err
	}
	if mode == "" {
		mode = lastMode(events)
	}
	if mode != "" {
		s.perm.setMode(mode)
	}
	restoreRules(s.perm.mem, events)
	b.register(s)
	return acp.LoadSessionResponse{Modes: modeState(s.perm.currentMode())}, nil
}

// openLogged reads, checks and (when a crash left it torn or open)
// repairs session id's log, and returns a store that continues it.
func (b *Bridge) openLogged(id, cwd string) (*session.Store, error) {
	if b.cfg.StateDir == "" {
		return nil, unknownSession(id)
	}
	path, err := session.Find(b.cfg.StateDir, id)
	if errors.Is(err, session.ErrNotFound) {
		return nil, unknownSession(id)
	}
	if err != nil {
		return nil, logError(id, "LOG_UNREADABLE", err)
	}
	// The lock comes first: a log another process writes is neither
	// read half-written nor "repaired" under it.
	ld, err := session.ReadLogLocked(path)
	if err != nil {
		var ce *session.CorruptError
		if errors.As(err, &ce) {
			return nil, logError(id, "LOG_CORRUPT", fmt.Errorf("%w; the file was left unchanged", err))
		}
		if le := lockedError(id, err); le != nil {
			return nil, le
		}
		return nil, logError(id, "LOG_UNREADABLE", err)
	}
	if ld.Header.Cwd != cwd {
		ld.Release()
		return nil, cwdMismatch(cwd, ld.Header.Cwd)
	}
	dropped, synthetic := ld.Dropped(), ld.Synthetic
	log, err := ld.Open()
	if err != nil {
		return nil, logError(id, "LOG_REPAIR_FAILED", err)
	}
	if ld.Backup != "" {
		b.log.Warn("repaired a session log left by a crash", "session", id, "path", path,
			"backup", ld.Backup, "droppedBytes", dropped, "syntheticEvents", synthetic)
	}
	return session.NewLoggedStore(ld.Events, log, nil), nil
}

// lockedError is the -32603 error, with data {"reason": "LOG_LOCKED",
// "pid": N}, of a session whose log another process holds (nil when err
// is not that): it names that process, so the user knows where the
// session is open.
func lockedError(id string, err error) error {
	var le *session.LockedError
	if !errors.As(err, &le) {
		return nil
	}
	data := map[string]any{"reason": "LOG_LOCKED"}
	if le.PID > 0 {
		data["pid"] = le.PID
	}
	return &acp.Error{Code: acp.CodeInternalError,
		Message: fmt.Sprintf("Internal error: session %s is open in another process: %v", id, le),
		Data:    data}
}

func cwdMismatch(got, logged string) error {
	return acp.InvalidParams("Invalid params: cwd %q does not match the session's cwd %q", got, logged)
}

// logError is the -32603 error of a session log that cannot be loaded.
func logError(id, reason string, err error) error {
	return &acp.Error{Code: acp.CodeInternalError,
		Message: fmt.Sprintf("Internal error: session %s cannot be loaded: %v", id, err),
		Data:    map[string]any{"reason": reason}}
}

// replay sends the updates of events to the editor through a replay
// presenter with s's capability snapshot: user messages, thoughts and
// messages, every tool call as one tool_call and its final update,
// plans, titles. It stops when ctx ends or a write fails.
func (b *Bridge) replay(ctx context.Context, s *liveSession, events []session.Event) error {
	v := s.view
	v.Replay = true
	p := present.NewPresenter(v, b.cfg.Tools)
	for i, ev := range events {
		if i%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		for _, u := range p.Updates(ev) {
			if err := b.client.SessionUpdate(ctx, acp.SessionNotification{SessionID: s.id, Update: u}); err != nil {
				return fmt.Errorf("replaying session %s: %w", s.id, err)
			}
		}
	}
	return nil
}

// restoreRules puts the remembered permission answers logged in events
// back into mem, oldest first (a later answer wins).
func restoreRules(mem *permission.Memory, events []session.Event) {
	for _, ev := range events {
		if r, ok := ev.Data.(session.PermissionRule); ok {
			mem.Restore(permission.Rule{Tool: r.Tool, Allow: r.Allow, Paths: r.Paths, Prefixes: r.Prefixes, Whole: r.Whole})
		}
	}
}

// lastMode is the mode of the last ModeChange in events ("" when none or
// not a known mode).
func lastMode(events []session.Event) string {
	for i := len(events) - 1; i >= 0; i-- {
		if m, ok := events[i].Data.(session.ModeChange); ok {
			if permission.ValidMode(m.ModeID) {
				return m.ModeID
			}
			return ""
		}
	}
	return ""
}

// flushLog makes s's log durable (at every turn end, before the prompt
// answers). A write error is logged; the session goes on in memory.
func (b *Bridge) flushLog(s *liveSession) {
	if err := s.agent.Store.Flush(); err != nil {
		b.log.Warn("the session log could not be written; the session goes on in memory", "session", s.id, "err", err)
	}
}

// releaseLog closes s's log unless a registered session still uses its
// store (s was closed, not replaced by a reload). Called when s's turn
// ends and when s is closed while idle.
func (b *Bridge) releaseLog(s *liveSession) {
	b.mu.Lock()
	cur := b.sessions[s.id]
	b.mu.Unlock()
	if cur != nil && cur.agent.Store == s.agent.Store {
		return
	}
	if err := s.agent.Store.Close(); err != nil {
		b.log.Warn("could not close the session log", "session", s.id, "err", err)
	}
}

// releaseIfIdle closes the log of a session just closed, unless a turn
// is still ending (that turn releases it).
func (b *Bridge) releaseIfIdle(s *liveSession) {
	s.mu.Lock()
	idle := s.cancel == nil
	s.mu.Unlock()
	if idle {
		b.releaseLog(s)
	}
}
