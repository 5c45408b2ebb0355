package agent

import (
	"context"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/llm"
)

// Session titles the model writes (the bridge asks for one after a
// session's first turn that ended normally).

// TitleMaxRunes is the longest title MakeTitle returns, in runes.
const TitleMaxRunes = 60

// TitleMaxTokens is the title request's max_tokens: a title of
// TitleMaxRunes is some 15 to 25 tokens; the rest is margin.
const TitleMaxTokens = 64

// What of the turn the title request carries, in runes: the prompt's
// start and the answer's start.
const (
	titlePromptRunes = 2000
	titleAnswerRunes = 1000
)

// titleSystem is the title request's system prompt.
const titleSystem = `You name coding sessions. Given the user's first request and the start of the answer, reply with a title for the session: at most 60 characters, a few plain words saying what the session is about, in the language of the request. Reply with the title alone: no quotes, no Markdown, no trailing period.`

// MakeTitle asks the model for session s's title from the user's
// prompt and the start of the answer: one short streamed request to the
// session's model with no tools, TitleMaxTokens max_tokens, the prompt
// cut at 2,000 runes and the answer at 1,000, and thinking turned off
// when the session's requests carry thinking fields (a thinking model
// would spend the few tokens on reasoning). Its cost joins the
// session's (reported with the next usage event). It returns the
// answer's first line cleaned by CleanTitle, or an error when the
// request failed or gave no usable title (a *TurnError for a model
// failure).
func (a *Agent) MakeTitle(ctx context.Context, s *Session, prompt, answer string) (string, error) {
	user := "Request:\n" + cutRunes(strings.TrimSpace(prompt), titlePromptRunes)
	if answer = strings.TrimSpace(answer); answer != "" {
		user += "\n\nStart of the answer:\n" + cutRunes(answer, titleAnswerRunes)
	}
	model := s.model(a.cfg.Model)
	req := llm.Request{
		Model:     model,
		Messages:  []llm.Message{{Role: "system", Content: titleSystem}, {Role: "user", Content: user}},
		MaxTokens: TitleMaxTokens,
	}
	if s.Settings().Thinking.Type != "" {
		req.Thinking = llm.Thinking{Type: llm.ThinkingDisabled}
	}
	resp, err := a.cfg.Client.Stream(ctx, req, nil)
	if err != nil {
		return "", modelError(err, "")
	}
	if resp.Usage != nil {
		s.addCost(a.cfg.Meter, model, *resp.Usage, a.cfg.Now())
	}
	title := CleanTitle(resp.Text)
	if title == "" {
		if resp.FinishReason == "length" {
			return "", errors.New("the title request hit its token limit before any title (a thinking model may spend it on reasoning)")
		}
		return "", errors.New("the model answered the title request with no title")
	}
	return title, nil
}

// CleanTitle makes a title of a model's answer: its first non-empty
// line, without a "Title:" label, Markdown marks (leading #, > or -,
// every * and `; an underscore stays, names have them), enclosing
// quotes or a trailing period, spaces collapsed, cut at TitleMaxRunes
// runes (at a word boundary when one is near, ending in "…"). It returns
// "" when nothing is left.
func CleanTitle(s string) string {
	line := ""
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			line = l
			break
		}
	}
	line = strings.TrimLeft(line, "#>*-` \t")
	if k, rest, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "title") {
		line = rest
	}
	line = strings.Map(func(r rune) rune {
		switch {
		case r == '*' || r == '`':
			return -1
		case unicode.IsSpace(r) || unicode.IsControl(r):
			return ' '
		}
		return r
	}, line)
	line = strings.Join(strings.Fields(line), " ")
	for range 2 {
		line = strings.TrimSpace(line)
		for _, q := range [][2]string{{`"`, `"`}, {"'", "'"}, {"“", "”"}, {"«", "»"}, {"„", "“"}} {
			if len(line) >= len(q[0])+len(q[1]) && strings.HasPrefix(line, q[0]) && strings.HasSuffix(line, q[1]) {
				line = line[len(q[0]) : len(line)-len(q[1])]
			}
		}
		line = strings.TrimRight(line, ".。 ")
	}
	if utf8.RuneCountInString(line) <= TitleMaxRunes {
		return line
	}
	r := []rune(line)[:TitleMaxRunes-1]
	if i := lastSpace(r); i >= TitleMaxRunes*2/3 {
		r = r[:i]
	}
	return strings.TrimRight(string(r), " ,;:-") + "…"
}

func lastSpace(r []rune) int {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] == ' ' {
			return i
		}
	}
	return -1
}

// cutRunes returns s cut at n runes, with "…" when cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
