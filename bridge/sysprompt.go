package bridge

import (
	"strings"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/agent"
	"github.com/dsh-acp/dsh-acp/session"
)

// systemPromptCaps is what initialize advertises as
// sessionCapabilities.systemPrompt: both modes, append and override.
func systemPromptCaps() *acp.SessionSystemPromptCapabilities {
	return &acp.SessionSystemPromptCapabilities{Mode: &acp.SessionSystemPromptModeCapabilities{Override: &acp.Empty{}}}
}

// clientPrompt reads a session/new, load, resume or fork request's
// systemPrompt: given is false when it has none (absent or null). Its
// text is the text blocks' text, joined by line breaks. -32602, before
// anything is created, loaded or forked, for: a mode other than append
// and override (the schema's custom and future modes included: the
// schema says to refuse a mode rather than guess), an empty content
// array, a block that is not text, or no text at all.
func clientPrompt(sp *acp.SystemPrompt) (cp agent.ClientPrompt, given bool, err error) {
	if sp == nil {
		return agent.ClientPrompt{}, false, nil
	}
	if sp.Mode != agent.ClientAppend && sp.Mode != agent.ClientOverride {
		return cp, false, acp.InvalidParams("Invalid params: systemPrompt.mode %q is not supported; the modes are \"append\" and \"override\"", sp.Mode)
	}
	if len(sp.Content) == 0 {
		return cp, false, acp.InvalidParams("Invalid params: systemPrompt.content is empty")
	}
	parts := make([]string, 0, len(sp.Content))
	for i, bl := range sp.Content {
		if bl.Type != acp.BlockText {
			return cp, false, acp.InvalidParams("Invalid params: systemPrompt.content[%d]: only text blocks are supported, got %q", i, bl.Type)
		}
		parts = append(parts, bl.Text)
	}
	text := strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" {
		return cp, false, acp.InvalidParams("Invalid params: systemPrompt.content has no text")
	}
	return agent.ClientPrompt{Mode: sp.Mode, Text: text}, true, nil
}

// setSystemPrompt makes cp s's system prompt from its next model request
// on and logs it (session.SystemPrompt) when it differs from the one in
// force, so load and resume restore it and a fork copies it.
func (b *Bridge) setSystemPrompt(s *liveSession, cp agent.ClientPrompt) {
	s.cfg.mu.Lock()
	changed := s.cfg.system != cp
	s.cfg.system = cp
	s.cfg.mu.Unlock()
	if !changed {
		return
	}
	b.applySettings(s)
	s.agent.Store.Emit(session.SystemPrompt{Mode: cp.Mode, Text: cp.Text})
	b.flushConfig(s)
}
