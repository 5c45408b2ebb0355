// Package server assembles the agent the way the binary runs it: a tools
// registry with the default tools (toolfs, toolbash, tooltodo, toolask,
// toolsearch, toolsub) and any extra ones, the bridge's permission step in the
// execute chain, the agent loop and the ACP bridge, all from one Options
// value. cmd/dsh-acp turns flags and environment into Options; the
// end-to-end tests build the same server in-process.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/agent"
	"github.com/dsh-acp/dsh-acp/bridge"
	"github.com/dsh-acp/dsh-acp/internal/agentcmd"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/sandbox"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/toolask"
	"github.com/dsh-acp/dsh-acp/toolbash"
	"github.com/dsh-acp/dsh-acp/toolfs"
	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/toolsearch"
	"github.com/dsh-acp/dsh-acp/toolsub"
	"github.com/dsh-acp/dsh-acp/tooltodo"
	"github.com/dsh-acp/dsh-acp/toolweb"
)

// Options is what a Server is built from. Client is required; every other
// field has a usable zero value.
type Options struct {
	// Client answers the model requests: llm.HTTP for an endpoint,
	// llm.NewReplay for recorded streams (required).
	Client llm.Client
	// Provider is the endpoint's API dialect (--provider): with
	// llm.ProviderDeepSeek the DeepSeek-only behaviour is on (the retired
	// model names' migration, the balance check; the cmd also picks the
	// DeepSeek catalog and offers the thinking option for it, and tools
	// that only DeepSeek's API serves read it here). "" is
	// llm.ProviderOpenAI.
	Provider llm.Provider
	// Model is the model name sent with every request (the --model
	// flag); the replay client ignores it.
	Model string
	// MaxSteps is the number of model requests one prompt turn may make
	// (--max-steps); <= 0 means agent.DefaultMaxSteps (64).
	MaxSteps int
	// Mode is the permission mode new sessions start in, one of the
	// permission.Modes ids (--mode); "" means permission.ModeDefault. Any
	// other value is an error from New.
	Mode string
	// StateDir is where session logs are kept (DSH_STATE_DIR); "" keeps
	// sessions in memory only (nothing to list or load later).
	StateDir string
	// SweepAfter is how long after New the leftovers of deleted sessions
	// in StateDir are swept (session.Sweep): 0 means DefaultSweepAfter,
	// a negative value at once. Close skips a sweep not started yet.
	SweepAfter time.Duration
	// LocationLineBase forces the base of `locations[].line` on the wire
	// to *LocationLineBase, 0 or 1 (--location-line-base); nil chooses per
	// client: 0 for Zed, 1 otherwise. Another value is an error from New.
	LocationLineBase *int
	// Sandbox is how shell commands are confined (--sandbox,
	// --sandbox-network); the zero value is workspace-write with the
	// network allowed.
	Sandbox sandbox.Config
	// Log receives the logs of every part; nil discards them.
	Log *slog.Logger
	// Version is the agent's version, sent as agentInfo.version.
	Version string
	// MaxMessageBytes is the largest ACP message read from the editor, in
	// bytes (--max-message-size); <= 0 means acp.DefaultMaxMessageBytes
	// (64 MiB). A longer message is answered with an error without being
	// held in memory.
	MaxMessageBytes int64
	// SpillMax is the output one shell command may save to its spill
	// files, in bytes (--max-spill-size); 0 means
	// toolbash.DefaultSpillMax (64 MiB), < 0 no limit.
	SpillMax int64
	// Models lists the endpoint's models (llm.HTTP; nil: no list). The
	// list is asked for once, at initialize; the model option shows it.
	Models llm.ModelLister
	// ModelsWait bounds how long session/new and session/load wait for
	// that list; 0 means bridge.DefaultModelsWait (1 s). ModelsTimeout
	// bounds the request itself; 0 means llm.DefaultModelListTimeout
	// (10 s).
	ModelsWait, ModelsTimeout time.Duration
	// Catalog is what is known about the endpoint's models without
	// asking it (llm.DeepSeek for DeepSeek's API, merged with a --prices
	// file): the models the selector offers without a list, context
	// windows and prices.
	Catalog llm.Catalog
	// ContextWindow is the context window, in tokens, of a model neither
	// the list nor the catalog describes (--context-window); <= 0 means
	// llm.DefaultContextWindow.
	ContextWindow int
	// Thinking offers the thinking option (DeepSeek's thinking mode and
	// effort); ThinkingDefault is the level sessions start in, one of
	// bridge.ThinkingLevels ("" means bridge.DefaultThinking). Another
	// value is an error from New.
	Thinking        bool
	ThinkingDefault string
	// MCPWait bounds how long session/new, load, resume and fork wait for the
	// MCP servers the editor names before answering; 0 means
	// bridge.DefaultMCPWait (2 s), a negative value no wait. Servers not
	// ready by then join the session when they are.
	MCPWait time.Duration
	// MCPTrusted names the MCP servers whose read-only hints count
	// (bridge.Config.MCPTrusted; --mcp-trusted).
	MCPTrusted []string
	// SandboxAllowRead are other tools' credentials (of sandbox.Secrets:
	// ~/.ssh, ...) the user lets commands read (--sandbox-allow-read).
	SandboxAllowRead []string
	// Auth is where the API key comes from: initialize's login method
	// (always offered), authenticate, logout, and the check that answers
	// a prompt without a key with -32000 (bridge.Auth; the zero value
	// checks nothing, for replays and tests).
	Auth Auth
	// Providers, when set, offers the providers/* methods (bridge.Providers).
	Providers *Providers
	// ImageModels are the models that take image input besides those
	// the catalog says do (--model-images); the zero value adds none.
	// initialize advertises promptCapabilities.image when the default
	// model, a catalog model or one of these takes images, and a prompt
	// may carry images only when its session's model takes them.
	ImageModels llm.ImageModels
	// Titles: after a session's first turn that ends normally, one short
	// model request writes its title (--titles; the cmd turns it off
	// under --replay and --record, whose recordings hold turns only);
	// false keeps the first prompt's line.
	Titles bool
	// CommandsDir is the user's folder of slash command files
	// ($XDG_CONFIG_HOME/dsh-acp/commands); "" reads none. The project's
	// .dsh/commands/ is always read.
	CommandsDir string
	// CompactAt is the fill of the model's context window, as a fraction
	// (0.8 for 80 %), from which a turn first compacts the conversation
	// (--compact-threshold); 0 turns automatic compaction off (/compact
	// still works). Another value outside [0, 1] is an error from New.
	CompactAt float64
	// Balance reads the account balance (llm.HTTP.Balance; nil: never),
	// for DeepSeek's API only: at most once per turn, in the background,
	// a session is told once when the balance is below LowBalance (by
	// currency code, e.g. {"USD": 1, "CNY": 5}; empty: never).
	Balance    func(context.Context) ([]llm.Balance, error)
	LowBalance map[string]float64
	// SubagentsSequential makes the calls of the subagent tools run one
	// at a time, in the model's order (under --replay, so that a
	// recording replays the same way every time); else the calls of one
	// response run at once, at most SubagentParallel of a session (0:
	// bridge.DefaultSubagentParallel, 4). SubagentDepth is how deep
	// children may nest (0: bridge.DefaultSubagentDepth, 1: no
	// grandchildren).
	SubagentsSequential             bool
	SubagentParallel, SubagentDepth int
	// PromptQueue is how many prompts a session holds waiting behind its
	// running turn (--prompt-queue); <= 0 means bridge.DefaultPromptQueue
	// (8).
	PromptQueue int
	// Tools are registered after the default tools (read, write, edit,
	// bash, bash_output, bash_kill, todo_write, ask_user, grep, glob,
	// subagent, subagent_fork), in
	// this order. Each tool states its own permission class and
	// concurrency safety (tools.Tool Class, ConcurrencySafe); nothing
	// else needs to know it. A tool that fails to register (a name
	// already taken, an invalid schema) is an error from New.
	Tools []tools.Tool
	// Web, when set, registers the web tools after the default ones:
	// web_search where the endpoint has a Search API, and web_fetch
	// (toolweb.Tools). Nil registers neither.
	Web *Web
}

