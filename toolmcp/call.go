// This file runs one tool call on a server.

package toolmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-acp/dsh-acp/tools"
)

// call runs one call of d's tool on the server.
func (srv *server) call(ctx context.Context, d *toolDef, args json.RawMessage) (tools.Output, error) {
	c, err := srv.live(ctx)
	if err != nil {
		return tools.Output{}, err
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	tool := d.original
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
	return d.output(res)
}
