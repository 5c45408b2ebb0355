package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// DrainTimeout bounds how long the connection waits, once its input has
// ended or Shutdown was called, for requests already read to be answered
// (within 1 s, so a closing editor is never kept waiting).
const DrainTimeout = time.Second

// RequestFunc computes the response to one request. It runs on its own
// goroutine; ctx is cancelled by `$/cancel_request` for this request and
// by shutdown, and accepts [Then]. It returns the result (any
// JSON-encodable value; nil is sent as {}) or an error (an *Error chooses
// the JSON-RPC code; any other error is sent as -32603).
type RequestFunc func(ctx context.Context) (any, error)

// Handler serves the editor's messages without types: the layer under
// the method table that [NewAgentConn] builds from an [Agent].
// HandleNotification and PrepareRequest are called on the read goroutine
// in arrival order and must not block on the editor; the RequestFunc that
// PrepareRequest returns (nil: -32601) does the work on its own
// goroutine. Whatever PrepareRequest records (e.g. a prompt's cancel
// function) is therefore in place before the next message is read, so a
// `session/cancel` that follows a `session/prompt` always finds it.
type Handler interface {
	HandleNotification(ctx context.Context, method string, params json.RawMessage)
	PrepareRequest(ctx context.Context, method string, params json.RawMessage) RequestFunc
	// Shutdown is called once when the input ends or Conn.Shutdown is
	// called, before the connection waits for requests to be answered.
	Shutdown()
}

// Conn is an ACP connection over a pair of streams (stdin/stdout).
type Conn struct {
	rpc    *jsonrpc2.Conn
	stream *lineStream
	h      Handler
	log    *slog.Logger

	base      context.Context
	cancelAll context.CancelFunc

	mu sync.Mutex
	// inflight are the requests being served, by id (JSON text); a
	// client that reuses an id while the first request still runs has
	// both listed, so a cancel reaches the one running.
	inflight map[string][]*inflight
	wg       sync.WaitGroup
	nextID   atomic.Uint64

	drainOnce sync.Once
	draining  bool // guarded by mu; set once drain begins
}

type inflight struct {
	cancel         context.CancelFunc
	cancelledByRPC atomic.Bool
}

// NewConn starts serving h over r (the editor's messages) and w (ours),
// with the default Limits. Closing r's writer side (EOF) drains and
// closes the connection; see [Conn.Done].
func NewConn(r io.Reader, w io.Writer, h Handler, log *slog.Logger) *Conn {
	return NewConnLimits(r, w, h, log, Limits{})
}

// NewConnLimits is NewConn with the given Limits (zero fields: defaults).
func NewConnLimits(r io.Reader, w io.Writer, h Handler, log *slog.Logger, lim Limits) *Conn {
	c := newConn(r, w, log, lim)
	c.start(h)
	return c
}

// newConn returns a connection that does not read yet; start begins.
func newConn(r io.Reader, w io.Writer, log *slog.Logger, lim Limits) *Conn {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Conn{log: log, inflight: map[string][]*inflight{}}
	c.base, c.cancelAll = context.WithCancel(context.Background())
	c.stream = newLineStream(r, w, log, lim)
	c.stream.onEOF = c.drain
	return c
}

// start serves h: the read goroutine begins.
func (c *Conn) start(h Handler) {
	c.h = h
	c.rpc = jsonrpc2.NewConn(context.Background(), c.stream, rpcHandler{c},
		jsonrpc2.SetLogger(slog.NewLogLogger(c.log.Handler(), slog.LevelWarn)))
}

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.rpc.DisconnectNotify() }

// Shutdown ends the connection as stdin EOF would: running work is
// cancelled, requests already read are answered within DrainTimeout, and
// the connection closes. Safe to call more than once and concurrently.
func (c *Conn) Shutdown() {
	c.drain()
	c.rpc.Close()
}

// drain cancels everything in flight, tells the handler, and waits (at
// most DrainTimeout) for the requests already read to be answered.
func (c *Conn) drain() {
	c.drainOnce.Do(func() {
		c.mu.Lock()
		c.draining = true
		c.mu.Unlock()
		c.cancelAll()
		c.h.Shutdown()
		done := make(chan struct{})
		go func() { c.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(DrainTimeout):
			c.log.Warn("acp: requests still running at shutdown were dropped")
		}
	})
}

// Notify sends a notification. It returns once the message is written.
// Params are encoded by encoding/json with its default (HTML) escaping,
// as the responses and requests are; a SessionNotification (value or
// pointer) is written straight into the line, the same bytes. An error is
// returned when params cannot be encoded (nothing is written then) or
// the write fails.
func (c *Conn) Notify(method string, params any) error {
	c.stream.enter()
	defer c.stream.leave()
	switch n := params.(type) {
	case SessionNotification:
		return c.stream.writeNotification(method, &n, nil)
	case *SessionNotification:
		if n != nil {
			return c.stream.writeNotification(method, n, nil)
		}
	}
	return c.stream.writeNotification(method, nil, params)
}

// Call sends a request to the editor and waits for its answer, decoded
// into result. It returns ctx's error when ctx ends first (and tells the
// editor with `$/cancel_request`), an *Error when the editor answers with
// an error, and an error when the connection closes or is shutting down.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.base, cancel)
	defer stop()
	id := jsonrpc2.ID{Num: c.nextID.Add(1)}
	c.stream.enter()
	w, err := c.rpc.DispatchCall(ctx, method, params, jsonrpc2.PickID(id))
	c.stream.leave()
	if err != nil {
		return fmt.Errorf("acp: %s: %w", method, err)
	}
	var raw json.RawMessage
	err = w.Wait(ctx, &raw)
	if err == nil {
		if raw = c.stream.resolve(raw); result == nil {
			return nil
		}
		if err := json.Unmarshal(raw, result); err != nil {
			return fmt.Errorf("acp: %s: decoding the answer: %w", method, err)
		}
		return nil
	}
	var rerr *jsonrpc2.Error
	if errors.As(err, &rerr) {
		e := &Error{Code: int(rerr.Code), Message: rerr.Message}
		if rerr.Data != nil {
			e.Data = *rerr.Data
		}
		return e
	}
	if ctx.Err() != nil {
		if c.base.Err() == nil {
			_ = c.Notify(MethodCancelRequest, map[string]any{"requestId": id.Num})
		}
		return fmt.Errorf("acp: %s: %w", method, ctx.Err())
	}
	return fmt.Errorf("acp: %s: %w", method, err)
}

