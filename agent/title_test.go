package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// TestCleanTitle: the first line, without labels, Markdown, quotes or a
// final period, at most TitleMaxRunes runes.
func TestCleanTitle(t *testing.T) {
	long := "Refactor the session log reader so that lazy decoding handles torn lines and repairs"
	for _, c := range []struct{ in, want string }{
		{"Fix the date parser", "Fix the date parser"},
		{"\n\n  \"Fix the date parser.\"  \nmore", "Fix the date parser"},
		{"Title: **Add `grep` tool**", "Add grep tool"},
		{"# Session: résumé upload", "Session: résumé upload"},
		{"“Quoted in curly quotes”", "Quoted in curly quotes"},
		{"snake_case_name stays", "snake_case_name stays"},
		{"tabs\tand   spaces", "tabs and spaces"},
		{"修复日期解析。", "修复日期解析"},
		{long, "Refactor the session log reader so that lazy decoding…"},
		{strings.Repeat("x", 80), strings.Repeat("x", TitleMaxRunes-1) + "…"},
		{"  \n \"\" \n", ""},
		{"...", ""},
	} {
		got := CleanTitle(c.in)
		if got != c.want {
			t.Errorf("CleanTitle(%q) = %q, want %q", c.in, got, c.want)
		}
		if n := len([]rune(got)); n > TitleMaxRunes {
			t.Errorf("CleanTitle(%q) is %d runes", c.in, n)
		}
	}
}

// TestMakeTitle: one request with no tools, max_tokens TitleMaxTokens,
// the system prompt and one user message holding the prompt and the
// answer's start (each cut); a request that fails, gives no title or
// hits the token limit is an error.
func TestMakeTitle(t *testing.T) {
	client := &scripted{resps: []*llm.Response{{Text: "Fix the parser.", FinishReason: "stop"}}}
	a := New(Config{Client: client, Tools: tools.NewRegistry(), Model: "m1"})
	got, err := a.MakeTitle(context.Background(), NewSession(session.NewStore(nil), tools.NewSession("s", t.TempDir())), "fix it "+strings.Repeat("p", 3000), "done "+strings.Repeat("a", 2000))
	if err != nil || got != "Fix the parser" {
		t.Fatalf("MakeTitle = %q, %v", got, err)
	}
	req := client.reqs[0]
	if req.Model != "m1" || len(req.Tools) != 0 || req.MaxTokens != TitleMaxTokens || len(req.Messages) != 2 || req.Messages[0].Role != "system" {
		t.Errorf("request %+v", req)
	}
	user := req.Messages[1].Content
	if !strings.HasPrefix(user, "Request:\nfix it ppp") || !strings.Contains(user, "\n\nStart of the answer:\ndone aaa") ||
		len([]rune(user)) > titlePromptRunes+titleAnswerRunes+60 {
		t.Errorf("user message (%d runes) %.80q…", len([]rune(user)), user)
	}
	for _, c := range []struct {
		client llm.Client
		want   string
	}{
		{&scripted{resps: []*llm.Response{{Reasoning: "thinking…", FinishReason: "length"}}}, "token limit"},
		{&scripted{resps: []*llm.Response{{Text: "\"\"", FinishReason: "stop"}}}, "no title"},
		{&failing{err: &llm.Error{Code: "RATE_LIMIT", Status: 429, Message: "slow down"}}, "slow down"},
	} {
		a := New(Config{Client: c.client, Tools: tools.NewRegistry()})
		if title, err := a.MakeTitle(context.Background(), NewSession(session.NewStore(nil), tools.NewSession("s", t.TempDir())), "p", ""); err == nil || !strings.Contains(err.Error(), c.want) || title != "" {
			t.Errorf("MakeTitle = %q, %v; want an error with %q", title, err, c.want)
		}
	}
}
