package bridge

import (
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
)

// TestIdleStateUsage: a child's final state counts its tokens as a prompt
// answer does (disjoint input and cached counts), so the editor adds up
// parent and children alike.
func TestIdleStateUsage(t *testing.T) {
	st := idleState(session.SubagentEnd{StopReason: session.EndTurn,
		Usage: &session.Usage{PromptTokens: 1000, CompletionTokens: 50, CacheHitTokens: 800, ReasoningTokens: 20}})
	u := st.Usage
	if st.State != acp.SubagentIdle || st.StopReason != acp.StopEndTurn || u == nil {
		t.Fatalf("state %+v", st)
	}
	if u.InputTokens != 200 || u.OutputTokens != 50 || u.TotalTokens != 1050 || *u.CachedReadTokens != 800 || *u.ThoughtTokens != 20 {
		t.Errorf("usage %+v", u)
	}
	if st := idleState(session.SubagentEnd{StopReason: session.EndTurn}); st.Usage != nil {
		t.Errorf("a child without usage: %+v", st.Usage)
	}
}
