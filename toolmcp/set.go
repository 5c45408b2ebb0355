package toolmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-acp/dsh-acp/tools"
)

// Default time limits (issue 16): starting a server (initialize) and
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

// server is one configured server and its current connection.
type server struct {
	set    *Set
	cfg    Server
	key    string // the server part of its function names
	client *mcp.Client
	poke   chan struct{} // tools/list_changed arrived (capacity 1)

	startMu sync.Mutex // held while (re)starting

	mu        sync.Mutex
	conn      *conn // nil while down
	state     string
	reason    string
	restarted bool // the one restart was used
	closed    bool

	listMu     sync.Mutex            // held while listing and registering: one list at a time
	toolsMu    sync.Mutex            // guards registered
	registered map[string]registered // by function name
}

// registered is one tool of the server in the registry: the fingerprint
// of its MCP definition (to tell a changed tool on re-listing) and what
// its cards are built from.
type registered struct {
	fp  string
	def *toolDef
}

// conn is one live connection to a server.
type conn struct {
	cs     *mcp.ClientSession
	proc   *proc // stdio only
	cancel context.CancelFunc
	done   chan struct{} // closed when the connection ended
	once   sync.Once
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

func (srv *server) notice(reason string) {
	srv.set.o.Log.Warn("MCP server: "+reason, "server", srv.cfg.Name)
	if srv.set.o.Notice != nil {
		srv.set.o.Notice(srv.cfg.Name, reason)
	}
}

// startFirst is the server's first start.
func (srv *server) startFirst() {
	begin := time.Now()
	if err := srv.cfg.check(); err != nil {
		srv.fail("not started: " + err.Error())
		return
	}
	srv.startMu.Lock()
	defer srv.startMu.Unlock()
	c, err := srv.connect(srv.set.ctx)
	if err != nil {
		srv.fail("did not start: " + err.Error())
		return
	}
	if !srv.adopt(c) {
		return
	}
	if err := srv.sync(c); err != nil {
		srv.drop(c)
		srv.fail("did not start: " + err.Error())
		return
	}
	srv.mu.Lock()
	if srv.conn == c {
		srv.state = StateReady
	}
	srv.mu.Unlock()
	srv.toolsMu.Lock()
	n := len(srv.registered)
	srv.toolsMu.Unlock()
	srv.set.o.Log.Info("MCP server ready", "server", srv.cfg.Name, "tools", n, "ms", time.Since(begin).Milliseconds())
}

// fail marks the server failed for good, without tools.
func (srv *server) fail(reason string) {
	srv.mu.Lock()
	if srv.closed {
		srv.mu.Unlock()
		return
	}
	srv.state, srv.reason, srv.conn = StateFailed, reason, nil
	srv.mu.Unlock()
	srv.unregisterAll()
	srv.notice(reason)
}

// adopt makes c the current connection, unless the set was closed
// meanwhile (then c is closed and adopt reports false).
func (srv *server) adopt(c *conn) bool {
	srv.mu.Lock()
	if srv.closed {
		srv.mu.Unlock()
		c.close()
		return false
	}
	srv.conn = c
	srv.mu.Unlock()
	srv.set.wg.Add(1)
	go func() {
		defer srv.set.wg.Done()
		srv.watch(c)
	}()
	return true
}

// drop closes c and forgets it.
func (srv *server) drop(c *conn) {
	srv.mu.Lock()
	if srv.conn == c {
		srv.conn = nil
	}
	srv.mu.Unlock()
	c.close()
}

// connect starts (stdio) or reaches (HTTP, SSE) the server and runs
// initialize, within StartTimeout and while ctx lasts.
func (srv *server) connect(ctx context.Context) (*conn, error) {
	o := srv.set.o
	// The connection lives on connCtx (the SSE transport keeps the
	// context of its first request); the timer and ctx only cut the
	// start short.
	connCtx, cancel := context.WithCancel(srv.set.ctx)
	timer := time.AfterFunc(o.StartTimeout, cancel)
	stopCtx := context.AfterFunc(ctx, cancel)
	var t mcp.Transport
	var pt *procTransport
	switch srv.cfg.transport() {
	case testTransport:
		t = testTransports[srv.cfg.URL]
	case TransportStdio:
		pt = &procTransport{cmd: stdioCommand(srv.cfg, o.Cwd)}
		t = pt
	case TransportHTTP:
		t = &mcp.StreamableClientTransport{Endpoint: srv.cfg.URL, HTTPClient: httpClient(srv.cfg.Headers)}
	case TransportSSE:
		t = &mcp.SSEClientTransport{Endpoint: srv.cfg.URL, HTTPClient: httpClient(srv.cfg.Headers)}
	}
	cs, err := srv.client.Connect(connCtx, t, nil)
	timedOut := !timer.Stop()
	stopCtx()
	var p *proc
	if pt != nil {
		p = pt.proc
	}
	if err != nil {
		cancel()
		if p != nil {
			p.stop()
		}
		switch {
		case timedOut:
			return nil, fmt.Errorf("no answer to initialize within %s", o.StartTimeout)
		case ctx.Err() != nil || srv.set.ctx.Err() != nil:
			return nil, errors.New("cancelled")
		case p != nil:
			// It answered nothing useful and ended (or was stopped just
			// now): how it ended says more than the closed pipe.
			return nil, errExited(p)
		}
		return nil, err
	}
	return &conn{cs: cs, proc: p, cancel: cancel, done: make(chan struct{})}, nil
}

// testTransport is a transport only the package's tests and benchmarks
// name: Server.URL then keys testTransports (in-memory servers).
const testTransport = "test-in-memory"

var testTransports = map[string]mcp.Transport{}

// close ends the connection and, for stdio, the process (see proc.stop);
// HTTP's closing request gets 2 s.
func (c *conn) close() {
	c.once.Do(func() {
		closed := make(chan struct{})
		go func() {
			_ = c.cs.Close()
			close(closed)
		}()
		if c.proc != nil {
			c.proc.stop()
		}
		select {
		case <-closed:
		case <-time.After(2 * time.Second):
		}
		c.cancel()
	})
}

// ended reports whether the connection is gone.
func (c *conn) ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// reason says why the connection ended.
func (c *conn) reason() string {
	if c.proc != nil {
		select {
		case <-c.proc.done:
		case <-time.After(time.Second):
		}
		if r := c.proc.reason(); r != "" {
			return "the server process ended (" + r + ")"
		}
	}
	return "the connection closed"
}

// watch waits for c to end and, unless the server is being closed,
// marks the server down (one restart left) or failed.
func (srv *server) watch(c *conn) {
	_ = c.cs.Wait()
	close(c.done)
	if c.proc != nil {
		c.proc.stop() // it may have closed its stdout and still run
	}
	srv.mu.Lock()
	if srv.closed || srv.conn != c {
		srv.mu.Unlock()
		return
	}
	srv.mu.Unlock()
	reason := c.reason()
	srv.mu.Lock()
	if srv.closed || srv.conn != c {
		srv.mu.Unlock()
		return
	}
	srv.conn = nil
	final := srv.restarted
	if final {
		srv.state = StateFailed
		srv.reason = "stopped again: " + reason
	} else {
		srv.state = StateDown
		srv.reason = "stopped: " + reason
	}
	srv.mu.Unlock()
	c.cancel()
	if final {
		srv.unregisterAll()
		srv.notice("stopped again: " + reason + "; its tools are gone for this session")
		return
	}
	srv.notice("stopped: " + reason + "; it is restarted at the next call of one of its tools")
}

// live returns the current connection, restarting a server that
// stopped, once per session.
func (srv *server) live(ctx context.Context) (*conn, error) {
	if c := srv.current(); c != nil {
		return c, nil
	}
	srv.startMu.Lock()
	defer srv.startMu.Unlock()
	if c := srv.current(); c != nil {
		return c, nil
	}
	srv.mu.Lock()
	closed, state, reason, restarted := srv.closed, srv.state, srv.reason, srv.restarted
	if !closed && state == StateDown && !restarted {
		srv.restarted, srv.state = true, StateStarting
	}
	srv.mu.Unlock()
	switch {
	case closed:
		return nil, mcpError(CodeServerDown, "MCP server %q was stopped with the session", srv.cfg.Name)
	case state != StateDown:
		return nil, mcpError(CodeServerDown, "MCP server %q is not running (%s)", srv.cfg.Name, reason)
	case restarted:
		return nil, mcpError(CodeServerDown, "MCP server %q is not running (%s); it was restarted once already", srv.cfg.Name, reason)
	}
	c, err := srv.connect(ctx)
	if err == nil && srv.adopt(c) {
		err = srv.sync(c)
		if err != nil {
			srv.drop(c)
		}
	} else if err == nil {
		err = errors.New("stopped with the session")
	}
	if err != nil {
		if ctx.Err() != nil {
			// The call was cancelled, not the restart refused: keep the
			// restart for the next call.
			srv.mu.Lock()
			srv.restarted, srv.state = false, StateDown
			srv.mu.Unlock()
			return nil, ctx.Err()
		}
		srv.fail("could not be restarted: " + err.Error())
		return nil, mcpError(CodeServerDown, "MCP server %q stopped and could not be restarted: %v", srv.cfg.Name, err)
	}
	srv.mu.Lock()
	if srv.conn == c {
		srv.state, srv.reason = StateReady, ""
	}
	srv.mu.Unlock()
	srv.set.o.Log.Info("MCP server restarted", "server", srv.cfg.Name)
	return c, nil
}

// current returns the live connection, or nil.
func (srv *server) current() *conn {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.conn != nil && !srv.conn.ended() {
		return srv.conn
	}
	return nil
}

// refresher re-lists the tools when the server says they changed.
func (srv *server) refresher() {
	for {
		select {
		case <-srv.set.ctx.Done():
			return
		case <-srv.poke:
		}
		c := srv.current()
		if c == nil {
			continue
		}
		if err := srv.sync(c); err != nil {
			srv.set.o.Log.Warn("MCP server: re-listing tools after tools/list_changed failed", "server", srv.cfg.Name, "err", err)
		}
	}
}

// sync lists c's tools (within StartTimeout) and makes the registry
// hold exactly them: new and changed tools are (re)registered, vanished
// ones unregistered. A tool that cannot be registered (an input schema
// that does not compile) is left out with a notice.
func (srv *server) sync(c *conn) error {
	srv.listMu.Lock()
	defer srv.listMu.Unlock()
	var list []*mcp.Tool
	if res := c.cs.InitializeResult(); res == nil || res.Capabilities == nil || res.Capabilities.Tools != nil {
		ctx, cancel := context.WithTimeout(srv.set.ctx, srv.set.o.StartTimeout)
		defer cancel()
		for t, err := range c.cs.Tools(ctx, nil) {
			if err != nil {
				if ctx.Err() == context.DeadlineExceeded {
					return fmt.Errorf("no answer to tools/list within %s", srv.set.o.StartTimeout)
				}
				return fmt.Errorf("tools/list: %w", err)
			}
			list = append(list, t)
		}
	}
	srv.mu.Lock()
	closed := srv.closed
	srv.mu.Unlock()
	if closed {
		return errors.New("stopped with the session")
	}
	byName := map[string]*mcp.Tool{}
	var names []string
	for _, t := range list {
		if t != nil && byName[t.Name] == nil {
			byName[t.Name] = t
			names = append(names, t.Name)
		}
	}
	sort.Strings(names)
	fnames := toolNames(srv.key, names)
	var skipped []string
	defer func() {
		// After the unlock: Notice may look at Status.
		for _, reason := range skipped {
			srv.notice(reason)
		}
	}()
	srv.toolsMu.Lock()
	defer srv.toolsMu.Unlock()
	reg := srv.set.o.Registry
	next := map[string]registered{}
	for _, orig := range names {
		fname, ok := fnames[orig]
		if !ok {
			continue
		}
		t := byName[orig]
		fp := fingerprint(t)
		old, had := srv.registered[fname]
		if had && old.fp == fp {
			next[fname] = old
			continue
		}
		if had {
			reg.Unregister(fname)
		}
		tool, def, err := newTool(srv, fname, t)
		if err == nil {
			err = reg.Register(tool)
		}
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("tool %q left out: %v", orig, err))
			continue
		}
		next[fname] = registered{fp: fp, def: def}
	}
	for fname := range srv.registered {
		if _, keep := next[fname]; !keep {
			reg.Unregister(fname)
		}
	}
	srv.registered = next
	return nil
}

