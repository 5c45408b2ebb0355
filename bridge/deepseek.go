package bridge

import (
	"fmt"

	"github.com/dsh-acp/dsh-acp/tools"
)

// RetiredModels are DeepSeek's model names its API dropped on
// 2026-07-24 (deepseek-chat, deepseek-reasoner): a session still on one
// of them (an old --model, DSH_MODEL, a restored session) moves to
// MigratedModel at its next turn when the endpoint is DeepSeek's and its
// model list does not hold the name (migrateModel).
var RetiredModels = map[string]bool{"deepseek-chat": true, "deepseek-reasoner": true}

// MigratedModel is the model a session on a retired name moves to:
// DeepSeek's current default model.
const MigratedModel = "deepseek-flash"

// migrateModel moves s off a retired DeepSeek model name, once, before a
// turn's first request: only with Config.Provider DeepSeek's, only when
// the endpoint's model list is in and does not list the name (an
// endpoint that still serves it keeps it). The change is logged like an
// editor's choice (session/load restores the new model), the editor gets
// the option list with the real model (config_option_update) and a
// notice says what happened; the process log has a line too. Without
// the list nothing moves: the request then fails with the endpoint's
// model-not-found error, which names the model and the selector.
func (b *Bridge) migrateModel(s *liveSession) {
	if !b.cfg.Provider.DeepSeek() {
		return
	}
	old := s.configOf().Model
	if !RetiredModels[old] {
		return
	}
	if _, listed := b.cfg.Models.Models(); !listed {
		return
	}
	if _, ok := b.cfg.Models.Info(old); ok {
		return
	}
	b.setConfig(s, ConfigModel, MigratedModel)
	b.announceOptions(s)
	desc := fmt.Sprintf("DeepSeek retired the model %s on 2026-07-24 and its API no longer lists it; this session now uses %s (change it in the Model selector; --model or DSH_MODEL sets the default).", old, MigratedModel)
	b.log.Warn("model retired: session moved", "session", s.id, "from", old, "to", MigratedModel)
	tools.Notify(s.agent.Tools, tools.Notice{Severity: tools.NoticeWarning, Title: "Model " + old + " replaced by " + MigratedModel, Description: desc})
}

// imageModel is the first model the model selector offers that takes
// images (Config.Images), "" when none does: what a refused image prompt
// suggests (on DeepSeek's API, deepseek-flash for a session on
// deepseek-v4-pro).
func (b *Bridge) imageModel() string {
	choices, _ := b.modelChoices("")
	for _, c := range choices {
		if b.cfg.Images(c.Value) {
			return c.Value
		}
	}
	return ""
}
