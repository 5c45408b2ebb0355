// Package acpclient is a small ACP client (the editor's side) used by the
// demo subcommand and by tests: it sends requests over a line-delimited
// JSON-RPC stream, hands every message the agent writes to an observer,
// and answers the agent's requests (permission, fs) with callbacks.
package acpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/dsh-acp/dsh-acp/acp"
)

// Message is one JSON-RPC message as read from the agent.
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *acp.Error      `json:"error,omitempty"`
	// Raw is the line as the agent wrote it.
	Raw []byte `json:"-"`
}

// Client talks to one agent.
type Client struct {
	w   io.Writer
	wmu sync.Mutex

	// OnMessage, when set, sees every message the agent writes, in order,
	// on the reading goroutine (set it before Start).
	OnMessage func(Message)
	// OnRequest answers a request from the agent; nil (or a nil result and
	// error) answers `{}`. It runs on its own goroutine.
	OnRequest func(method string, params json.RawMessage) (any, error)

	mu      sync.Mutex
	next    int
	pending map[string]chan Message
	done    chan struct{}
	err     error
}

// New returns a client writing to w; call Start with the agent's output.
func New(w io.Writer) *Client {
	return &Client{w: w, pending: map[string]chan Message{}, done: make(chan struct{})}
}

// Start reads the agent's output until it ends; Done is closed then.
func (c *Client) Start(r io.Reader) {
	go func() {
		defer close(c.done)
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				c.dispatch(line)
			}
			if err != nil {
				c.mu.Lock()
				if err != io.EOF {
					c.err = err
				}
				for _, ch := range c.pending {
					close(ch)
				}
				c.pending = map[string]chan Message{}
				c.mu.Unlock()
				return
			}
		}
	}()
}

// Done is closed when the agent's output has ended.
func (c *Client) Done() <-chan struct{} { return c.done }

func (c *Client) dispatch(line []byte) {
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		m = Message{Method: "<invalid>", Raw: line}
		if c.OnMessage != nil {
			c.OnMessage(m)
		}
		return
	}
	m.Raw = append([]byte(nil), line...)
	if c.OnMessage != nil {
		c.OnMessage(m)
	}
	switch {
	case m.Method != "" && len(m.ID) > 0:
		go c.answer(m)
	case m.Method == "":
		c.mu.Lock()
		ch := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

func (c *Client) answer(m Message) {
	var res any
	var err error
	if c.OnRequest != nil {
		res, err = c.OnRequest(m.Method, m.Params)
	}
	out := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if err != nil {
		e, ok := err.(*acp.Error)
		if !ok {
			e = &acp.Error{Code: acp.CodeInternalError, Message: err.Error()}
		}
		out["error"] = e
	} else {
		if res == nil {
			res = struct{}{}
		}
		out["result"] = res
	}
	_ = c.write(out)
}

// Send writes any JSON value as one line (e.g. a notification or a
// malformed message in a test).
func (c *Client) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.WriteLine(b)
}

// WriteLine writes raw bytes followed by a newline.
func (c *Client) WriteLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(append([]byte(nil), b...), '\n'))
	return err
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) error {
	return c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// Send starts a request and returns its id and a channel for the response.
func (c *Client) Send(method string, params any) (id int, resp <-chan Message, err error) {
	c.mu.Lock()
	c.next++
	id = c.next
	ch := make(chan Message, 1)
	c.pending[strconv.Itoa(id)] = ch
	c.mu.Unlock()
	return id, ch, c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

// Call sends a request and waits for its response, decoding the result
// into result (which may be nil). An error response is returned as an
// *acp.Error.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	_, ch, err := c.Send(method, params)
	if err != nil {
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("acpclient: %s: the agent's output ended", method)
		}
		if m.Error != nil {
			return m.Error
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
