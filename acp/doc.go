// Package acp holds the Agent Client Protocol (ACP) version 1 surface of
// dsh-acp: the types it receives and sends, the method table that serves
// an [Agent], the typed [Client] for calls to the editor, and the stdio
// connection that carries them.
//
// The types mirror the official JSON Schema (schema/v1/schema.json of
// the @agentclientprotocol/sdk package; session/fork from
// schema.unstable.json); each type's comment names the schema definition
// it mirrors, and JSON names are the schema's. Required fields are always
// written, optional ones are left out when unset, and `_meta` objects are
// kept as raw JSON. Each `session/update` kind is its own Go type behind
// [Update]; unions with colliding fields (ContentBlock, ToolCallContent,
// SessionConfigOption, McpServer) write only the fields of their type.
// Everything is encoded by encoding/json with its default escaping.
//
// [NewAgentConn] binds an agent to the method table once: each method
// decodes its params into its request type (missing params are -32602
// unless the method allows them), a method whose optional interface the
// agent lacks is -32601, and `initialize` advertises exactly the optional
// interfaces the agent implements ([Capabilities]). Prompt, load and
// resume run in two stages ([Deferred]): the first on the read goroutine,
// so that what it records is in place before the next message is read.
//
// The connection ([Conn]) runs JSON-RPC 2.0 on github.com/sourcegraph/jsonrpc2
// over a newline-delimited object stream of its own, which answers malformed
// lines itself (-32700 / -32600, id null) and keeps reading. Notifications
// from the editor are handled in arrival order on the read goroutine; each
// request gets its own goroutine; every byte written goes through one
// ordered writer. Package acp imports nothing else of this module.
package acp
