// Package bridge implements the ACP agent side: a *Bridge is an acp.Agent
// (with the optional interfaces for load, resume, list, close, delete,
// fork, modes and config options) that serves the editor's requests,
// keeps each session's capability snapshot and its model / thinking /
// mode choices, and turns the agent loop's events into `session/update`s
// through one present.Presenter per session.
package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dsh-acp/dsh-acp/internal/agentcmd"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/agent"
	"github.com/dsh-acp/dsh-acp/checkpoint"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/present"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/slash"
	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/toolsub"
)

// Config configures a Bridge.
type Config struct {
	Agent   *agent.Agent
	Tools   *tools.Registry
	Version string // the agent's version, for agentInfo
	// LocationLineBase forces the base of `locations[].line` (0 or 1);
	// -1 chooses per client (0 for Zed, 1 otherwise).
	LocationLineBase int
	// Mode is the permission mode new sessions start in (permission.Mode*
	// ids); "" means default.
	Mode string
	// StateDir is where session logs are kept (DSH_STATE_DIR); ""
	// keeps sessions in memory only (nothing to list or load from disk).
	StateDir string
	// Limits bound the connection's memory (message size, queued
	// writes); zero fields mean acp's defaults.
	Limits acp.Limits
	// SandboxWarning, when set, returns "" or the sentence saying that
	// shell commands will not be confined as configured
	// (toolbash.Manager.SandboxWarning; it never waits for the kernel
	// probe): every session opened tells the user once, as a notice
	// (tools.Notify).
	SandboxWarning func() string
	// Models is the endpoint's model list (nil: none). initialize starts
	// its request; session/new and session/load wait up to ModelsWait
	// for it, and sessions answered without it get a
	// config_option_update when it arrives.
	Models *llm.ModelList
	// Providers, when set, offers the providers/* methods over the model
	// endpoint (providers.go).
	Providers *Providers
	// ModelsWait bounds that wait; 0 means DefaultModelsWait.
	ModelsWait time.Duration
	// KnownModels are the models the model option offers, after the
	// agent's default model, while there is no model list.
	KnownModels []string
	// Provider is the endpoint's API dialect: with llm.ProviderDeepSeek
	// a session on a retired DeepSeek model name moves to the current
	// one (deepseek.go). "" is llm.ProviderOpenAI.
	Provider llm.Provider
	// Thinking offers the thinking option (DeepSeek's thinking mode and
	// effort); ThinkingDefault is the ThinkingLevels id new sessions start
	// with ("" means DefaultThinking).
	Thinking        bool
	ThinkingDefault string
	// MCPWait bounds how long session/new, load, resume and fork wait for
	// the session's MCP servers before answering (mcp.go); 0 means
	// DefaultMCPWait (2 s), a negative value no wait.
	MCPWait time.Duration
	// MCPTrusted names the MCP servers whose read-only hints the user
	// vouches for (toolmcp.Server.Trusted): their readOnlyHint tools
	// run in plan mode too. Others' hints are only claims.
	MCPTrusted []string
	// Titles: after a session's first turn that ends normally, the
	// model writes the session's title (title.go); without it the first
	// prompt's line stays the title (so under --replay and --record).
	Titles bool
	// CommandsDir is the user's folder of slash command files
	// (slash.UserDir); "" reads none. The project's folder
	// (slash.ProjectDir of the session's cwd) is always read.
	CommandsDir string
	// AgentCmd runs the agent's own commands, in the sandbox and with
	// git's program-running settings off: /review's git and the
	// checkpoints' git. The zero value is the default sandbox.
	AgentCmd agentcmd.Runner
	Log      *slog.Logger
	// Auth is where the API key comes from, for initialize's authMethods,
	// authenticate, logout and the check before each prompt (auth.go).
	Auth Auth
	// Images reports whether a model takes image input (nil: none
	// does): a prompt with an image for a session whose model takes none
	// is refused (-32602) rather than sent without it. OffersImages is
	// what initialize advertises as promptCapabilities.image, once for
	// every session to come: whether a model the sessions may use takes
	// images.
	Images       func(model string) bool
	OffersImages bool
	// Balance reads the account balance (nil: never; DeepSeek's API
	// only), at most once per turn in the background; LowBalance are
	// the amounts, by currency code, below which a session is told once
	// (balance.go).
	Balance    func(context.Context) ([]llm.Balance, error)
	LowBalance map[string]float64
	// SubagentParallel bounds the children (subagent tools) of one
	// session running at once; 0 means DefaultSubagentParallel.
	// SubagentDepth is how deep children may nest; 0 means
	// DefaultSubagentDepth (children, no grandchildren).
	SubagentParallel, SubagentDepth int
	// PromptQueue is how many prompts a session holds waiting behind its
	// running turn (queue.go); <= 0 means DefaultPromptQueue.
	PromptQueue int
}

