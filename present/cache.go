package present

import (
	"encoding/json"
	"math"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
)

// CacheFields are how much of the prompts the endpoint served from its
// context cache (billed at the cache-hit price, 1/50 of a miss on
// DeepSeek's API): CacheHitRatio is hit/prompt rounded to 4 places.
// usageMeta has the turn's so far, SessionCache the session's.
type CacheFields struct {
	CacheHitRatio  float64 `json:"cacheHitRatio"`
	CacheHitTokens int64   `json:"cacheHitTokens"`
	PromptTokens   int64   `json:"promptTokens"`
}

func cacheFields(c *session.CacheTokens, whole bool) CacheFields {
	hit, prompt := c.TurnHit, c.TurnPrompt
	if whole {
		hit, prompt = c.SessionHit, c.SessionPrompt
	}
	return CacheFields{CacheHitRatio: math.Round(session.Ratio(hit, prompt)*1e4) / 1e4, CacheHitTokens: hit, PromptTokens: prompt}
}

// SessionCache is CacheFields over the whole session, nil without
// figures (session/list's `_meta.usage`).
func SessionCache(c *session.CacheTokens) *CacheFields {
	if c == nil {
		return nil
	}
	f := cacheFields(c, true)
	return &f
}

// usageMeta is a usage_update's `_meta`: the turn's cache figures
// (CacheMeta) and, when the turn made billed tool calls (web searches,
// fetches), "billedCalls" by kind, whose prices the cost includes; nil
// when there is neither.
func usageMeta(d session.ContextUsage) acp.Meta {
	m := map[string]any{}
	if d.Cache != nil {
		f := cacheFields(d.Cache, false)
		m["cacheHitRatio"], m["cacheHitTokens"], m["promptTokens"] = f.CacheHitRatio, f.CacheHitTokens, f.PromptTokens
	}
	if len(d.Calls) > 0 {
		m["billedCalls"] = d.Calls
	}
	if len(m) == 0 {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}