// Web is what the web tools are built from (toolweb.Config, for
// Options.Web).
type Web = toolweb.Config

// ThinkingLevels are the ids of the thinking option's values
// (Options.ThinkingDefault), in the order the option lists them.
func ThinkingLevels() []string {
	ids := make([]string, 0, len(bridge.ThinkingLevels))
	for _, l := range bridge.ThinkingLevels {
		ids = append(ids, l.ID)
	}
	return ids
}

// ValidThinking reports whether id is a thinking level
// (Options.ThinkingDefault): one of ThinkingLevels or an old name of one
// ("on", which is "high").
func ValidThinking(id string) bool { return bridge.ValidThinking(id) }

// Auth is where the API key comes from (bridge.Auth: the login command,
// the check before each prompt, logout), for Options.Auth.
type Auth = bridge.Auth

// Providers is the model endpoint's routing for providers/*
// (bridge.Providers), for Options.Providers.
type Providers = bridge.Providers

// Server is one assembled agent, serving one editor connection. Build it
// with New, call Serve once, and Close it when the connection is done.
type Server struct {
	bridge *bridge.Bridge
	reg    *tools.Registry
	shell  *toolbash.Manager
	models *llm.ModelList
	sweep  sync.WaitGroup // the start-up sweep of deleted sessions' leftovers
	stop   chan struct{}  // closed by Close
	closed sync.Once
}