// Bridge serves one editor connection. Create it with New, then Serve.
type Bridge struct {
	cfg    Config
	log    *slog.Logger
	client acp.Client

	mu         sync.Mutex
	caps       acp.ClientCapabilities
	clientInfo *acp.Implementation
	sessions   map[string]*liveSession

	loads loadState     // sessions being loaded (load.go)
	index session.Index // what session/list has read of the logs (list.go)
	mcp   mcpState      // the MCP servers of the sessions (mcp.go)
	auth  authState     // the auth status the editor last heard (authstatus.go)
	prov  providerState // what providers/set told (providers.go)
	subs  subagentState // the children of the sessions (subagent.go)

	watch     sync.Once     // the model list watcher (config.go)
	closed    chan struct{} // closed by Close
	closeOnce sync.Once

	// ctx is cancelled by Close: it ends the title requests, which
	// titles tracks; titleMu orders the titles a session gets (the
	// user's wins; title.go).
	ctx     context.Context
	stop    context.CancelFunc
	titles  sync.WaitGroup
	titleMu sync.Mutex

	balance balanceState // the balance checks (balance.go)
}

// liveSession is a session open in this process.
type liveSession struct {
	id  string
	cwd string
	// dirs are the additional workspace roots in force (absolute, clean).
	dirs []string
	// notices: the editor advertised `session.notices`.
	notices bool
	view    present.View
	agent   *agent.Session
	pres    *present.Presenter

	// fails shows failures as cards where notices is false (failcards.go).
	fails failureCards

	mu     sync.Mutex
	cancel context.CancelFunc // the running turn's, nil when idle
	queue  turnQueue          // the prompts waiting behind it (queue.go)
	turns  int
	// cmds are the slash commands offered (commands.go); titleCancel
	// cancels the title request under way and titleDone says none will
	// come (title.go).
	cmds        *slash.Set
	titleCancel context.CancelFunc
	titleDone   bool // no turn of s will get a title request

	perm *permState
	cfg  sessionConfig
	// ckpt takes the session's per-turn checkpoints (/undo, the turn's
	// changes card).
	ckpt *checkpoint.Tracker
}

