// Package bridge implements the ACP agent side: a *Bridge is an acp.Agent
// (with the optional interfaces for load, resume, list, close, delete,
// fork, modes and config options) that serves the editor's requests,
// keeps each session's capability snapshot and its model / thinking /
// mode choices, and turns the agent loop's events into `session/update`s
// through one present.Presenter per session.
package bridge

import (
	"context"
	"io"
	"log/slog"
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
	for _, s := range b.liveSessions() {
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
