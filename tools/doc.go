// Package tools is the tool layer of dsh-acp: a registry of tools, an
// author-facing parameter spec that becomes JSON Schema, argument validation,
// the execute middleware chain, render intents (the cards an editor shows for
// a call and its result) and live progress.
//
// The package knows nothing about ACP or the bridge: tools describe what to
// show (ToolCallView, ToolResultView, Progress) and the bridge decides how.
//
// A tool is usually built with Define from a Spec and a Go argument type; the
// registry turns every failure (unknown tool, invalid arguments, a tool's
// error, a panic, a middleware's veto) into an error Result whose text is
// "Error: <message>", so Registry.Execute never panics and never returns a
// Go error.
//
// One shared registry runs every session's calls; a session may also
// have tools of its own (an MCP server's, SessionTools), which Execute,
// Lookup, Resolve and SchemasFor find through the call's session.
//
// A call is resolved once (Registry.Pending when the model names the
// tool, Pending.Resolve when its arguments are complete): the Call holds
// the tool and the decoded arguments, and every later step (the
// scheduler, the checkpoint, the permission step and its preview,
// Execute, the cards) reads it through Exec.Call instead of looking the
// tool up or decoding the arguments again.
package tools
