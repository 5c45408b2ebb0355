package bridge

import (
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// TestFailureCardsRules: which notices are session failures (an MCP
// server's, the sandbox's; not a retried request or a failed
// compaction), and the queue: a failure between turns waits for the
// next turn's start, one inside a turn shows at once, each cause once.
func TestFailureCardsRules(t *testing.T) {
	for n, want := range map[tools.Notice]bool{
		mcpNotice("gh", "did not start: the server process ended"):           true,
		{Severity: tools.NoticeWarning, Title: noSandboxTitle}:               true,
		{Severity: tools.NoticeWarning, Title: "Retrying the model request"}: false,
		{Severity: tools.NoticeWarning, Title: "Compaction failed"}:          false,
		{Severity: tools.NoticeInfo, Title: `MCP server "gh" restarted`}:     false,
	} {
		if got := sessionFailure(n); got != want {
			t.Errorf("sessionFailure(%q) = %v", n.Title, got)
		}
	}
	var f failureCards
	a, b := mcpNotice("a", "did not start: x"), mcpNotice("b", "stopped: y")
	first := f.add(a)
	again := f.add(a)
	if first || again {
		t.Error("a failure between turns was to be shown at once")
	}
	if got := f.begin(); len(got) != 1 || got[0] != a {
		t.Errorf("the turn's start shows %v, want the one failure once", got)
	}
	if !f.add(b) || f.add(b) || f.add(a) {
		t.Error("inside a turn: a new cause shows at once, a seen one never")
	}
	f.end()
	if got := f.begin(); len(got) != 0 {
		t.Errorf("the next turn shows %v again", got)
	}
}
