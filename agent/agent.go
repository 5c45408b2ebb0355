// Package agent runs prompt turns: it sends the history and the tool
// schemas to the model, streams the answer, runs the tool calls the model
// asks for through the tools registry, and repeats until the model stops
// calling tools or the step limit is reached. Everything that happens is
// reported as typed session events to the session's store; the agent
// never talks ACP.
package agent

import (
	"log/slog"
	"time"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/tools"
)

// DefaultMaxSteps is the number of model requests one turn may make
// (--max-steps; past it the turn ends max_turn_requests).
const DefaultMaxSteps = 64

// DefaultMaxParallel is how many concurrency-safe calls of one response
// run at once, whatever the CPU count: reads and searches wait on the
// disk and the editor more than on the CPU.
const DefaultMaxParallel = 8

// Config is what every turn needs. Client and Tools are required.
type Config struct {
	Client llm.Client
	// Tools runs every call and names the tools of each request: its
	// own, then the session's (tools.SessionTools; an MCP server's),
	// read again for every model request.
	Tools    *tools.Registry
	Model    string
	MaxSteps int // model requests per turn; <= 0 means DefaultMaxSteps
	// MaxParallel is how many concurrency-safe calls run at once; <= 0
	// means DefaultMaxParallel.
	MaxParallel int
	Log         *slog.Logger
	// System builds the system prompt for a session cwd and the
	// session's client prompt (Settings.SystemPrompt); nil uses
	// SessionSystem. SystemFor calls it.
	System func(cwd string, client ClientPrompt) string
	// Meter gives the context window and the price of a model, for the
	// usage event after each response, and whether it takes images (the
	// user's images are sent to a model only when it does, else as their
	// text form, see History); nil: the default window
	// (llm.DefaultContextWindow), no price, no images.
	Meter *llm.Meter
	// Now is the clock a response's cost is priced at (prices may
	// depend on the hour); nil means time.Now.
	Now func() time.Time
	// CompactAt is the fill of the context window (Meter.Size), as a
	// fraction (0.8 for 80 %), from which a turn first compacts the
	// conversation (see compact.go); 0 turns automatic compaction off (a
	// /compact turn, Input.Compact, still compacts).
	CompactAt float64
}

// Agent runs turns for any number of sessions; it is safe for concurrent
// use by different sessions.
type Agent struct {
	cfg Config
}

// New returns an agent with cfg.
func New(cfg Config) *Agent {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = DefaultMaxParallel
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.System == nil {
		cfg.System = SessionSystem
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Agent{cfg: cfg}
}

// Model is the model a session uses when it has chosen none
// (Config.Model); "" for a nil agent.
func (a *Agent) Model() string {
	if a == nil {
		return ""
	}
	return a.cfg.Model
}

// Settings are a session's choices for its model requests: Model (""
// means the agent's Config.Model), Thinking (DeepSeek's thinking
// fields; the zero value sends none) and SystemPrompt (the editor's
// system prompt; the zero value is none). A change applies from the next
// model request, also within a running turn.
type Settings struct {
	Model        string
	Thinking     llm.Thinking
	SystemPrompt ClientPrompt
}

// SystemFor is the system prompt of s's next model request: Config.System
// of s's cwd and client prompt. Every request made for s uses it.
func (a *Agent) SystemFor(s *Session) string {
	return a.cfg.System(s.Tools.Cwd(), s.Settings().SystemPrompt)
}
