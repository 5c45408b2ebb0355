package agent

import "github.com/dsh-acp/dsh-acp/session"

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