// New returns a bridge. It does not touch cfg.Tools' execute chain: the
// wiring installs the permission step, cfg.Tools.Use(b.Permission).
func New(cfg Config) *Bridge {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Mode == "" {
		cfg.Mode = permission.ModeDefault
	}
	if cfg.ModelsWait <= 0 {
		cfg.ModelsWait = DefaultModelsWait
	}
	if cfg.ThinkingDefault == "" {
		cfg.ThinkingDefault = DefaultThinking
	}
	if id, ok := CanonicalThinking(cfg.ThinkingDefault); ok {
		cfg.ThinkingDefault = id
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Bridge{cfg: cfg, log: cfg.Log, sessions: map[string]*liveSession{}, closed: make(chan struct{}), ctx: ctx, stop: stop}
}

// The ACP interfaces a Bridge serves (initialize advertises them).
var (
	_ acp.Agent          = (*Bridge)(nil)
	_ acp.SessionLoader  = (*Bridge)(nil)
	_ acp.SessionLister  = (*Bridge)(nil)
	_ acp.SessionCloser  = (*Bridge)(nil)
	_ acp.ModeSetter     = (*Bridge)(nil)
	_ acp.SessionResumer = (*Bridge)(nil)
	_ acp.SessionDeleter = (*Bridge)(nil)
	_ acp.SessionForker  = (*Bridge)(nil)

	_ acp.ConfigOptionSetter = (*Bridge)(nil)
	// session/set_title (unstable schema; title.go).
	_ acp.SessionTitleSetter = (*Bridge)(nil)
)

// Serve starts serving the editor on r/w and returns the connection; wait
// on its Done channel.
func (b *Bridge) Serve(r io.Reader, w io.Writer) *acp.Conn {
	return acp.NewAgentConnLimits(r, w, func(c acp.Client) acp.Agent {
		b.client = c
		if b.cfg.Providers != nil {
			return providerAgent{b} // providers.go
		}
		return b
	}, b.log, b.cfg.Limits)
}

// Close cancels the title requests under way and waits for them, then
// closes the log of every session open here (their turns have ended
// once the connection is done), releasing the logs' locks; the sessions
// stay in memory. It also stops the watcher of the model list (it does
// not wait for the list's request). Call it when the connection is
// done; calling it again does nothing.
func (b *Bridge) Close() {
	b.mcp.closeAll()
	b.closeOnce.Do(func() { close(b.closed) })
	b.stop()
	b.titles.Wait()
	b.balance.wg.Wait()
	b.mu.Lock()
	ss := make([]*liveSession, 0, len(b.sessions))
	for _, s := range b.sessions {
		ss = append(ss, s)
	}
	b.mu.Unlock()
	for _, s := range ss {
		if err := s.agent.Store.Close(); err != nil {
			b.log.Warn("could not close the session log", "session", s.id, "err", err)
		}
	}
}

// SetClient sets the connection used to reach the editor (for tests that
// drive the bridge without Serve).
func (b *Bridge) SetClient(c acp.Client) { b.client = c }

// Cancel implements acp.Agent: the session's running turn, if any, is
// cancelled (an unknown session is ignored, as the spec asks).
func (b *Bridge) Cancel(_ context.Context, p acp.CancelNotification) error {
	if s := b.session(p.SessionID); s != nil {
		s.cancelTurn()
	} else if c := b.subs.get(p.SessionID); c != nil {
		// A child's cancel (its capabilities.cancel): that child only.
		c.cancelRun()
	}
	return nil
}

// Initialize implements acp.Agent: it keeps the editor's capabilities
// for the sessions to come, and offers additionalDirectories. The
// optional methods' capability bits (load, list, close, resume, delete,
// fork) are filled in by the acp method table.
func (b *Bridge) Initialize(_ context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	b.mu.Lock()
	b.caps = acp.ClientCapabilities{}
	if p.ClientCapabilities != nil {
		b.caps = *p.ClientCapabilities
	}
	b.clientInfo = p.ClientInfo
	caps := b.caps
	b.mu.Unlock()
	// The model list is asked for now, so that session/new rarely waits.
	b.cfg.Models.Start()
	b.auth.swap(b.authStatus()) // what auth/status_update compares with
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersion,
		AgentCapabilities: acp.AgentCapabilities{PromptCapabilities: acp.PromptCapabilities{EmbeddedContext: true, Image: b.cfg.OffersImages},
			SessionCapabilities: &acp.SessionCapabilities{AdditionalDirectories: &acp.Empty{}, SystemPrompt: systemPromptCaps()},
			McpCapabilities:     mcpCapabilities(), Meta: promptQueueingMeta},
		AuthMethods: b.authMethods(caps),
		AgentInfo:   &acp.Implementation{Name: "dsh-acp", Title: "dsh-acp (DeepSeek)", Version: b.cfg.Version},
	}, nil
}

// imagePolicy is whether session s's current model takes images (the
// model it chose with the model option, else the agent's default).
func (b *Bridge) imagePolicy(s *liveSession) imagePolicy {
	model := s.configOf().Model
	if model == "" {
		model = b.cfg.Agent.Model()
	}
	p := imagePolicy{model: model, ok: b.cfg.Images != nil && b.cfg.Images(model)}
	if !p.ok && b.cfg.Images != nil {
		p.alt = b.imageModel()
	}
	return p
}

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
	b.mu.Lock()
	s := b.sessions[p.SessionID]
	delete(b.sessions, p.SessionID)
	b.mu.Unlock()
	if s == nil {
		return acp.CloseSessionResponse{}, b.unknownSession(p.SessionID)
	}
	s.cancelTurn()
	s.cancelTitle()
	b.subs.forget(s.id)
	tools.CloseSession(s.agent.Tools)
	b.releaseIfIdle(s)
	return acp.CloseSessionResponse{}, nil
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

