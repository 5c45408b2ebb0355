package bridge

import (
	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
)

// promptUsage is the `usage` of a session/prompt answer (the unstable
// schema's PromptResponse.usage, type Usage) from the turn's summed
// usage (agent.Outcome.Usage); nil, and so no `usage`, for a turn that
// made no model request or whose requests reported none.
//
// The counts are disjoint, as the upstream harness reads DeepSeek's:
// inputTokens are the prompt tokens not served from the context cache,
// cachedReadTokens the ones that were, outputTokens every generated
// token, thoughtTokens the part of outputTokens spent on reasoning, and
// totalTokens inputTokens + cachedReadTokens + outputTokens (the
// endpoint's prompt plus completion tokens). No endpoint reports cache
// writes, so cachedWriteTokens is left out.
func promptUsage(u *session.Usage) *acp.Usage {
	if u == nil {
		return nil
	}
	prompt, out := uint64(max(u.PromptTokens, 0)), uint64(max(u.CompletionTokens, 0))
	hit := min(uint64(max(u.CacheHitTokens, 0)), prompt)
	thought := min(uint64(max(u.ReasoningTokens, 0)), out)
	return &acp.Usage{
		TotalTokens:      prompt + out,
		InputTokens:      prompt - hit,
		OutputTokens:     out,
		CachedReadTokens: &hit,
		ThoughtTokens:    &thought,
	}
}
