package main

import (
	"log/slog"

	"github.com/dsh-acp/dsh-acp/tools"
)

// extraTools are registered after the default tools; test builds (tag
// dshtest) add tools that exercise every card kind.
var extraTools []tools.Tool

// registerTools registers the default tools, then extraTools.
func registerTools(reg *tools.Registry, log *slog.Logger) {
	for _, t := range extraTools {
		if err := reg.Register(t); err != nil {
			log.Error("could not register a tool", "tool", t.Name, "err", err)
		}
	}
}
