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
// StateDir/…/<id>.jsonl (created with the first event; its header holds
// cwd and dirs), or in memory only when the bridge has no state
// directory.
func (b *Bridge) newStore(id, cwd string, dirs []string) *session.Store {
	if b.cfg.StateDir == "" {
		return session.NewStore(nil)
	}
	h := session.NewHeader(id, cwd, time.Now().UnixMilli())
	h.AdditionalDirectories = dirs
	return session.NewLoggedStore(nil, session.NewLog(session.LogPath(b.cfg.StateDir, cwd, id), h), nil)
}

// LoadSession implements acp.SessionLoader. On the read goroutine it
// validates `session/load` and claims the session id (a prompt, or
// another load, resume, fork or delete of it, is refused until the load
// has answered); the load itself runs in the returned function.
func (b *Bridge) LoadSession(_ context.Context, p acp.LoadSessionRequest) (acp.Deferred[acp.LoadSessionResponse], error) {
	return reopenDeferred(b, reopenParams{p.SessionID, p.Cwd, p.AdditionalDirectories, p.McpServers, p.SystemPrompt}, true,
		func(modes *acp.SessionModeState, opts []acp.SessionConfigOption) acp.LoadSessionResponse {
			return acp.LoadSessionResponse{Modes: modes, ConfigOptions: opts}
		})
}

// reopenParams are what session/load and session/resume give.
type reopenParams struct {
	id, cwd string
	dirs    []string
	servers []acp.McpServer
	system  *acp.SystemPrompt
}

// reopenDeferred is session/load (replay set) and session/resume: on
// the read goroutine it validates p and claims the session id; the
// returned function reopens the session (replaying its history to the
// editor with replay), applies the client's system prompt, waits for
// the model list as session/new does and answers with the session's
// modes and options (answer builds the method's response).
func reopenDeferred[R any](b *Bridge, p reopenParams, replay bool, answer func(*acp.SessionModeState, []acp.SessionConfigOption) R) (acp.Deferred[R], error) {
	sys, given, err := clientPrompt(p.system)
	if err != nil {
		return nil, err
	}
	r, err := b.prepareReopen(p.id, p.cwd, p.dirs, p.servers)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (R, error) {
		defer b.loads.release(p.id)
		s, err := b.reopen(ctx, r, replay)
		if err != nil {
			var zero R
			return zero, err
		}
		if given {
			b.setSystemPrompt(s, sys)
		}
		b.opened(ctx, s)
		b.cfg.Models.Wait(ctx, b.cfg.ModelsWait)
		return answer(modeState(s.perm.currentMode()), b.optionsAnswered(ctx, s)), nil
	}, nil
}

// reopenReq is a validated session/load or session/resume.
type reopenReq struct {
	id, cwd string
	dirs    []string
	// live is the session of that id open here when the request was
	// read (nil when none).
	live *liveSession
	// servers are the MCP servers the request names (started by reopen).
	servers []acp.McpServer
}

// prepareReopen validates the params of a session/load or
// session/resume on the read goroutine and claims the id (released by
// the caller's second stage). A prompt running in the live session is
// -32602: reopening must not race a turn.
func (b *Bridge) prepareReopen(id, cwd string, dirs []string, servers []acp.McpServer) (reopenReq, error) {
	if id == "" {
		return reopenReq{}, acp.InvalidParams("Invalid params: sessionId is required")
	}
	if cwd == "" || !filepath.IsAbs(cwd) {
		return reopenReq{}, acp.InvalidParams("Invalid params: cwd must be an absolute path: %q", cwd)
	}
	dirs, err := checkDirectories(dirs)
	if err != nil {
		return reopenReq{}, err
	}
	live := b.session(id)
	if live != nil {
		live.mu.Lock()
		running := live.cancel != nil
		live.mu.Unlock()
		if running {
			return reopenReq{}, acp.InvalidParams("Invalid params: session %s has a prompt running; it cannot be reopened until that prompt ends", id)
		}
	}
	if !b.loads.claim(id) {
		return reopenReq{}, acp.InvalidParams("Invalid params: session %s is already being opened, forked or deleted", id)
	}
	return reopenReq{id: id, cwd: filepath.Clean(cwd), dirs: dirs, live: live, servers: servers}, nil
}

