// This file keeps the registry in step with a server's tool list: the
// first listing, tools/list_changed, and unregistering on the way down.

package toolmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// registered is one tool of the server in the registry: the fingerprint
// of its MCP definition (to tell a changed tool on re-listing) and what
// its cards are built from.
type registered struct {
	fp  string
	def *toolDef
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