// New assembles a server from o. It returns an error, and starts nothing,
// when o.Client is nil, o.Mode, o.LocationLineBase, o.ThinkingDefault or
// o.CompactAt is not a valid value, or a tool fails to register (the
// error names the tool).
func New(o Options) (*Server, error) {
	lineBase, err := checkOptions(&o)
	if err != nil {
		return nil, err
	}
	reg := tools.NewRegistry()
	if o.StateDir != "" {
		// The sandbox probe's answer, for the agent's next processes of
		// this boot (in the state folder, hidden from commands).
		sandbox.SetProbeCache(filepath.Join(o.StateDir, ProbeCacheFile))
	}
	// Commands (the model's and the agent's own) never read the agent's
	// credentials, config and session logs, nor other tools' credentials.
	o.Sandbox.Hidden = append(sandbox.Secrets(o.StateDir, o.SandboxAllowRead...), o.Sandbox.Hidden...)
	shell := toolbash.New(toolbash.Options{Log: o.Log, Sandbox: o.Sandbox, SpillMax: o.SpillMax})
	for _, t := range builtinTools(o, shell) {
		if err := reg.Register(t); err != nil {
			shell.Shutdown()
			return nil, fmt.Errorf("server: registering tool %q: %w", t.Name, err)
		}
	}
	var models *llm.ModelList
	if o.Models != nil {
		models = llm.NewModelList(o.Models, o.ModelsTimeout, o.Log)
	}
	meter := &llm.Meter{Catalog: o.Catalog, Listed: models, ContextWindow: o.ContextWindow, ImageModels: o.ImageModels}
	a := agent.New(agent.Config{
		Client:    o.Client,
		Tools:     reg,
		Model:     o.Model,
		MaxSteps:  o.MaxSteps,
		Log:       o.Log,
		Meter:     meter,
		CompactAt: o.CompactAt,
	})
	b := bridge.New(bridge.Config{
		Agent:            a,
		Tools:            reg,
		Version:          o.Version,
		LocationLineBase: lineBase,
		Mode:             o.Mode,
		StateDir:         o.StateDir,
		SandboxWarning:   shell.SandboxWarning,
		Titles:           o.Titles,
		CommandsDir:      o.CommandsDir,
		AgentCmd:         agentcmd.Runner{Sandbox: o.Sandbox},
		Log:              o.Log,
		Limits:           acp.Limits{MaxMessageBytes: o.MaxMessageBytes},
		Models:           models,
		ModelsWait:       o.ModelsWait,
		KnownModels:      o.Catalog.Offer,
		Provider:         o.Provider,
		Thinking:         o.Thinking,
		ThinkingDefault:  o.ThinkingDefault,
		MCPWait:          o.MCPWait,
		MCPTrusted:       o.MCPTrusted,
		Auth:             o.Auth,
		Providers:        o.Providers,
		Images:           meter.Images,
		OffersImages:     offersImages(meter, o),
		Balance:          o.Balance,
		LowBalance:       o.LowBalance,
		SubagentParallel: o.SubagentParallel,
		SubagentDepth:    o.SubagentDepth,
		PromptQueue:      o.PromptQueue,
	})
	// The permission step comes first: every call the agent makes passes
	// it before the registry validates and runs it. Then the file tools
	// note when the session first runs a command (a read through the
	// editor judges the buffer against the disk with it).
	reg.Use(b.Permission)
	reg.Use(toolfs.WatchCommands(reg.Get))
	srv := &Server{bridge: b, reg: reg, shell: shell, models: models, stop: make(chan struct{})}
	if o.StateDir != "" {
		srv.startSweep(o.StateDir, o.SweepAfter, o.Log)
	}
	return srv, nil
}

// ProbeCacheFile is the file in Options.StateDir that keeps the sandbox
// probe's answer for the agent's later processes (sandbox.SetProbeCache).
const ProbeCacheFile = "sandbox-probe.json"

