// Package acp holds the Agent Client Protocol (ACP) version 1 types that
// dsh-acp receives and sends, and the stdio connection that carries them.
//
// The types mirror the official JSON Schema (schema/v1/schema.json of
// agentclientprotocol/agent-client-protocol); each type's comment names the
// schema definition it mirrors. JSON tags follow the schema: required
// fields are always written, optional ones are left out when unset, and
// `_meta` objects are kept as raw JSON.
//
// The connection ([Conn]) runs JSON-RPC 2.0 on github.com/sourcegraph/jsonrpc2
// over a newline-delimited object stream of its own, which answers malformed
// lines itself (-32700 / -32600, id null) and keeps reading. Notifications
// from the editor are handled in arrival order on the read goroutine; each
// request gets its own goroutine; every byte written goes through one
// ordered writer. Package acp imports nothing else of this module.
package acp
