package bridge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/agent"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/session"
)

// The ids of the session config options (ACP configOptions, acp-protocol
// §8.2), in the order the option list gives them.
const (
	// ConfigModel selects the model (category model).
	ConfigModel = "model"
	// ConfigThinking selects DeepSeek's thinking mode and effort
	// (category thought_level); offered only when Config.Thinking is set.
	ConfigThinking = "thinking"
	// ConfigMode selects the permission mode (category mode), the same
	// state as `modes` and session/set_mode.
	ConfigMode = "mode"
	// ConfigSubagentModel selects the model of the session's children
	// (the subagent tools), listed after the model option and in no
	// category: editors take the model category for their model picker.
	// SubagentModelSame, its first value, is the session's own model.
	ConfigSubagentModel = "subagent_model"
	SubagentModelSame   = "same"
)

// ThinkingLevel is one value of the thinking option and the request
// fields it sends: DeepSeek's top-level `thinking` {"type": ...} and
// `reasoning_effort` (DeepSeek's "Thinking Mode" guide: thinking is on
// by default at effort high; the efforts are low, high and max).
type ThinkingLevel struct {
	ID, Name, Description string
	Thinking              llm.Thinking
}

// ThinkingLevels are the thinking option's values, from the quickest to
// the slowest. Each sends both fields but off, which sends only
// {"type": "disabled"} (an effort means nothing without thinking).
var ThinkingLevels = []ThinkingLevel{
	{ID: "off", Name: "Off", Description: "No reasoning: the quickest answers and the fewest tokens (thinking disabled)",
		Thinking: llm.Thinking{Type: llm.ThinkingDisabled}},
	{ID: "low", Name: "Low", Description: "Brief reasoning: quicker than high, fewer reasoning tokens (reasoning_effort low)",
		Thinking: llm.Thinking{Type: llm.ThinkingEnabled, Effort: llm.EffortLow}},
	{ID: "high", Name: "High", Description: "DeepSeek's default: thorough reasoning, seconds to a minute more per answer (reasoning_effort high)",
		Thinking: llm.Thinking{Type: llm.ThinkingEnabled, Effort: llm.EffortHigh}},
	{ID: "max", Name: "Max", Description: "The longest reasoning, for hard problems: the slowest answers and the most reasoning tokens (reasoning_effort max)",
		Thinking: llm.Thinking{Type: llm.ThinkingEnabled, Effort: llm.EffortMax}},
}

// thinkingAliases are level names of earlier versions, kept working in
// flags, the environment and restored sessions: "on" was thinking at the
// provider's default effort, which is high.
var thinkingAliases = map[string]string{"on": "high"}

// DefaultThinking is the thinking level sessions start in when
// Config.ThinkingDefault is empty: thinking on at DeepSeek's default
// effort.
const DefaultThinking = "high"

// CanonicalThinking returns the ThinkingLevels id id names: id itself,
// or the level an old name stands for ("on" is "high"); ok is false for
// any other name.
func CanonicalThinking(id string) (string, bool) {
	if to, ok := thinkingAliases[id]; ok {
		id = to
	}
	_, ok := thinkingLevel(id)
	return id, ok
}

func thinkingLevel(id string) (ThinkingLevel, bool) {
	for _, l := range ThinkingLevels {
		if l.ID == id {
			return l, true
		}
	}
	return ThinkingLevel{}, false
}

// ValidThinking reports whether id is one of ThinkingLevels or an old
// name of one (CanonicalThinking).
func ValidThinking(id string) bool {
	_, ok := CanonicalThinking(id)
	return ok
}

// DefaultModelsWait is how long session/new and session/load wait for the
// endpoint's first model list before answering with the models known
// without it (up to 1 s).
const DefaultModelsWait = time.Second

// sessionConfig is a session's model and thinking choices (its mode is
// in permState) and what the editor was told about the option list.
type sessionConfig struct {
	mu       sync.Mutex
	model    string
	thinking string // a ThinkingLevels id; "" when the option is not offered
	// system is the editor's system prompt (sysprompt.go; zero: none).
	system agent.ClientPrompt
	// subagentModel is the model of the session's children; "" is the
	// session's own (subagent.go).
	subagentModel string
	// answered: the editor has the session (its session/new or
	// session/load answer was written), so updates may name it.
	answered bool
	// stale: the option list the editor has was built without the
	// endpoint's model list, which may still arrive.
	stale bool
}

// configState is the values of the three options, and the editor's
// system prompt.
type configState struct {
	Model, Thinking, Mode string
	System                agent.ClientPrompt
	// SubagentModel is the children's model, "" for the session's.
	SubagentModel string
}

