package main

import (
	"log/slog"

	"github.com/dsh-acp/dsh-acp/toolbash"
	"github.com/dsh-acp/dsh-acp/toolfs"
	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/tooltodo"
)

// extraTools are registered after the default tools; test builds (tag
// dshtest) add tools that exercise every card kind.
var extraTools []tools.Tool

// registerTools registers the default tools, then extraTools. The
// returned cleanup stops what the tools started (e.g. shell commands); it
// runs when the agent exits.
func registerTools(reg *tools.Registry, log *slog.Logger) (cleanup func()) {
	var defaults []tools.Tool
	var cleanups []func()
	// Default tools are appended here: toolfs, toolbash, todo_write.
	defaults = append(defaults, toolfs.Tools()...)
	shell := toolbash.New(toolbash.Options{Log: log})
	defaults = append(defaults, shell.Tools()...)
	cleanups = append(cleanups, shell.Shutdown)
	defaults = append(defaults, tooltodo.New())
	for _, t := range append(defaults, extraTools...) {
		if err := reg.Register(t); err != nil {
			log.Error("could not register a tool", "tool", t.Name, "err", err)
		}
	}
	return func() {
		for _, c := range cleanups {
			c()
		}
	}
}