// reopen opens session r.id for session/load (replay) or session/resume:
// the live one (the editor reattaching; its mode, remembered answers and
// tool state are kept) or the one logged under the state directory
// (repaired if a crash left it open; what restore reads of its events
// comes back). With replay its whole history is sent to the editor
// first, a logged session's events read from its file and decoded a
// little ahead of the updates sent (session.Loaded.Each: neither the file
// nor its events are held); either way a logged session's events are decoded
// for keeps only when its next turn needs them (session.ReadLogLazy). The session is then
// registered with a fresh capability snapshot, presenter and tool
// state, and with r.dirs as its additional directories. The MCP servers
// of the request start before the replay (which never calls them: their
// calls' cards come from the log) and are waited for at most
// Config.MCPWait from the start; a live session's old servers stop.
func (b *Bridge) reopen(ctx context.Context, r reopenReq, replay bool) (*liveSession, error) {
	began := time.Now()
	var (
		store  *session.Store
		events []session.Event                       // what restore reads (and the replay's tool definitions)
		each   func(func(session.Event) error) error // the events to replay
		dirs   []string                              // the additional directories in force before
		from   *liveSession
	)
	if live := r.live; live != nil && b.session(r.id) == live {
		if live.cwd != r.cwd {
			return nil, cwdMismatch(r.cwd, live.cwd)
		}
		store, dirs, from = live.agent.Store, live.dirs, live
		if replay {
			// A session resumed here may not have decoded its log yet.
			if err := store.Ready(); err != nil {
				return nil, logError(r.id, "LOG_CORRUPT", err)
			}
			events = store.Events()
			each = func(f func(session.Event) error) error {
				for _, ev := range events {
					if err := f(ev); err != nil {
						return err
					}
				}
				return nil
			}
		}
	} else {
		ld, err := b.openLogged(r.id, r.cwd, replay)
		if err != nil {
			return nil, err
		}
		store, dirs = ld.store, ld.dirs
		events, each = ld.events, ld.each
	}
	s := b.buildSession(r.id, r.cwd, r.dirs, store)
	set := b.startMCP(s, r.servers)
	if replay {
		if err := b.replay(ctx, s, events, each); err != nil {
			if set != nil {
				b.mcp.close(set)
			}
			if from == nil {
				_ = store.Close()
			}
			return nil, err
		}
	}
	carry := carryNone
	if from != nil {
		carry = carryShare
	}
	b.restore(s, events, from, carry)
	b.register(s)
	if from != nil {
		b.stopMCP(from.agent.Tools)
	}
	b.noteDirectories(s, dirs)
	b.waitMCP(ctx, set, began)
	return s, nil
}

// logged is a session log opened to be continued.
type logged struct {
	store *session.Store
	// events are the logged events restore reads (and, for a replay, the
	// tool definitions); each calls its argument with every logged event,
	// decoding one at a time; dirs are the additional directories in force
	// at the log's end.
	events []session.Event
	each   func(func(session.Event) error) error
	dirs   []string
}

