package server_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// failureCardsIn returns the failure cards among the agent's lines from
// the from'th on: the tool_call updates titled like an MCP server's
// notice, as the editor decodes them.
func failureCardsIn(t *testing.T, h *harness, from int) []acp.ToolCall {
	t.Helper()
	var out []acp.ToolCall
	for _, m := range agentMsgs(t, h, from) {
		if m.Method != "session/update" || kindOf(m.Params.Update) != "tool_call" || !strings.HasPrefix(str(m.Params.Update["title"]), "MCP server ") {
			continue
		}
		raw, _ := json.Marshal(m.Params.Update)
		var c acp.ToolCall
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// TestMCPFailureCards: an editor without `session.notices` (acpx) sees an
// MCP server that did not start as a failed card, kind other, titled by
// the server with the reason as its text: not between turns (the failure
// came at session/new), at the start of the next turn, once (the second
// turn has none); an editor with notices gets the notice only.
func TestMCPFailureCards(t *testing.T) {
	var log syncBuffer
	rec := e2etest.Replay(t, e2etest.Text(nil, []string{"One."}, "stop"), e2etest.Text(nil, []string{"Two."}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec, logs: &log})
	h.initialize()
	events := filepath.Join(t.TempDir(), "events")
	sid, _ := h.newMCPSession(stdioMCP(t, "broken", events, "-exit-at-start"), stdioMCP(t, "notes", events))
	const title = `MCP server "broken" did not start`
	// The log quotes the title's quotes.
	waitFor(t, func() bool { return strings.Contains(log.String(), `notice: MCP server \"broken\" did not start`) })
	if cards := failureCardsIn(t, h, 0); len(cards) != 0 {
		t.Fatalf("a failure card between turns: %+v", cards)
	}
	before := len(agentMsgs(t, h, 0))
	if stop, err := h.prompt(sid, "hello"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	cards := failureCardsIn(t, h, before)
	if len(cards) != 1 {
		t.Fatalf("%d failure cards in the first turn, want 1: %+v", len(cards), cards)
	}
	c := cards[0]
	if c.Title != title || c.Kind != "other" || c.Status != acp.StatusFailed || len(c.Content) != 1 ||
		!strings.Contains(string(mustJSON(c.Content)), "exit status 3") {
		t.Errorf("the card: %s", mustJSON(c))
	}
	before = len(agentMsgs(t, h, 0))
	if stop, err := h.prompt(sid, "again"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("second prompt = %q, %v", stop, err)
	}
	if cards := failureCardsIn(t, h, before); len(cards) != 0 {
		t.Errorf("the failure was carded again in the second turn: %+v", cards)
	}

	// With notices: the notice, and no card.
	var log2 syncBuffer
	h2 := newHarness(t, harnessOpts{replay: e2etest.Replay(t, e2etest.Text(nil, []string{"One."}, "stop")), logs: &log2})
	h2.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"session": map[string]any{"notices": map[string]any{}}}}, nil)
	sid2, _ := h2.newMCPSession(stdioMCP(t, "broken", filepath.Join(t.TempDir(), "events"), "-exit-at-start"))
	waitFor(t, func() bool {
		for _, u := range h2.sessionUpdates() {
			if n, ok := u.(acp.Notice); ok && n.Title == title {
				return true
			}
		}
		return false
	})
	if stop, err := h2.prompt(sid2, "hello"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if cards := failureCardsIn(t, h2, 0); len(cards) != 0 {
		t.Errorf("an editor with notices got cards too: %+v", cards)
	}
}
