// This file reaches a server: the stdio, HTTP and SSE transports,
// initialize within the start timeout, and how a connection ends.

package toolmcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conn is one live connection to a server.
type conn struct {
	cs     *mcp.ClientSession
	proc   *proc // stdio only
	cancel context.CancelFunc
	done   chan struct{} // closed when the connection ended
	once   sync.Once
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
	switch tr := srv.cfg.transport(); {
	case o.Dial != nil:
		t = o.Dial(srv.cfg)
	case tr == TransportStdio:
		pt = &procTransport{cmd: stdioCommand(srv.cfg, o.Cwd)}
		t = pt
	case tr == TransportHTTP:
		t = &mcp.StreamableClientTransport{Endpoint: srv.cfg.URL, HTTPClient: httpClient(srv.cfg.Headers)}
	case tr == TransportSSE:
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
