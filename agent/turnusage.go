package agent

import (
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
)

// addUsage adds one response's usage (nil: it reported none) to the
// turn's sum, Outcome.Usage: every field summed as the endpoint
// reported it (PromptTokens includes CacheHitTokens, CompletionTokens
// includes ReasoningTokens).
func (t *turnRun) addUsage(u *session.Usage) {
	if u == nil {
		return
	}
	if t.usage == nil {
		t.usage = &session.Usage{}
	}
	t.usage.PromptTokens += max(u.PromptTokens, 0)
	t.usage.CompletionTokens += max(u.CompletionTokens, 0)
	t.usage.CacheHitTokens += max(u.CacheHitTokens, 0)
	t.usage.ReasoningTokens += max(u.ReasoningTokens, 0)
}

// cacheTokens adds one response's prompt tokens and cache hits to the
// session's and returns the turn's and session's sums after it (the
// turn's come from addUsage, already called for it).
func (t *turnRun) cacheTokens(u llm.Usage) *session.CacheTokens {
	prompt := int64(max(u.PromptTokens, 0))
	hit := min(int64(max(u.CacheHitTokens, 0)), prompt)
	t.s.mu.Lock()
	t.s.cachePrompt += prompt
	t.s.cacheHit += hit
	c := &session.CacheTokens{SessionPrompt: t.s.cachePrompt, SessionHit: t.s.cacheHit}
	t.s.mu.Unlock()
	if t.usage != nil {
		c.TurnPrompt, c.TurnHit = int64(t.usage.PromptTokens), int64(min(t.usage.CacheHitTokens, t.usage.PromptTokens))
	}
	return c
}
