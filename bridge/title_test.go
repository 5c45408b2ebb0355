package bridge

import (
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// TestTitleSource: a title is asked for after the session's first turn
// that ended normally with an answer, from that turn's prompt and
// answer; not after a failed, cancelled or answerless turn, not after a
// later normal turn, and never once the model or the user titled it.
func TestTitleSource(t *testing.T) {
	text := func(s string) []tools.Content { return []tools.Content{tools.Text(s)} }
	turn := func(n int, prompt, answer, reason string) []session.Data {
		ds := []session.Data{session.TurnStart{Turn: n}, session.UserMessage{Turn: n, Content: text(prompt)}}
		if answer != "" {
			ds = append(ds, session.AssistantMessage{Turn: n, Step: 1, ToolCalls: []session.ToolCallRef{{CallID: "c"}}},
				session.AssistantMessage{Turn: n, Step: 2, Text: answer})
		}
		return append(ds, session.TurnEnd{Turn: n, Reason: reason})
	}
	events := func(parts ...[]session.Data) []session.Event {
		var out []session.Event
		for _, p := range parts {
			for _, d := range p {
				out = append(out, session.Event{Seq: int64(len(out)), Data: d})
			}
		}
		return out
	}
	prompt := []session.Data{session.Title{Title: "fix it"}}
	for _, c := range []struct {
		name           string
		events         []session.Event
		prompt, answer string
		ok             bool
	}{
		{"first turn", events(prompt, turn(1, "fix it", "Fixed.", session.EndTurn)), "fix it", "Fixed.", true},
		{"after a failed and a cancelled one", events(prompt, turn(1, "a", "", session.EndError), turn(2, "b", "Half", session.EndCancelled), turn(3, "c", "Done.", session.EndMaxTokens)), "c", "Done.", true},
		{"a failed turn", events(prompt, turn(1, "a", "Half", session.EndError)), "", "", false},
		{"a cancelled turn", events(prompt, turn(1, "a", "Half", session.EndCancelled)), "", "", false},
		{"no answer (/compact)", events(prompt, turn(1, "/compact", "", session.EndTurn)), "", "", false},
		{"a later turn", events(prompt, turn(1, "a", "A.", session.EndTurn), turn(2, "b", "B.", session.EndTurn)), "", "", false},
		{"the model titled it", events(prompt, []session.Data{session.Title{Title: "T", Source: session.TitleFromModel}}, turn(1, "a", "A.", session.EndTurn)), "", "", false},
		{"the user titled it", events([]session.Data{session.Title{Title: "Mine", Source: session.TitleFromUser}}, turn(1, "a", "A.", session.EndTurn)), "", "", false},
		{"no turn", events(prompt), "", "", false},
		{"a steering message", events(prompt, []session.Data{session.TurnStart{Turn: 1}, session.UserMessage{Turn: 1, Content: text("fix it")},
			session.UserMessage{Turn: 1, Content: text("also the tests")}, session.AssistantMessage{Turn: 1, Step: 1, Text: "Both fixed."},
			session.TurnEnd{Turn: 1, Reason: session.EndTurn}}), "fix it\n\nalso the tests", "Both fixed.", true},
	} {
		p, a, ok := titleSource(c.events)
		if p != c.prompt || a != c.answer || ok != c.ok {
			t.Errorf("%s: titleSource = %q, %q, %v; want %q, %q, %v", c.name, p, a, ok, c.prompt, c.answer, c.ok)
		}
		// Final unless no turn has ended normally yet.
		wantFinal := !strings.HasPrefix(c.name, "a failed") && !strings.HasPrefix(c.name, "a cancelled") && c.name != "no turn" && c.name != "no answer (/compact)"
		if _, _, _, final := titleSourceFinal(c.events); final != wantFinal {
			t.Errorf("%s: final %v, want %v", c.name, final, wantFinal)
		}
	}
}

// TestNormalizeTitle: one line, blanks collapsed, at most 200 runes.
func TestNormalizeTitle(t *testing.T) {
	if got := normalizeTitle("  a\n\tb  c "); got != "a b c" {
		t.Errorf("%q", got)
	}
	if got := normalizeTitle(" \n "); got != "" {
		t.Errorf("%q", got)
	}
	long := normalizeTitle(strings.Repeat("é", 300))
	if n := len([]rune(long)); n != maxUserTitleRunes || !strings.HasSuffix(long, "…") {
		t.Errorf("%d runes", n)
	}
}