// defaultConfig is what a new session starts with.
func (b *Bridge) defaultConfig() configState {
	v := configState{Model: b.cfg.Agent.Model(), Mode: b.cfg.Mode}
	if b.cfg.Thinking {
		v.Thinking = b.cfg.ThinkingDefault
	}
	return v
}

// restoredConfig is the configuration a session's log leaves: for each
// option the last value logged (ConfigChange events for the model and
// thinking, ModeChange for the mode) that is still acceptable, else
// def's. A model is kept even when the endpoint no longer lists it (the
// selector shows it, so the user sees the truth and can switch); a
// thinking level only when the thinking option is offered (def.Thinking
// is not "") and a mode only when it is one of permission.Modes.
// session/load and session/resume restore a session with it.
func restoredConfig(events []session.Event, def configState) configState {
	v := def
	for _, ev := range events {
		switch d := ev.Data.(type) {
		case session.ModeChange:
			if permission.ValidMode(d.ModeID) {
				v.Mode = d.ModeID
			}
		case session.SystemPrompt:
			v.System = agent.ClientPrompt{Mode: d.Mode, Text: d.Text}
		case session.ConfigChange:
			switch d.ConfigID {
			case ConfigModel:
				if strings.TrimSpace(d.Value) != "" {
					v.Model = d.Value
				}
			case ConfigThinking:
				if id, ok := CanonicalThinking(d.Value); def.Thinking != "" && ok {
					v.Thinking = id
				}
			case ConfigSubagentModel:
				v.SubagentModel = strings.TrimSpace(d.Value)
			}
		default:
			// The other events set no option: the model, thinking level
			// and mode change only through the two cases above.
		}
	}
	return v
}

// applyConfig sets s's model, thinking level and mode to v (nothing is
// logged: v is where the session starts or was restored to).
func (b *Bridge) applyConfig(s *liveSession, v configState) {
	s.cfg.mu.Lock()
	s.cfg.model, s.cfg.thinking, s.cfg.system, s.cfg.subagentModel = v.Model, v.Thinking, v.System, v.SubagentModel
	s.cfg.mu.Unlock()
	s.perm.setMode(v.Mode)
	b.applySettings(s)
}

// applySettings passes s's model and thinking level to its agent session
// (the next model request uses them).
func (b *Bridge) applySettings(s *liveSession) {
	s.cfg.mu.Lock()
	st := agent.Settings{Model: s.cfg.model, SystemPrompt: s.cfg.system}
	if l, ok := thinkingLevel(s.cfg.thinking); ok {
		st.Thinking = l.Thinking
	}
	s.cfg.mu.Unlock()
	s.agent.SetSettings(st)
}

// configOf returns s's current values.
func (s *liveSession) configOf() configState {
	s.cfg.mu.Lock()
	defer s.cfg.mu.Unlock()
	return configState{Model: s.cfg.model, Thinking: s.cfg.thinking, Mode: s.perm.currentMode(), System: s.cfg.system, SubagentModel: s.cfg.subagentModel}
}

// modelChoices are the model option's values: the endpoint's list when
// it has answered (listed), else the default model and the known ones;
// the session's current model is added when missing, so the selector
// always shows what requests really use.
func (b *Bridge) modelChoices(current string) (choices []acp.SessionConfigSelectOption, listed bool) {
	seen := map[string]bool{}
	add := func(id, name, desc string) {
		if id == "" || seen[id] {
			return
		}
		seen[id] = true
		if name == "" {
			name = id
		}
		choices = append(choices, acp.SessionConfigSelectOption{Value: id, Name: name, Description: desc})
	}
	models, listed := b.cfg.Models.Models()
	if listed {
		for _, m := range models {
			add(m.ID, m.Name, "")
		}
		add(current, "", "Not in the endpoint's model list")
		return choices, true
	}
	add(b.cfg.Agent.Model(), "", "")
	for _, id := range b.cfg.KnownModels {
		add(id, "", "")
	}
	add(current, "", "")
	return choices, false
}

