// Package toolmcp turns the tools of MCP servers (Model Context
// Protocol; the editor passes them in ACP session/new as mcpServers)
// into tools of one session, through the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// Start runs every configured server in parallel (stdio: a child
// process in its own process group; streamable HTTP; the old HTTP+SSE
// transport), initializes it, lists its tools and registers them in the
// session's registry (tools.SessionTools) as mcp__<server>__<tool>, with
// the server's raw input schemas; tools/list_changed keeps them current.
// A server that does not start, crashes or times out never fails the
// session: its tools are absent or their calls fail with a clear error,
// and the Notice callback names the server and the reason. Close stops
// every server and removes its tools.
//
// Calls run through the shared execute chain like every tool: the
// permission class comes from the server's annotations, which are the
// server's claims (readOnlyHint: tools.ClassReadOnly when the user
// marked the server trusted, Server.Trusted, else
// tools.ClassReadOnlyClaimed, refused in plan; anything else
// tools.ClassUndeclared, which asks in default and acceptEdits, runs in
// bypassPermissions and is refused in plan); every string argument that
// looks like a path is handed to the permission check (Access), so a
// path outside the project asks in every mode; the cards come from the
// tool's title and annotations. A
// result is logged whole (its Meta holds the MCP CallToolResult), so its
// card can be shown again from the log without the server. A live
// call's model text and card are converted from the SDK's typed result;
// only a logged result shown again (session/load) is decoded here.
package toolmcp
