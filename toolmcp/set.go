package toolmcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-acp/dsh-acp/tools"
)

// Default time limits: starting a server (initialize) and
// listing its tools, each; one tool call.
const (
	DefaultStartTimeout = 10 * time.Second
	DefaultCallTimeout  = 120 * time.Second
)

// Options configure a Set. Registry is required.
type Options struct {
	// Registry receives the servers' tools as they become ready, and
	// loses them when they go away: the session's own registry
	// (tools.SessionTools(session)).
	Registry *tools.Registry
	// Cwd is the working directory of stdio servers (the session's); ""
	// keeps the agent's.
	Cwd string
	// Notice, when set, tells the user about a server that failed: name
	// is the server's configured name, reason one sentence (did not
	// start, stopped, left a tool out). It is called from the set's
	// goroutines and must not block for long.
	Notice func(name, reason string)
	// Log receives the set's log lines; nil discards them.
	Log *slog.Logger
	// StartTimeout bounds initialize and the tool listing, each;
	// <= 0 means DefaultStartTimeout (10 s).
	StartTimeout time.Duration
	// CallTimeout bounds one tool call; <= 0 means DefaultCallTimeout
	// (120 s). A call past it is cancelled on the server.
	CallTimeout time.Duration
	// ClientName and ClientVersion are sent in initialize as clientInfo;
	// "" means "dsh-acp" and no version.
	ClientName, ClientVersion string
	// Dial, when set, gives the transport of every server instead of the
	// one its configuration names (tests and benchmarks connect in-memory
	// servers through it); nil uses the configured transport.
	Dial func(Server) mcp.Transport
}

// Server states, as Status reports them.
const (
	StateStarting = "starting" // connecting, initializing, listing
	StateReady    = "ready"    // its tools are registered
	StateDown     = "down"     // it stopped; the next call restarts it
	StateFailed   = "failed"   // it did not start, or stopped again: no tools
	StateStopped  = "stopped"  // the set was closed
)

// Status is one server's state.
type Status struct {
	// Name is the configured name; State one of the State constants.
	Name, State string
	// Tools are the function names registered for it, sorted.
	Tools []string
	// Reason says why it is down or failed.
	Reason string
}

// Set is the MCP servers of one session. Its methods are safe for
// concurrent use.
type Set struct {
	o       Options
	ctx     context.Context // cancelled by Close
	cancel  context.CancelFunc
	servers []*server
	started sync.WaitGroup // the first start of every server
	ready   chan struct{}  // closed once started is done
	wg      sync.WaitGroup // every goroutine the set owns
	once    sync.Once
}

// Start starts every server in parallel and returns at once; each
// server's tools join opts.Registry when it is ready (Wait waits for
// that). A server that cannot start is reported to opts.Notice and the
// log and has no tools; the others are not affected.
//
// A stdio server runs in opts.Cwd in its own process group, killed with
// the agent (Linux), with the agent's environment less the variables
// whose names contain KEY, SECRET or TOKEN, plus the server's Env.
// HTTP and SSE servers get the configured headers on every request. The
// client advertises no capabilities (no roots, sampling or elicitation).
func Start(servers []Server, opts Options) *Set {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.ClientName == "" {
		opts.ClientName = "dsh-acp"
	}
	s := &Set{o: opts, ready: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	keys := serverKeys(servers)
	for i, cfg := range servers {
		srv := &server{set: s, cfg: cfg, key: keys[i], poke: make(chan struct{}, 1), state: StateStarting, registered: map[string]registered{}}
		srv.client = mcp.NewClient(&mcp.Implementation{Name: opts.ClientName, Version: opts.ClientVersion}, &mcp.ClientOptions{
			Logger:       opts.Log,
			Capabilities: &mcp.ClientCapabilities{},
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				select {
				case srv.poke <- struct{}{}:
				default:
				}
			},
		})
		s.servers = append(s.servers, srv)
		s.started.Add(1)
		s.wg.Add(2)
		go func() {
			defer s.wg.Done()
			defer s.started.Done()
			srv.startFirst()
		}()
		go func() {
			defer s.wg.Done()
			srv.refresher()
		}()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.started.Wait()
		close(s.ready)
	}()
	return s
}

// Wait returns when every server has finished its first start (ready or
// failed), or ctx's error when ctx ends first.
func (s *Set) Wait(ctx context.Context) error {
	select {
	case <-s.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Status returns every server's state, in configuration order.
func (s *Set) Status() []Status {
	out := make([]Status, 0, len(s.servers))
	for _, srv := range s.servers {
		srv.mu.Lock()
		st := Status{Name: srv.cfg.Name, State: srv.state, Reason: srv.reason}
		srv.mu.Unlock()
		srv.toolsMu.Lock()
		for n := range srv.registered {
			st.Tools = append(st.Tools, n)
		}
		srv.toolsMu.Unlock()
		sort.Strings(st.Tools)
		out = append(out, st)
	}
	return out
}

// Definition returns what the cards of the registered tool called name
// (a function name, mcp__<server>__<tool>) are built from, as JSON to log
// beside its calls: the server's and the tool's names, the display title,
// readOnlyHint and destructiveHint, the schema's required properties.
// ReplayTool turns it back into a tool whose cards are the same, without
// the server. ok is false when no server of s has that tool now.
func (s *Set) Definition(name string) (def json.RawMessage, ok bool) {
	for _, srv := range s.servers {
		srv.toolsMu.Lock()
		r, found := srv.registered[name]
		srv.toolsMu.Unlock()
		if found {
			b, err := json.Marshal(r.def)
			return b, err == nil
		}
	}
	return nil, false
}

// Close stops every server (stdio: stdin closed, then SIGTERM and
// SIGKILL to its process group, a second apart) and removes their
// tools from the registry; calls still running fail. It returns when
// the servers and the set's goroutines are gone; later calls do
// nothing.
func (s *Set) Close() {
	s.once.Do(func() {
		s.cancel()
		var wg sync.WaitGroup
		for _, srv := range s.servers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				srv.shutdown()
			}()
		}
		wg.Wait()
		s.wg.Wait()
	})
}