func fingerprint(t *mcp.Tool) string {
	b, _ := json.Marshal(t)
	return string(b)
}

// unregisterAll removes every tool of the server from the registry.
func (srv *server) unregisterAll() {
	srv.toolsMu.Lock()
	defer srv.toolsMu.Unlock()
	for fname := range srv.registered {
		srv.set.o.Registry.Unregister(fname)
	}
	srv.registered = map[string]registered{}
}

// shutdown stops the server for good (Close).
func (srv *server) shutdown() {
	srv.mu.Lock()
	srv.closed = true
	c := srv.conn
	srv.conn = nil
	srv.state = StateStopped
	srv.mu.Unlock()
	if c != nil {
		c.close()
	}
	srv.unregisterAll()
}

// call runs one tool call on the server.
func (srv *server) call(ctx context.Context, tool string, args json.RawMessage) (tools.Output, error) {
	c, err := srv.live(ctx)
	if err != nil {
		return tools.Output{}, err
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	timeout := srv.set.o.CallTimeout
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := c.cs.CallTool(callCtx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return tools.Output{}, ctx.Err()
		case errors.Is(callCtx.Err(), context.DeadlineExceeded):
			return tools.Output{}, mcpError(CodeTimeout, "MCP server %q did not answer %s within %s; the call was cancelled", srv.cfg.Name, tool, timeout)
		}
		var wire *jsonrpc.Error
		if errors.As(err, &wire) {
			// The server answered, with a JSON-RPC error.
			return tools.Output{}, mcpError(CodeProtocol, "MCP server %q: %s: %v", srv.cfg.Name, tool, wire)
		}
		// The transport failed (EOF, a closed connection): give the
		// connection a moment to report that it ended, and why.
		select {
		case <-c.done:
			return tools.Output{}, mcpError(CodeServerDown, "MCP server %q stopped during the call: %s", srv.cfg.Name, c.reason())
		case <-time.After(2 * time.Second):
		}
		return tools.Output{}, mcpError(CodeServerDown, "MCP server %q: %s failed: %v", srv.cfg.Name, tool, err)
	}
	return output(srv.cfg.Name, tool, res)
}

// httpClient sends headers with every request.
func httpClient(headers []HTTPHeader) *http.Client {
	if len(headers) == 0 {
		return &http.Client{}
	}
	return &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: headers}}
}

type headerTransport struct {
	base    http.RoundTripper
	headers []HTTPHeader
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for _, h := range t.headers {
		r.Header.Set(h.Name, h.Value)
	}
	return t.base.RoundTrip(r)
}