// configOptions is s's option list with its current values, and whether
// the model choices come from the endpoint's list.
func (b *Bridge) configOptions(s *liveSession) ([]acp.SessionConfigOption, bool) {
	v := s.configOf()
	models, listed := b.modelChoices(v.Model)
	opts := []acp.SessionConfigOption{{
		ID: ConfigModel, Name: "Model", Description: "The model that answers from the next request on",
		Category: acp.CategoryModel,
		Select:   &acp.SessionConfigSelect{CurrentValue: v.Model, Options: models},
	}, subagentModelOption(v, b.subagentChoices(v))}
	if b.cfg.Thinking {
		levels := make([]acp.SessionConfigSelectOption, 0, len(ThinkingLevels))
		for _, l := range ThinkingLevels {
			levels = append(levels, acp.SessionConfigSelectOption{Value: l.ID, Name: l.Name, Description: l.Description})
		}
		opts = append(opts, acp.SessionConfigOption{
			ID: ConfigThinking, Name: "Thinking", Description: "DeepSeek's thinking mode and reasoning effort",
			Category: acp.CategoryThoughtLevel,
			Select:   &acp.SessionConfigSelect{CurrentValue: v.Thinking, Options: levels},
		})
	}
	modes := make([]acp.SessionConfigSelectOption, 0, len(permission.Modes))
	for _, m := range permission.Modes {
		modes = append(modes, acp.SessionConfigSelectOption{Value: m.ID, Name: m.Name, Description: m.Description})
	}
	opts = append(opts, acp.SessionConfigOption{
		ID: ConfigMode, Name: "Mode", Description: "What runs without asking first",
		Category: acp.CategoryMode,
		Select:   &acp.SessionConfigSelect{CurrentValue: v.Mode, Options: modes},
	})
	return opts, listed
}

// optionsAnswered returns s's option list for an answer to the editor
// (session/new, session/load, set_config_option) and, once the answer
// has been written (acp.Then on ctx, or at once outside a request),
// marks s as known to the editor: a model list that arrives later is then
// announced with a config_option_update.
func (b *Bridge) optionsAnswered(ctx context.Context, s *liveSession) []acp.SessionConfigOption {
	opts, listed := b.configOptions(s)
	stale := !listed && b.cfg.Models != nil && b.cfg.Models.Err() == nil
	s.cfg.mu.Lock()
	s.cfg.stale = stale
	s.cfg.mu.Unlock()
	if stale {
		b.watchModels()
	}
	done := func() {
		s.cfg.mu.Lock()
		s.cfg.answered = true
		s.cfg.mu.Unlock()
		b.refreshModels(s)
	}
	if !acp.Then(ctx, done) {
		done()
	}
	return opts
}

// watchModels starts, once, the goroutine that announces the endpoint's
// model list to the sessions answered without it. It ends when the list
// is in or when the bridge is closed.
func (b *Bridge) watchModels() {
	b.watch.Do(func() {
		go func() {
			select {
			case <-b.cfg.Models.Done():
			case <-b.closed:
				return
			}
			for _, s := range b.liveSessions() {
				b.refreshModels(s)
			}
		}()
	})
}

// refreshModels sends s a config_option_update when the editor has s,
// was told an option list without the endpoint's models, and the list
// is in now (an agent-made change of the options).
func (b *Bridge) refreshModels(s *liveSession) {
	if _, listed := b.cfg.Models.Models(); !listed {
		return
	}
	s.cfg.mu.Lock()
	// Before its answer is written, a stale session keeps the mark: the
	// answer's own callback sends the update.
	send := s.cfg.answered && s.cfg.stale
	if send {
		s.cfg.stale = false
	}
	s.cfg.mu.Unlock()
	if send && b.session(s.id) == s {
		b.announceOptions(s)
	}
}

// announceOptions sends s's whole option list as a config_option_update.
func (b *Bridge) announceOptions(s *liveSession) {
	opts, _ := b.configOptions(s)
	b.sendUpdate(s, acp.ConfigOptionUpdate{ConfigOptions: opts})
}

// sendUpdate sends one update of s outside its turn's event stream.
func (b *Bridge) sendUpdate(s *liveSession, u acp.Update) {
	if err := b.client.SessionUpdate(context.Background(), acp.SessionNotification{SessionID: s.id, Update: u}); err != nil {
		b.log.Debug("could not send a session update", "err", err)
	}
}