// openLogged reads, checks and (when a crash left it torn or open)
// repairs session id's log, and returns a store that continues it. Only
// the events restore reads (and, forReplay, the tool definitions the
// replay looks up) are decoded now: the store decodes the rest on first
// need, and a replay one at a time (logged.each).
func (b *Bridge) openLogged(id, cwd string, forReplay bool) (logged, error) {
	if b.cfg.StateDir == "" {
		return logged{}, b.unknownSession(id)
	}
	path, err := session.Find(b.cfg.StateDir, id)
	if errors.Is(err, session.ErrNotFound) {
		return logged{}, b.unknownSession(id)
	}
	if err != nil {
		return logged{}, logError(id, "LOG_UNREADABLE", err)
	}
	// The lock comes first: a log another process writes is neither
	// read half-written nor "repaired" under it.
	want := restoredType
	if forReplay {
		want = func(t string) bool { return restoredType(t) || t == session.ToolDefinition{}.EventType() }
	}
	ld, err := session.ReadLogLazyLocked(path, want)
	if err != nil {
		var ce *session.CorruptError
		if errors.As(err, &ce) {
			return logged{}, logError(id, "LOG_CORRUPT", fmt.Errorf("%w; the file was left unchanged", err))
		}
		if le := lockedError(id, err); le != nil {
			return logged{}, le
		}
		return logged{}, logError(id, "LOG_UNREADABLE", err)
	}
	if ld.Header.Cwd != cwd {
		ld.Release()
		return logged{}, cwdMismatch(cwd, ld.Header.Cwd)
	}
	dropped, synthetic := ld.Dropped(), ld.Synthetic
	log, err := ld.Open()
	if err != nil {
		return logged{}, logError(id, "LOG_REPAIR_FAILED", err)
	}
	if ld.Backup != "" {
		b.log.Warn("repaired a session log left by a crash", "session", id, "path", path,
			"backup", ld.Backup, "droppedBytes", dropped, "syntheticEvents", synthetic)
	}
	events := ld.Selected // the restoredTypes: titles among them
	// A crash between a title file and its Title's line leaves them
	// apart (session.SyncTitleFile): the log is the truth.
	t, has := session.LastTitle(events)
	if err := session.SyncTitleFile(path, t, has); err != nil {
		b.log.Warn("could not bring the title file in line with the log", "session", id, "err", err)
	}
	each := func(f func(session.Event) error) error {
		if err := ld.Each(f); err != nil {
			var ce *session.CorruptError
			if errors.As(err, &ce) {
				return logError(id, "LOG_CORRUPT", err)
			}
			return err
		}
		return nil
	}
	return logged{store: ld.NewStore(log, nil), events: events, each: each, dirs: lastDirectories(ld.Header, events)}, nil
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
// messages, every tool call as one tool_call and its final update (an
// MCP tool's from its logged definition: see replayLookup), plans,
// titles; and the children logged with it (childReplay). The events
// come from each, one at a time; defs holds (among others) the tool
// definitions the replay looks up. It stops when ctx ends or a write
// fails, or at each's error.
func (b *Bridge) replay(ctx context.Context, s *liveSession, defs []session.Event, each func(func(session.Event) error) error) error {
	v := s.view
	v.Replay = true
	lookup := newReplayLookup(b.cfg.Tools, defs)
	p := present.NewPresenter(v, lookup)
	kids := b.newChildReplay(s, v)
	i := 0
	err := each(func(ev session.Event) error {
		if i++; i%256 == 1 && ctx.Err() != nil {
			return ctx.Err()
		}
		if d, ok := ev.Data.(session.Subagent); ok {
			return kids.event(ctx, d)
		}
		lookup.next(ev)
		for _, u := range p.Updates(ev) {
			if err := b.client.SessionUpdate(ctx, acp.SessionNotification{SessionID: s.id, Update: u}); err != nil {
				return fmt.Errorf("replaying session %s: %w", s.id, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return kids.finish(ctx)
}

// restoreRules puts the remembered permission answers logged in events
// back into mem, oldest first (a later answer wins).
func restoreRules(mem *permission.Memory, events []session.Event) {
	for _, ev := range events {
		if r, ok := ev.Data.(session.PermissionRule); ok {
			mem.Restore(permission.Rule{Tool: r.Tool, Allow: r.Allow, Paths: r.Paths, Prefixes: r.Prefixes, Hosts: r.Hosts, Whole: r.Whole})
		}
	}
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
