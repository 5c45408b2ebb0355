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
// Lookup and SchemasFor find through the call's session.
package tools