// SetSessionConfigOption implements acp.ConfigOptionSetter: the model
// (any value of the model option; it applies from the next model
// request, also within a running turn), the thinking level or the mode.
// Each change is logged, so session/load restores it. The answer is the
// whole option list; a mode change is also announced as a
// current_mode_update after it. An unknown session is -32002; an
// unknown option id, a value the option does not offer or a boolean
// value is -32602 naming the valid ones.
func (b *Bridge) SetSessionConfigOption(ctx context.Context, p acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	s := b.session(p.SessionID)
	if s == nil {
		return acp.SetSessionConfigOptionResponse{}, b.unknownSession(p.SessionID)
	}
	ids := []string{ConfigModel, ConfigSubagentModel}
	if b.cfg.Thinking {
		ids = append(ids, ConfigThinking)
	}
	ids = append(ids, ConfigMode)
	if !slices.Contains(ids, p.ConfigID) {
		return acp.SetSessionConfigOptionResponse{}, acp.InvalidParams("Invalid params: unknown config option %q; the options are %s", p.ConfigID, quoteList(ids, len(ids)))
	}
	if p.Boolean != nil {
		return acp.SetSessionConfigOptionResponse{}, acp.InvalidParams("Invalid params: config option %q is a select; its value is one of its value ids, not a boolean", p.ConfigID)
	}
	if id, ok := CanonicalThinking(p.ValueID); p.ConfigID == ConfigThinking && ok {
		p.ValueID = id // an old level name ("on")
	}
	opts, _ := b.configOptions(s)
	var valid []string
	for _, o := range opts {
		if o.ID == p.ConfigID {
			for _, c := range o.Select.Options {
				valid = append(valid, c.Value)
			}
		}
	}
	if !slices.Contains(valid, p.ValueID) {
		return acp.SetSessionConfigOptionResponse{}, acp.InvalidParams("Invalid params: %q is not a value of config option %q; the values are %s", p.ValueID, p.ConfigID, quoteList(valid, 20))
	}
	switch p.ConfigID {
	case ConfigModel, ConfigThinking, ConfigSubagentModel:
		b.setConfig(s, p.ConfigID, p.ValueID)
	case ConfigMode:
		if b.changeMode(s, p.ValueID) {
			announce := func() { b.sendUpdate(s, acp.CurrentModeUpdate{CurrentModeID: p.ValueID}) }
			if !acp.Then(ctx, announce) {
				announce()
			}
		}
	}
	return acp.SetSessionConfigOptionResponse{ConfigOptions: b.optionsAnswered(ctx, s)}, nil
}

// setConfig sets s's model or thinking level to value and logs it; the
// agent session uses it from its next model request.
func (b *Bridge) setConfig(s *liveSession, id, value string) {
	s.cfg.mu.Lock()
	changed := false
	switch id {
	case ConfigModel:
		changed, s.cfg.model = s.cfg.model != value, value
	case ConfigThinking:
		changed, s.cfg.thinking = s.cfg.thinking != value, value
	case ConfigSubagentModel:
		if value == SubagentModelSame {
			value = ""
		}
		changed, s.cfg.subagentModel = s.cfg.subagentModel != value, value
	}
	s.cfg.mu.Unlock()
	if !changed {
		return
	}
	b.applySettings(s)
	s.agent.Store.Emit(session.ConfigChange{ConfigID: id, Value: value})
	b.flushConfig(s)
}

// changeMode sets s's mode and logs it; it reports whether it changed.
func (b *Bridge) changeMode(s *liveSession, mode string) bool {
	if s.perm.currentMode() == mode {
		return false
	}
	s.perm.setMode(mode)
	s.agent.Store.Emit(session.ModeChange{ModeID: mode})
	b.flushConfig(s)
	return true
}

// flushConfig makes a logged choice durable before the editor is told.
func (b *Bridge) flushConfig(s *liveSession) {
	if err := s.agent.Store.Flush(); err != nil {
		b.log.Warn("could not flush the session log", "session", s.id, "err", err)
	}
}

// SetMode switches a session's mode on the agent's own initiative (not
// an editor request) and announces it on both surfaces: a
// current_mode_update and a config_option_update. An unknown session is
// -32002, an unknown mode -32602.
func (b *Bridge) SetMode(sessionID, mode string) error {
	s := b.session(sessionID)
	if s == nil {
		return b.unknownSession(sessionID)
	}
	if !permission.ValidMode(mode) {
		return acp.InvalidParams("Invalid params: unknown mode %q", mode)
	}
	if b.changeMode(s, mode) {
		b.sendUpdate(s, acp.CurrentModeUpdate{CurrentModeID: mode})
		b.announceOptions(s)
	}
	return nil
}

// quoteList is ids quoted and comma-separated, at most n of them (then
// how many more there are).
func quoteList(ids []string, n int) string {
	q := make([]string, 0, min(len(ids), n))
	for i, id := range ids {
		if i == n {
			break
		}
		q = append(q, fmt.Sprintf("%q", id))
	}
	out := strings.Join(q, ", ")
	if len(ids) > n {
		out += fmt.Sprintf(" and %d more", len(ids)-n)
	}
	return out
}