// rpcHandler adapts the connection to jsonrpc2.Handler; it runs on the
// read goroutine.
type rpcHandler struct{ c *Conn }

func (h rpcHandler) Handle(_ context.Context, rc *jsonrpc2.Conn, req *jsonrpc2.Request) {
	c := h.c
	var params json.RawMessage
	if req.Params != nil {
		params = c.stream.resolve(*req.Params)
	}
	if req.Notif {
		if req.Method == MethodCancelRequest {
			c.cancelRequest(params)
			return
		}
		c.h.HandleNotification(c.base, req.Method, params)
		return
	}
	ctx, cancel := context.WithCancel(c.base)
	then := &thenSlot{}
	ctx = context.WithValue(ctx, thenKey{}, then)
	key := req.ID.String()
	in := &inflight{cancel: cancel}
	c.mu.Lock()
	if c.draining {
		// Read after Shutdown began (it does not stop the reader at
		// once): answered now, without joining what drain waits for.
		c.mu.Unlock()
		cancel()
		c.reply(rc, req, nil, &Error{Code: CodeInternalError, Message: "Internal error: the agent is shutting down"}, nil)
		return
	}
	c.wg.Add(1) // under mu: never concurrent with drain's Wait
	c.inflight[key] = append(c.inflight[key], in)
	c.mu.Unlock()
	fn := c.h.PrepareRequest(ctx, req.Method, params)
	go func() {
		defer c.wg.Done()
		defer func() {
			c.mu.Lock()
			c.inflight[key] = slices.DeleteFunc(c.inflight[key], func(x *inflight) bool { return x == in })
			if len(c.inflight[key]) == 0 {
				delete(c.inflight, key)
			}
			c.mu.Unlock()
			cancel()
		}()
		res, err := c.run(ctx, fn, req.Method)
		if in.cancelledByRPC.Load() {
			res, err = nil, &Error{Code: CodeRequestCancelled, Message: "Request cancelled"}
		}
		c.reply(rc, req, res, err, then)
	}()
}

// run calls fn, turning a panic into an internal error.
func (c *Conn) run(ctx context.Context, fn RequestFunc, method string) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("acp: handler panicked", "method", method, "panic", p)
			err = &Error{Code: CodeInternalError, Message: fmt.Sprintf("Internal error: %s failed unexpectedly", method)}
		}
	}()
	if fn == nil {
		return nil, Errorf(CodeMethodNotFound, "Method not found: %s", method)
	}
	return fn(ctx)
}

// thenSlot holds the functions [Then] registered for one request.
type thenSlot struct {
	mu  sync.Mutex
	fns []func()
	// after are the functions [After] registered.
	after []func()
}

// runAfter runs what After registered (s may be nil).
func (s *thenSlot) runAfter() {
	if s == nil {
		return
	}
	s.drain(&s.after)
}

// drain takes the functions in list (one of s's, under s.mu) and runs
// them in order.
func (s *thenSlot) drain(list *[]func()) {
	s.mu.Lock()
	fns := *list
	*list = nil
	s.mu.Unlock()
	for _, f := range fns {
		f()
	}
}

// reply writes the response and then runs what Then registered (only
// after a successful result), then what After registered (always).
func (c *Conn) reply(rc *jsonrpc2.Conn, req *jsonrpc2.Request, res any, err error, then *thenSlot) {
	defer then.runAfter()
	c.stream.enter()
	defer c.stream.leave()
	ctx := context.Background()
	if err != nil {
		e := asError(err)
		je := &jsonrpc2.Error{Code: int64(e.Code), Message: e.Message}
		if e.Data != nil {
			je.SetError(e.Data)
		}
		if werr := rc.ReplyWithError(ctx, req.ID, je); werr != nil {
			c.log.Warn("acp: could not send an error response", "method", req.Method, "err", werr)
		}
		return
	}
	if res == nil {
		res = struct{}{}
	}
	if werr := rc.Reply(ctx, req.ID, res); werr != nil {
		c.log.Warn("acp: could not send a response", "method", req.Method, "err", werr)
		return
	}
	then.drain(&then.fns)
}

// cancelRequest handles `$/cancel_request`: the context of the running
// request with that id (every one, should the client have reused it
// while one runs) is cancelled, and it will be answered with -32800. A
// request with that id that has already finished is unaffected.
func (c *Conn) cancelRequest(params json.RawMessage) {
	var p CancelRequestNotification
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		c.log.Debug("acp: $/cancel_request without a usable requestId")
		return
	}
	key := string(p.RequestID)
	if p.RequestID[0] == '"' {
		var s string
		if json.Unmarshal(p.RequestID, &s) != nil {
			return
		}
		key = strconv.Quote(s)
	}
	c.mu.Lock()
	running := slices.Clone(c.inflight[key])
	c.mu.Unlock()
	if len(running) == 0 {
		c.log.Debug("acp: $/cancel_request for a request that is not running", "id", key)
		return
	}
	for _, in := range running {
		in.cancelledByRPC.Store(true)
		in.cancel()
	}
}
