package bridge

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// Session titles. A session's first prompt's first line is its title
// from the start (Title). With Config.Titles, once a turn ends normally
// (not cancelled, not failed, with an answer) and no earlier turn of
// the session did, the model writes a better one (agent.MakeTitle): the
// request starts once the prompt's answer is written, runs on its own
// (a later prompt does not wait for it), and its title is logged
// (session.TitleFromModel) and sent as session_info_update. The user's
// title (session/set_title) wins: once set, the agent writes none of its
// own, and a model title that arrives after it is dropped. A session
// closed or deleted meanwhile gets nothing (its title request is
// cancelled, and nothing is written after).

// maxUserTitleRunes is the longest title session/set_title stores, in
// runes; a longer one is cut (ending in "…").
const maxUserTitleRunes = 200

// logPromptTitle logs the prompt's first line as s's title when it is
// the session's first prompt (its log holds no turn yet) and the
// session has no title (the user may have set one already). Other
// events may come first: a mode or a model chosen before the first
// prompt.
func (b *Bridge) logPromptTitle(s *liveSession, content []tools.Content) {
	t := Title(content)
	if t == "" {
		return
	}
	b.titleMu.Lock()
	defer b.titleMu.Unlock()
	for _, ev := range s.agent.Store.Events() {
		switch ev.Data.(type) {
		case session.TurnStart, session.Title:
			return
		default:
			// A mode, a model, a rule or the like chosen before the
			// first prompt: the session is still untitled.
		}
	}
	s.agent.Store.Emit(session.Title{Title: t, Source: session.TitleFromPrompt})
}

// normalTurn reports whether a turn that ended with reason counts as
// ending normally for its title: it was neither cancelled nor failed.
func normalTurn(reason string) bool {
	switch reason {
	case session.EndTurn, session.EndMaxTokens, session.EndMaxTurnReqs:
		return true
	}
	return false
}

// titleSource is what a title request is made from: the prompt and the
// answer of a session's first normal turn; ok is false when the last
// turn of events is not that turn, or the session has a title from the
// model or the user already.
func titleSource(events []session.Event) (prompt, answer string, ok bool) {
	prompt, answer, ok, _ = titleSourceFinal(events)
	return prompt, answer, ok
}

// titleSourceFinal is titleSource, and whether its no is final: a
// normal turn or a title not from the prompt is in events, so no later
// turn gets a title request either.
func titleSourceFinal(events []session.Event) (prompt, answer string, ok, final bool) {
	type turnText struct {
		prompt, answer strings.Builder
		normal         bool
	}
	var turns []*turnText
	var cur *turnText
	for _, ev := range events {
		switch d := ev.Data.(type) {
		case session.Title:
			if d.Source != session.TitleFromPrompt {
				return "", "", false, true
			}
		case session.TurnStart:
			cur = &turnText{}
			turns = append(turns, cur)
		case session.UserMessage:
			if cur != nil && !d.Local {
				// A steering message joins the turn's prompt as a
				// paragraph of its own, not glued to the line before.
				text := tools.JoinText(d.Content)
				if cur.prompt.Len() > 0 && text != "" {
					cur.prompt.WriteString("\n\n")
				}
				cur.prompt.WriteString(text)
			}
		case session.AssistantMessage:
			if cur != nil && cur.answer.Len() < 4096 {
				if cur.answer.Len() > 0 && d.Text != "" {
					cur.answer.WriteString("\n\n")
				}
				cur.answer.WriteString(d.Text)
			}
		case session.TurnEnd:
			if cur != nil {
				cur.normal = normalTurn(d.Reason) && strings.TrimSpace(cur.answer.String()) != ""
				cur = nil
			}
		default:
			// A title is made of the prompt and the answer's text; tool
			// calls, steps, modes and the rest do not go into it.
		}
	}
	for i, t := range turns {
		if t.normal && i < len(turns)-1 {
			return "", "", false, true
		}
	}
	if len(turns) == 0 || !turns[len(turns)-1].normal {
		return "", "", false, false
	}
	last := turns[len(turns)-1]
	return last.prompt.String(), last.answer.String(), true, true
}

// titleAfter starts s's title request once the answer of the prompt
// (ctx's request) is written, when the turn just ended is the one
// titleSource names.
func (b *Bridge) titleAfter(ctx context.Context, s *liveSession) {
	s.mu.Lock()
	done := s.titleDone
	s.mu.Unlock()
	if !b.cfg.Titles || done {
		return
	}
	prompt, answer, ok, final := titleSourceFinal(s.agent.Store.Events())
	if final {
		s.mu.Lock()
		s.titleDone = true // this session's events are not read again
		s.mu.Unlock()
	}
	if !ok {
		return
	}
	acp.Then(ctx, func() { b.startTitle(s, prompt, answer) })
}

