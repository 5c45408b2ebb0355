package bridge

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
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

// TestSandboxFailureCard: the sandbox notice of a session whose editor
// has no notices is logged, sends nothing between turns, and becomes one
// failed card (kind other, its title, the reason as text) when a turn
// starts; inside a turn a new failure shows at once.
func TestSandboxFailureCard(t *testing.T) {
	br := New(Config{Tools: tools.NewRegistry()})
	c := &recordingClient{}
	br.SetClient(c)
	if _, err := br.Initialize(context.Background(), acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	s := br.openSession("s1", t.TempDir(), nil)
	tools.Notify(s.agent.Tools, tools.Notice{Severity: tools.NoticeWarning, Title: noSandboxTitle, Description: "no Landlock"})
	if got := c.kinds(); got != "" {
		t.Fatalf("between turns the editor got %q", got)
	}
	br.turnFailures(s)
	if got := c.kinds(); got != "tool_call" {
		t.Fatalf("at the turn's start: %q, want one tool_call", got)
	}
	card := c.sent[0].(acp.ToolCall)
	if card.Title != noSandboxTitle || card.Kind != "other" || card.Status != acp.StatusFailed || len(card.Content) != 1 ||
		card.Content[0].(acp.Content).Content.Text != "no Landlock" || !strings.HasPrefix(card.ToolCallID, "call_") {
		t.Errorf("the card %+v", card)
	}
	tools.Notify(s.agent.Tools, mcpNotice("gh", "stopped: the server process ended"))
	if got := c.kinds(); got != "tool_call tool_call" {
		t.Errorf("inside the turn: %q, want a second card at once", got)
	}
	s.fails.end()
	if len(s.agent.Store.Events()) != 0 {
		t.Error("a failure card was kept in the session")
	}
}
