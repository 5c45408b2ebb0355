package server_test

import (
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// TestPromptUsage: a turn of three model requests (two tool steps and
// the answer) answers session/prompt with `usage` summed over the three
// (input tokens without the cache hits, the hits as cachedReadTokens,
// output with reasoning, reasoning as thoughtTokens, the total), valid
// against the unstable schema's Usage (the harness validates every
// answer); the per-request usage_update stays. A turn that makes no
// request (/compact with nothing to compact) has no `usage`.
func TestPromptUsage(t *testing.T) {
	u1 := e2etest.LiveUsage{Prompt: 1200, CacheHit: 1024, Completion: 90, Reasoning: 30}
	u2 := e2etest.LiveUsage{Prompt: 1500, CacheHit: 1280, Completion: 70, Reasoning: 20}
	u3 := e2etest.LiveUsage{Prompt: 1800, CacheHit: 1472, Completion: 40, Reasoning: 10}
	rec := e2etest.Replay(t,
		e2etest.LiveToolCall(nil, 0, "glob", `{"pattern":"*.go"}`, u1),
		e2etest.LiveToolCall(nil, 1, "glob", `{"pattern":"*.md"}`, u2),
		e2etest.LiveText(nil, []string{"Two globs done."}, u3))
	h := newHarness(t, harnessOpts{replay: rec})
	sid := h.start(harnessOpts{})
	var pr acp.PromptResponse
	if err := h.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []acp.ContentBlock{acp.TextBlock("glob twice")}}, &pr); err != nil {
		t.Fatal(err)
	}
	if pr.StopReason != acp.StopEndTurn || pr.Usage == nil {
		t.Fatalf("answer %+v", pr)
	}
	got := *pr.Usage
	prompt, hit, out, thought := uint64(1200+1500+1800), uint64(1024+1280+1472), uint64(90+70+40), uint64(30+20+10)
	if got.InputTokens != prompt-hit || got.OutputTokens != out || got.TotalTokens != prompt+out ||
		got.CachedReadTokens == nil || *got.CachedReadTokens != hit || got.ThoughtTokens == nil || *got.ThoughtTokens != thought {
		t.Errorf("usage %+v (cached %v, thought %v), want input %d, cached %d, output %d, thought %d, total %d",
			got, deref(got.CachedReadTokens), deref(got.ThoughtTokens), prompt-hit, hit, out, thought, prompt+out)
	}
	// Each usage_update's _meta has the turn's cache hits so far.
	var metas []string
	for _, u := range h.sessionUpdates() {
		if uu, ok := u.(acp.UsageUpdate); ok {
			metas = append(metas, string(uu.Meta))
		}
	}
	wantMetas := []string{
		`{"cacheHitRatio":0.8533,"cacheHitTokens":1024,"promptTokens":1200}`,
		`{"cacheHitRatio":0.8533,"cacheHitTokens":2304,"promptTokens":2700}`,
		`{"cacheHitRatio":0.8391,"cacheHitTokens":3776,"promptTokens":4500}`,
	}
	if strings.Join(metas, "\n") != strings.Join(wantMetas, "\n") {
		t.Errorf("usage_update _meta\n%s\nwant\n%s", strings.Join(metas, "\n"), strings.Join(wantMetas, "\n"))
	}
	// session/list's _meta.usage: the session's running figures.
	var list acp.ListSessionsResponse
	h.mustCall("session/list", map[string]any{}, &list)
	if len(list.Sessions) != 1 || !strings.Contains(string(list.Sessions[0].Meta), `"cacheHitRatio":0.8391,"cacheHitTokens":3776,"promptTokens":4500`) {
		t.Errorf("session/list %+v", list.Sessions)
	}

	h2 := newHarness(t, harnessOpts{replay: e2etest.Replay(t)})
	sid2 := h2.start(harnessOpts{})
	var pr2 acp.PromptResponse
	if err := h2.call("session/prompt", map[string]any{"sessionId": sid2, "prompt": []acp.ContentBlock{acp.TextBlock("/compact")}}, &pr2); err != nil {
		t.Fatal(err)
	}
	if pr2.Usage != nil {
		t.Errorf("a turn without a request answered usage %+v", *pr2.Usage)
	}
}

func deref(p *uint64) any {
	if p == nil {
		return nil
	}
	return *p
}
