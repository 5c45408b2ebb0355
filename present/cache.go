package present

import (
	"encoding/json"
	"math"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
)

// CacheMeta is the `_meta` of a usage_update saying how much of the
// prompt the endpoint served from its context cache (billed at the
// cache-hit price, 1/50 of a miss on DeepSeek's API): for the turn so
// far, or with session for the whole session (session/list's
// `_meta.usage`): {"cacheHitRatio": hit/prompt rounded to 4 places,
// "cacheHitTokens", "promptTokens"}. nil when c is nil (no figures).
func CacheMeta(c *session.CacheTokens, whole bool) acp.Meta {
	if c == nil {
		return nil
	}
	b, err := json.Marshal(cacheFields(c, whole))
	if err != nil {
		return nil
	}
	return b
}

// CacheFields are the figures of CacheMeta.
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