// DefaultSweepAfter is Options.SweepAfter's default: late enough that
// the sweep does not compete with what an editor asks first (the
// session list of a folder of 10,000 logs, which reads the same
// folders).
const DefaultSweepAfter = 10 * time.Second

// startSweep sweeps what deletes killed midway left beside their removed
// logs under dir, after delay (see Options.SweepAfter), on a goroutine
// Close stops (before it starts) or waits for. A session created
// meanwhile has a log or holds its lock, so nothing of it is swept.
func (s *Server) startSweep(dir string, delay time.Duration, log *slog.Logger) {
	if delay == 0 {
		delay = DefaultSweepAfter
	}
	s.sweep.Go(func() {
		if delay > 0 {
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-s.stop:
				return
			}
		}
		if n, err := session.Sweep(dir); n > 0 || err != nil {
			log.Info("removed the leftovers of deleted sessions", "files", n, "err", err)
		}
	})
}

// checkOptions checks o and fills its defaults (mode, log); it returns
// the bridge's line base (-1: per client).
func checkOptions(o *Options) (int, error) {
	if o.Client == nil {
		return 0, errors.New("server: Options.Client is required")
	}
	if o.Mode == "" {
		o.Mode = permission.ModeDefault
	}
	if !permission.ValidMode(o.Mode) {
		return 0, fmt.Errorf("server: unknown mode %q", o.Mode)
	}
	lineBase := -1 // the bridge's "per client"
	if o.LocationLineBase != nil {
		lineBase = *o.LocationLineBase
		if lineBase != 0 && lineBase != 1 {
			return 0, fmt.Errorf("server: LocationLineBase must be 0 or 1, got %d", lineBase)
		}
	}
	if o.ThinkingDefault != "" && !bridge.ValidThinking(o.ThinkingDefault) {
		return 0, fmt.Errorf("server: unknown thinking level %q", o.ThinkingDefault)
	}
	if o.CompactAt < 0 || o.CompactAt > 1 {
		return 0, fmt.Errorf("server: CompactAt must be within 0 and 1, got %v", o.CompactAt)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return lineBase, nil
}

// builtinTools are the tools every session has: the file, shell, todo,
// question, search and subagent tools, the web tools when o.Web is set,
// then o.Tools.
func builtinTools(o Options, shell *toolbash.Manager) []tools.Tool {
	all := append(toolfs.Tools(), shell.Tools()...)
	all = append(all, tooltodo.New(), toolask.New())
	all = append(all, toolsearch.Tools()...)
	all = append(all, toolsub.Tools(toolsub.Options{Sequential: o.SubagentsSequential})...)
	if o.Web != nil {
		all = append(all, toolweb.Tools(*o.Web)...)
	}
	return append(all, o.Tools...)
}

// Serve starts serving the editor on r (its requests, one JSON-RPC
// message per line) and w (everything the agent sends) and returns the
// connection; wait on its Done channel, or call its Shutdown.
func (s *Server) Serve(r io.Reader, w io.Writer) *acp.Conn {
	return s.bridge.Serve(r, w)
}

// Tools returns the server's registry: the default tools, then
// Options.Tools, with the permission step installed.
func (s *Server) Tools() *tools.Registry { return s.reg }

// SandboxWarning is the sentence to show the user once per session when
// shell commands will not be confined as Options.Sandbox asks (the kernel
// has no usable Landlock), or "" (toolbash.Manager.SandboxWarning); the
// shell tools log it at warn when the server is built, and every session
// opened tells the editor once (a notice, or a log line without
// session.notices).
func (s *Server) SandboxWarning() string { return s.shell.SandboxWarning() }

// Close stops what the tools started: it ends every shell command and
// background task (SIGTERM, then SIGKILL) and removes their spill files;
// it stops every session's MCP servers; then it closes every session
// log, releasing its lock (another process may then load the session); a
// model list request still under way is abandoned (its goroutine is
// waited for, which returns as soon as the request is cut). Call
// it once the connection is done; calling it again does nothing.
func (s *Server) Close() {
	s.closed.Do(func() { close(s.stop) })
	s.sweep.Wait()
	s.models.Close()
	s.shell.Shutdown()
	s.bridge.Close()
}

// offersImages reports whether a model the sessions may use takes images
// (what initialize advertises, once): the default model, a model the
// catalog offers, or any model --model-images names (the endpoint's own
// list, which may offer it, is not in yet at initialize).
func offersImages(m *llm.Meter, o Options) bool {
	if m.Images(o.Model) || o.ImageModels.Any() {
		return true
	}
	for _, id := range o.Catalog.Offer {
		if m.Images(id) {
			return true
		}
	}
	return false
}