// Prompt implements acp.Agent. On the read goroutine it validates the
// prompt and registers the turn (so a session/cancel read next finds it);
// the turn itself runs in the returned function.
func (b *Bridge) Prompt(ctx context.Context, p acp.PromptRequest) (acp.Deferred[acp.PromptResponse], error) {
	s := b.session(p.SessionID)
	if s == nil {
		return nil, b.notHere(p.SessionID)
	}
	if log := s.agent.Store.Log(); log != nil {
		// A session only created here holds no lock: another process may
		// have taken it over since.
		err := log.Claim()
		if le := lockedError(s.id, err); le != nil {
			return nil, le
		}
		if errors.Is(err, session.ErrContinued) {
			return nil, &acp.Error{Code: acp.CodeInternalError, Data: map[string]any{"reason": "LOG_CONTINUED"},
				Message: fmt.Sprintf("Internal error: session %s was continued by another process; load it again to go on here", s.id)}
		}
	}
	if b.loads.busy(p.SessionID) {
		return nil, acp.InvalidParams("Invalid params: session %s is being loaded", p.SessionID)
	}
	content, err := promptContent(p.Prompt, b.imagePolicy(s))
	if err != nil {
		return nil, err
	}
	// Without a key the prompt is refused before anything is logged: the
	// editor shows its login banner and the same prompt can be sent again.
	if err := b.checkAuth(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.cancel != nil {
		// A turn runs: the prompt waits for it (queue.go). A slash
		// command the session offers does not steer: it runs as its own
		// turn, as it would have (/compact, /review need one).
		defer s.mu.Unlock()
		return b.enqueue(ctx, s, content, steeringMeta(p.Meta) && !s.offersCommand(content))
	}
	turnCtx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	s.turns++
	first := s.turns == 1 // the first here: logPromptTitle checks the log
	s.mu.Unlock()
	return func(ctx context.Context) (acp.PromptResponse, error) {
		return b.runTurn(ctx, turnCtx, cancel, s, content, first)
	}, nil
}

// runTurn runs the turn of a prompt of s with content under turnCtx
// (cancel is its cancel) and answers it; ctx is the request's. When it
// ends, the session's next waiting prompt starts (queue.go).
func (b *Bridge) runTurn(ctx, turnCtx context.Context, cancel context.CancelFunc, s *liveSession, content []tools.Content, first bool) (resp acp.PromptResponse, err error) {
	defer func() {
		s.fails.end()
		next := s.turnEnded(promptResult{resp: resp, err: err})
		cancel()
		b.releaseLog(s)
		// The next waiting prompt's turn starts once this answer is
		// written (every update of this turn is before it); a close
		// meanwhile dropped it, and the log is released then.
		start := func() {
			s.startNext()
			b.releaseIfIdle(s)
		}
		if next && !acp.After(ctx, start) {
			start()
		}
	}()
	if !s.notices {
		b.turnFailures(s)
	}
	// A resumed session's log is decoded here, at its first turn.
	if err := s.agent.Store.Ready(); err != nil {
		return acp.PromptResponse{}, logError(s.id, "LOG_CORRUPT", err)
	}
	b.migrateModel(s)
	b.checkBalance(s)
	in, err := b.prepareTurn(turnCtx, s, content)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	if first {
		b.logPromptTitle(s, content)
	}
	in.AtBoundary = s.atBoundary
	restore := s.perm.runUnder(in.rules)
	out := b.cfg.Agent.RunTurn(turnCtx, s.agent, in.Input)
	restore()
	b.flushLog(s)
	if out.Err != nil {
		return acp.PromptResponse{}, promptError(out.Err)
	}
	b.titleAfter(ctx, s)
	return acp.PromptResponse{StopReason: acp.StopReason(out.StopReason), Usage: promptUsage(out.Usage)}, nil
}

// promptError maps a failed turn to its JSON-RPC error: -32000 for a
// missing or refused key, -32603 with the reason otherwise.
func promptError(err error) error {
	var te *agent.TurnError
	if errors.As(err, &te) {
		if te.Auth {
			return &acp.Error{Code: acp.CodeAuthRequired, Message: te.Message, Data: errData(te)}
		}
		return &acp.Error{Code: acp.CodeInternalError, Message: te.Message, Data: errData(te)}
	}
	return &acp.Error{Code: acp.CodeInternalError, Message: "Internal error: " + err.Error()}
}

func errData(te *agent.TurnError) map[string]any {
	d := map[string]any{"reason": te.Reason}
	if te.Status != 0 {
		d["status"] = te.Status
	}
	return d
}

// Title is a thread title from a prompt: its first non-empty line, at most
// 80 characters (runes), cut with "…".
func Title(content []tools.Content) string {
	for _, c := range content {
		for _, line := range strings.Split(c.Text, "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			if r := []rune(line); len(r) > 80 {
				return string(r[:79]) + "…"
			}
			return line
		}
	}
	return ""
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "sess_" + hex.EncodeToString(b[:])
}
