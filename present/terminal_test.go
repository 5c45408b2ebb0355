package present

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// TestLiveTitleCap: a live terminal's title is the whole command up to
// 16 KiB; a longer command is cut there, at a character boundary, and
// shown whole in a sh fence before the terminal item.
func TestLiveTitleCap(t *testing.T) {
	long := "echo start\n" + strings.Repeat("printf 'é€'\n", 2000) // about 26 KB
	args, _ := json.Marshal(map[string]string{"command": long, "description": "Print"})
	p := NewPresenter(live, fakeTools())
	us := p.Updates(session.Event{Data: call("t1", "bash", string(args))})
	tc, ok := us[0].(acp.ToolCall)
	if !ok {
		t.Fatalf("got %+v", us)
	}
	if len(tc.Title) > liveTitleBytes || !utf8.ValidString(tc.Title) || !strings.HasSuffix(tc.Title, "…") ||
		!strings.HasPrefix(long, strings.TrimSuffix(tc.Title, "…")) || len(tc.Title) < liveTitleBytes-8 {
		t.Errorf("title of %d bytes (valid %v) ends %q", len(tc.Title), utf8.ValidString(tc.Title), tc.Title[max(0, len(tc.Title)-20):])
	}
	if len(tc.Content) != 3 || tc.Content[2].ToolCallContentType() != acp.TerminalItem {
		t.Fatalf("content %+v", tc.Content)
	}
	if fence, _ := tc.Content[1].(acp.Content); fence.Content.Text != tools.ShellFence(long) {
		t.Errorf("the second item is not the command in a sh fence: %.60q", fence.Content.Text)
	}
	short, _ := json.Marshal(map[string]string{"command": long[:liveTitleBytes], "description": "Print"})
	us = p.Updates(session.Event{Data: call("t2", "bash", string(short))})
	if tc, _ := us[0].(acp.ToolCall); tc.Title != strings.TrimSpace(long[:liveTitleBytes]) || len(tc.Content) != 2 {
		t.Errorf("a 16 KiB command: title of %d bytes, %d items", len(tc.Title), len(tc.Content))
	}
}
