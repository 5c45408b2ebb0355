// This file is one server's state machine: starting, ready, down (the next
// call restarts it once), failed and stopped, and the goroutine that
// watches a live connection.

package toolmcp

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