// startTitle runs s's title request in a goroutine the bridge owns
// (Close cancels and waits for it; closing or deleting s cancels it).
func (b *Bridge) startTitle(s *liveSession, prompt, answer string) {
	ctx, cancel := context.WithCancel(b.ctx)
	s.mu.Lock()
	if s.titleCancel != nil {
		s.titleCancel()
	}
	s.titleCancel = cancel
	s.mu.Unlock()
	b.titles.Go(func() {
		defer cancel()
		title, err := b.cfg.Agent.MakeTitle(ctx, s.agent, prompt, answer)
		if err != nil {
			if ctx.Err() == nil {
				b.log.Warn("the model wrote no title; the first prompt's line stays the title", "session", s.id, "err", err)
			}
			return
		}
		b.titleMu.Lock()
		defer b.titleMu.Unlock()
		cur := b.session(s.id)
		switch {
		case ctx.Err() != nil, cur == nil || cur.agent.Store != s.agent.Store:
			return // closed, deleted or the bridge closing
		case session.HasUserTitle(s.agent.Store.Events()):
			b.log.Info("dropped the model's title: the user has set one", "session", s.id, "title", title)
			return
		}
		s.agent.Store.Emit(session.Title{Title: title, Source: session.TitleFromModel})
		b.flushLog(cur)
		b.log.Info("the model titled the session", "session", s.id, "title", title)
	})
}

// cancelTitle cancels s's title request, if one runs.
func (s *liveSession) cancelTitle() {
	s.mu.Lock()
	if s.titleCancel != nil {
		s.titleCancel()
	}
	s.mu.Unlock()
}

// normalizeTitle is a title as session/set_title stores it: on one line
// (blanks collapsed), at most maxUserTitleRunes runes; "" when nothing
// is left.
func normalizeTitle(t string) string {
	t = strings.Join(strings.Fields(t), " ")
	if utf8.RuneCountInString(t) > maxUserTitleRunes {
		t = string([]rune(t)[:maxUserTitleRunes-1]) + "…"
	}
	return t
}

// SetSessionTitle implements acp.SessionTitleSetter (session/set_title,
// unstable schema): the user's title is logged (session.TitleFromUser),
// before the answer, for a session open here (which also sends it as
// session_info_update) or one only logged under the state directory
// (its log is opened, appended to and closed). From then on the agent
// writes no title of its own for it. A title empty once blanks are
// collapsed is -32602; an unknown session -32002; one another process
// has open -32603 LOG_LOCKED.
func (b *Bridge) SetSessionTitle(_ context.Context, p acp.SetSessionTitleRequest) (acp.SetSessionTitleResponse, error) {
	if p.SessionID == "" {
		return acp.SetSessionTitleResponse{}, acp.InvalidParams("Invalid params: sessionId is required")
	}
	title := normalizeTitle(p.Title)
	if title == "" {
		return acp.SetSessionTitleResponse{}, acp.InvalidParams("Invalid params: title is empty")
	}
	ev := session.Title{Title: title, Source: session.TitleFromUser}
	if s := b.session(p.SessionID); s != nil {
		return b.titleLive(s, ev)
	}
	if !b.loads.claim(p.SessionID) {
		return acp.SetSessionTitleResponse{}, acp.InvalidParams("Invalid params: session %s is being opened, forked or deleted; set its title after that", p.SessionID)
	}
	defer b.loads.release(p.SessionID)
	if s := b.session(p.SessionID); s != nil { // opened meanwhile
		return b.titleLive(s, ev)
	}
	path, err := b.findLog(p.SessionID)
	if err != nil {
		return acp.SetSessionTitleResponse{}, err
	}
	ld, err := session.ReadLogLazyLocked(path, func(string) bool { return false })
	if err != nil {
		if le := lockedError(p.SessionID, err); le != nil {
			return acp.SetSessionTitleResponse{}, le
		}
		var ce *session.CorruptError
		if errors.As(err, &ce) {
			return acp.SetSessionTitleResponse{}, logError(p.SessionID, "LOG_CORRUPT", err)
		}
		return acp.SetSessionTitleResponse{}, logError(p.SessionID, "LOG_UNREADABLE", err)
	}
	log, err := ld.Open()
	if err != nil {
		return acp.SetSessionTitleResponse{}, logError(p.SessionID, "LOG_REPAIR_FAILED", err)
	}
	store := ld.NewStore(log, nil)
	store.Emit(ev)
	if err := store.Close(); err != nil {
		return acp.SetSessionTitleResponse{}, &acp.Error{Code: acp.CodeInternalError,
			Message: "Internal error: the title could not be stored: " + err.Error(), Data: map[string]any{"reason": "LOG_WRITE_FAILED"}}
	}
	b.log.Info("the user titled a logged session", "session", p.SessionID, "title", title)
	return acp.SetSessionTitleResponse{Title: title}, nil
}

// titleLive logs the user's title ev in s, open here.
func (b *Bridge) titleLive(s *liveSession, ev session.Title) (acp.SetSessionTitleResponse, error) {
	b.titleMu.Lock()
	s.agent.Store.Emit(ev)
	b.titleMu.Unlock()
	s.cancelTitle()
	if err := s.agent.Store.Flush(); err != nil {
		return acp.SetSessionTitleResponse{}, &acp.Error{Code: acp.CodeInternalError,
			Message: "Internal error: the title could not be stored: " + err.Error(), Data: map[string]any{"reason": "LOG_WRITE_FAILED"}}
	}
	b.log.Info("the user titled the session", "session", s.id, "title", ev.Title)
	return acp.SetSessionTitleResponse{Title: ev.Title}, nil
}

// findLog is the path of session id's log under the state directory;
// -32002 when it has none.
func (b *Bridge) findLog(id string) (string, error) {
	if b.cfg.StateDir == "" {
		return "", b.unknownSession(id)
	}
	path, err := session.Find(b.cfg.StateDir, id)
	if errors.Is(err, session.ErrNotFound) {
		return "", b.unknownSession(id)
	}
	if err != nil {
		return "", logError(id, "LOG_UNREADABLE", err)
	}
	return path, nil
}
